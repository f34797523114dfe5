// Pull when pushes fail (issue #16, item 2): a volunteer behind a cone NAT
// holds a relay reservation (on the manager), so the manager pushes it its
// orders — but every push fails (injected: the volunteer resets pushed task
// streams, testbed/nat/refuse-pushes.ts, as a relay that drops the circuit
// would). The manager records the failed push and, in its reply to the
// volunteer's next state report (NATed volunteers re-report every
// --report-every ms), tells it to pull; the volunteer pulls, the manager lists
// it as `pull`, and the channel is crawled by the pull. Without the advice the
// volunteer would hold its reservation and never get a task.
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { namespaceSupport } from '../../testbed/nat/netns.js';
import { waitForLine } from '../../testbed/nat/lines.js';
import { waitFor } from '../../testbed/net/harness.js';
import { JoinNet } from '../../testbed/nat/volunteers.js';
import type { ProcessHandle } from '../../testbed/processes.js';

const unsupported = namespaceSupport();
if (unsupported !== null) console.warn(`test/nat/push-fail skipped: ${unsupported}`);

/** The plugin as the volunteer process loads it: compiled (bin/ runs the build). */
const PLUGIN = resolve(import.meta.dirname, '../../dist/testbed/nat/refuse-pushes.js');

interface ChannelView {
  history: { taskId: string; crawler?: string; pagesFetched: number }[];
}
interface CrawlersView {
  crawlers: { id: string; reachability: string | null }[];
}

describe.skipIf(unsupported !== null)('a NATed volunteer whose pushes fail is told to pull', () => {
  let jn: JoinNet;
  let web: ProcessHandle;
  let origins: Record<string, string>;
  const addChannel = async (url: string): Promise<string> => {
    const r = await jn.api<{ id: string }>('/api/channels', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url, depth: 1, delayMs: 0, group: 0 }) });
    expect(r.status).toBe(201);
    return r.body.id;
  };

  const explained = <T>(fn: () => Promise<T>): Promise<T> => jn.explained(fn);

  beforeAll(async () => {
    jn = await JoinNet.start(
      { public: ['manager', 'web'], routers: [{ name: 'home1', nat: 'cone', hosts: ['nat1'] }] },
      { publicVolunteers: [], volunteerArgs: ['--coord-interval', '300'], hostArgs: { nat1: ['--report-every', '2000'] }, hostEnv: { nat1: { VOLCRAWL_TEST_PLUGIN: PLUGIN } } },
    );
    const ip = jn.net.host('web').ip;
    web = jn.net.spawnIn('web', 'testbed/nat/web.ts', [JSON.stringify({ sites: ['pushed', 'pulled'].map((name) => ({ name, pages: 3, bindHost: ip })), seed: 8 })]);
    origins = (JSON.parse((await waitForLine(web, /^\{"origins"/, 60_000)).input) as { origins: Record<string, string> }).origins;
  }, 240_000);

  afterAll(async () => {
    await jn?.stop();
  }, 60_000);

  it('holds a reservation, its push fails, the manager tells it to pull, and its channel is crawled by the pull', async () => {
    const v = jn.volunteers.get('nat1')!;
    // Reachable through its relay (a reservation on the manager), pushed to, not pulling.
    await explained(() => waitFor(async () => ['relayed', 'punched'].includes(String((await jn.status('nat1'))?.network?.reach)), 150_000, 'nat1 to hold a relay reservation'));
    await explained(() => waitFor(async () => (await jn.api<CrawlersView>('/api/crawlers')).body.crawlers.some((c) => c.id === v.peerId), 120_000, 'the manager to know nat1 as a crawler'));
    expect((await jn.status('nat1'))?.network?.nat?.pull).toBe(false);

    // Its first order is pushed, and the push fails (its channel is due again only after the retry delay).
    await addChannel(`${origins.pushed!}/`);
    // The push fails; the reply to its next state report tells it to pull.
    await explained(() => waitForLine(v, /the manager's pushes to this node fail: pulling tasks/, 120_000));
    const s = await jn.status('nat1');
    expect(s?.network?.nat?.relays).toBeGreaterThan(0); // it still holds its reservation
    expect(s?.network?.reach).toBe('pull');
    await explained(() =>
      waitFor(async () => (await jn.api<CrawlersView>('/api/crawlers')).body.crawlers.some((c) => c.id === v.peerId && c.reachability === 'pull'), 120_000, 'the manager to list nat1 as pull'),
    );
    // A channel added now waits for its pull, and is crawled by it.
    const pulled = await addChannel(`${origins.pulled!}/`);
    await explained(() => waitFor(async () => (await jn.api<ChannelView>(`/api/channels/${pulled}`)).body.history.some((h) => h.crawler === v.peerId), 180_000, 'the channel to be crawled by nat1'));
    expect((await jn.status('nat1'))?.network?.tasksPulled).toBeGreaterThan(0);
  }, 420_000);
});
