// The pull fallback end to end with the real executables (issue #16, item 2's
// last resort; src/dht/task-pull.ts): a volunteer behind a cone NAT that holds
// no relay reservation (`--relay-reservations 0`) cannot be dialled by anyone.
// It knows it, says so, and pulls its tasks from the manager over the
// connection it dialled itself; the manager shows it as `pull` in
// /api/crawlers and /metrics, pushes nothing to it (the only crawler: the order
// waits for its pull), and the task it pulled is crawled on the test web and
// uploaded.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { namespaceSupport } from '../../testbed/nat/netns.js';
import { waitForLine } from '../../testbed/nat/lines.js';
import { waitFor } from '../../testbed/net/harness.js';
import { JoinNet } from '../../testbed/nat/volunteers.js';
import type { ProcessHandle } from '../../testbed/processes.js';

const unsupported = namespaceSupport();
if (unsupported !== null) console.warn(`test/nat/pull skipped: ${unsupported}`);

interface ChannelView {
  history: { taskId: string; crawler?: string; pagesFetched: number }[];
}
interface CrawlersView {
  crawlers: { id: string; reachability: string | null }[];
}

describe.skipIf(unsupported !== null)('a volunteer nobody can dial pulls its tasks', () => {
  let jn: JoinNet;
  let web: ProcessHandle;
  let origin: string;

  const explained = <T>(fn: () => Promise<T>): Promise<T> => jn.explained(fn);

  beforeAll(async () => {
    jn = await JoinNet.start(
      { public: ['manager', 'web'], routers: [{ name: 'home1', nat: 'cone', hosts: ['nat1'] }] },
      { publicVolunteers: [], volunteerArgs: ['--coord-interval', '300'], hostArgs: { nat1: ['--relay-reservations', '0'] } },
    );
    const ip = jn.net.host('web').ip;
    web = jn.net.spawnIn('web', 'testbed/nat/web.ts', [JSON.stringify({ sites: [{ name: 'pulled', pages: 4, bindHost: ip }], seed: 7 })]);
    origin = (JSON.parse((await waitForLine(web, /^\{"origins"/, 60_000)).input) as { origins: Record<string, string> }).origins.pulled!;
  }, 240_000);

  afterAll(async () => {
    await jn?.stop();
  }, 60_000);

  it('it says it pulls, the manager lists it as pull, and the task it pulled is crawled and uploaded', async () => {
    const v = jn.volunteers.get('nat1')!;
    await explained(() => waitForLine(v, /pulling tasks from the manager/, 120_000));
    await explained(() =>
      waitFor(async () => (await jn.api<CrawlersView>('/api/crawlers')).body.crawlers.some((c) => c.id === v.peerId && c.reachability === 'pull'), 120_000, 'the manager to list nat1 as pull'),
    );
    const metrics = await jn.apiText('/metrics');
    expect(metrics).toMatch(/^volcrawl_volunteers_reachability\{reach="pull"\} 1$/m);

    const r = await jn.api<{ id: string }>('/api/channels', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: `${origin}/`, depth: 1, delayMs: 0, group: 0 }) });
    expect(r.status).toBe(201);
    await explained(() => waitFor(async () => (await jn.api<ChannelView>(`/api/channels/${r.body.id}`)).body.history.length >= 1, 150_000, 'the channel to be crawled'));
    const h = (await jn.api<ChannelView>(`/api/channels/${r.body.id}`)).body.history[0]!;
    expect(h.crawler).toBe(v.peerId);
    expect(h.pagesFetched).toBeGreaterThan(0);
    // It came by a pull (the receiver accepted it), never by a push.
    const pulled = await explained(() => waitForLine(v, /"accepted":[1-9].*pulled tasks from the manager|pulled tasks from the manager.*"accepted":[1-9]/, 10_000));
    expect(pulled.input).toContain('"results":["accepted"');
    // Nobody can dial it: no relay address, never a reservation.
    expect(jn.natOf('nat1').relays).toBe(0);
  }, 300_000);
});
