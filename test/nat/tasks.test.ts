// Tasks behind NAT, end to end with the real executables (issue #16): the
// manager, the test web and two public volunteers (relays and observers,
// paused by their owners so that they take no task) on the public segment, the
// crawlers behind two cone home routers (no --lan: the NAT stack runs). The
// two NATed volunteers meet — each looks up the crawlers near its coordinate
// and dials them, over a relay — and punch a direct TCP connection. The
// manager's signed task reaches a NATed volunteer over the connection the
// volunteer dialled itself; it is crawled on the test web and uploaded. SIGTERM
// makes the holder migrate a running task, and it completes at the other one.
// A public volunteer that relays for the remaining one is then killed: the
// volunteer reserves on another relay and keeps taking tasks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { namespaceSupport } from '../../testbed/nat/netns.js';
import { waitForLine } from '../../testbed/nat/lines.js';
import { waitFor } from '../../testbed/net/harness.js';
import { JoinNet } from '../../testbed/nat/volunteers.js';
import type { ProcessHandle } from '../../testbed/processes.js';
import { controlRequest } from '../../src/node/control.js';

const unsupported = namespaceSupport();
if (unsupported !== null) console.warn(`test/nat/tasks skipped: ${unsupported}`);

interface TaskView {
  id: string;
  channel: string;
  holder?: string;
  state: string;
}
interface ChannelView {
  history: { taskId: string; crawler?: string; finishedAt: number; pagesFetched: number }[];
}

describe.skipIf(unsupported !== null)('tasks reach volunteers behind NAT', () => {
  let jn: JoinNet;
  let web: ProcessHandle;
  let origins: Record<string, string>;
  /** The NATed volunteer still running after the SIGTERM test. */
  let survivor = 'nat1';
  const NATTED = ['nat1', 'nat2'];

  const explained = <T>(fn: () => Promise<T>): Promise<T> => jn.explained(fn);
  const addChannel = async (spec: Record<string, unknown>): Promise<string> => {
    const r = await jn.api<{ id: string }>('/api/channels', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(spec) });
    expect(r.status).toBe(201);
    return r.body.id;
  };
  const channel = async (id: string) => (await jn.api<ChannelView>(`/api/channels/${id}`)).body;

  beforeAll(async () => {
    jn = await JoinNet.start(
      { public: ['manager', 'web', 'pub1', 'pub2'], routers: NATTED.map((h, i) => ({ name: `home${i + 1}`, nat: 'cone' as const, hosts: [h] })) },
      { publicVolunteers: ['pub1', 'pub2'], volunteerArgs: ['--coord-interval', '300', '--shutdown-timeout', '60000'] },
    );
    for (const h of ['pub1', 'pub2']) await controlRequest(jn.dataDir(h), { cmd: 'pause' });
    const ip = jn.net.host('web').ip;
    web = jn.net.spawnIn('web', 'testbed/nat/web.ts', [JSON.stringify({ sites: [{ name: 'quick', pages: 6, bindHost: ip }, { name: 'slow', pages: 12, bindHost: ip }, { name: 'after', pages: 3, bindHost: ip }], seed: 5 })]);
    origins = (JSON.parse((await waitForLine(web, /^\{"origins"/, 60_000)).input) as { origins: Record<string, string> }).origins;
    // Each NATed volunteer holds a reservation on the manager (its only relay) and knows its NAT from the manager's view.
    await explained(async () => {
      for (const h of NATTED) await waitForLine(jn.volunteers.get(h)!, /"reachability":"relayed"/, 150_000);
    });
    await explained(() => waitFor(async () => (await jn.api<{ online: number }>('/api/crawlers')).body.online === 4, 120_000, 'the manager to see the four crawlers'));
  }, 360_000);

  afterAll(async () => {
    await jn?.stop();
  }, 60_000);

  it("the manager's signed task reaches a NATed volunteer, which crawls the test web and uploads", async () => {
    const id = await addChannel({ url: `${origins.quick}/`, depth: 2, delayMs: 0, group: 0 });
    await explained(() => waitFor(async () => (await channel(id)).history.length >= 1, 150_000, 'the quick channel to be crawled'));
    const h = (await channel(id)).history[0]!;
    expect(NATTED.map((n) => jn.volunteers.get(n)!.peerId)).toContain(h.crawler);
    expect(h.pagesFetched).toBeGreaterThan(0);
  }, 200_000);

  it('the two NATed volunteers meet over a relay and punch a direct connection', async () => {
    const [a, b] = NATTED.map((h) => jn.volunteers.get(h)!);
    await explained(() => waitForLine(a!, new RegExp(`"peer":"${b!.peerId}".*"hole punched|hole punched.*"peer":"${b!.peerId}"`), 180_000));
    // The other side's line too: a failure prints both volunteers' output (a side that never ends its punch is silent).
    await explained(() => waitForLine(b!, new RegExp(`"peer":"${a!.peerId}".*"hole punched|hole punched.*"peer":"${a!.peerId}"`), 30_000));
    // The direct connection goes between the two routers' public addresses.
    const punched = jn.natLines('nat1').find((l) => l.msg?.startsWith('hole punched') === true);
    expect(punched?.remote).toMatch(new RegExp(`^${jn.net.publicIpOf('nat2').replaceAll('.', '\\.')}:\\d+$`));
  }, 200_000);

  it('SIGTERM hands a running task on and it completes at the other NATed volunteer', async () => {
    // 12 pages 1.5 s apart: the crawl lasts long enough to stop its crawler in the middle.
    const id = await addChannel({ url: `${origins.slow}/`, depth: 2, delayMs: 1500, group: 0 });
    let task: TaskView | undefined;
    await explained(() =>
      waitFor(
        async () => {
          task = (await jn.api<{ tasks: TaskView[] }>('/api/tasks?state=running')).body.tasks.find((t) => t.channel === id && t.holder !== undefined);
          return task !== undefined;
        },
        150_000,
        'a task of the slow channel running on a NATed volunteer',
        50,
      ),
    );
    const [from, to] = jn.volunteers.get('nat1')!.peerId === task!.holder ? ['nat1', 'nat2'] : ['nat2', 'nat1'];
    expect(jn.volunteers.get(from)!.peerId).toBe(task!.holder);
    const holder = jn.volunteers.get(from)!;
    const stoppedAt = Date.now();
    await holder.kill('SIGTERM');
    await explained(async () => expect(holder.output(200)).toMatch(new RegExp(`"task":"${task!.id}".*"task migrated"|task migrated.*${task!.id}`)));
    await explained(() => waitFor(async () => (await channel(id)).history.some((x) => x.finishedAt > stoppedAt), 150_000, 'the migrated task to complete'));
    const done = (await channel(id)).history.find((x) => x.finishedAt > stoppedAt)!;
    expect(done.crawler).toBe(jn.volunteers.get(to)!.peerId);
    survivor = to;
  }, 300_000);

  it('a public relay that disappears is replaced, and the NATed volunteer keeps taking tasks', async () => {
    const v = jn.volunteers.get(survivor)!;
    const relaysNow = () => jn.natLines(survivor).findLast((l) => l.reachability !== undefined)?.relays ?? [];
    const pubs = new Map(['pub1', 'pub2'].map((h) => [jn.volunteers.get(h)!.peerId, h]));
    // Wait until it holds two reservations, one on a public volunteer.
    await explained(() => waitFor(() => relaysNow().length === 2 && relaysNow().some((r) => pubs.has(r)), 120_000, `${survivor} to hold two reservations, one on a public volunteer`));
    const lost = relaysNow().find((r) => pubs.has(r))!;
    await jn.volunteers.get(pubs.get(lost)!)!.kill('SIGKILL');
    await explained(() => waitFor(() => relaysNow().length === 2 && !relaysNow().includes(lost), 150_000, `${survivor} to replace the killed relay`));
    expect(v.running).toBe(true);
    const id = await addChannel({ url: `${origins.after}/`, depth: 1, delayMs: 0, group: 0 });
    await explained(() => waitFor(async () => (await channel(id)).history.length >= 1, 150_000, 'a channel added after the relay loss to be crawled'));
    expect((await channel(id)).history[0]!.crawler).toBe(v.peerId);
  }, 330_000);
});
