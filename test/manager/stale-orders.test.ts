// Orders whose time ran out while they waited for a routing slot are not sent
// (src/manager/network.ts staleOrder). On loopback: the manager as `serve`
// starts it (real LevelDB, real libp2p) and one real volunteer running
// src/crawler's TaskManager; orders are handed to the manager's dispatchers
// directly. A manager that routed them anyway would have the volunteer reject
// them ("order expired"), which its counters show.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskManager } from '../../src/crawler/manager.js';
import { buildTask, taskId } from '../../src/manager/domain/task-builder.js';
import type { Channel } from '../../src/manager/domain/channel.js';
import { DEFAULT_MIN_LIFE_LEFT, staleOrder } from '../../src/manager/network.js';
import type { IssuedTask } from '../../src/manager/services/tasks.js';
import { waitFor } from '../../testbed/net/harness.js';
import { LoopbackNetwork } from './network-fixture.js';

describe('staleOrder', () => {
  it('lets an order through while at least the given share of its time is left', () => {
    // queued at 0 with a deadline at 10 000: a quarter is 2 500 ms.
    expect(staleOrder(10_000, 0, 0, 0.25)).toBeNull();
    expect(staleOrder(10_000, 0, 7_500, 0.25)).toBeNull();
    expect(staleOrder(10_000, 0, 7_501, 0.25)).toMatch(/2499 ms of its 10000 ms left after 7501 ms/);
    expect(staleOrder(10_000, 0, 10_000, 0)).not.toBeNull(); // at the deadline: expired whatever the share
    expect(staleOrder(10_000, 0, 12_000, 0.25)).toMatch(/^order not sent: 0 ms of its 10000 ms left/);
    // Already past its deadline when it was queued.
    expect(staleOrder(10_000, 11_000, 11_000, 0.25)).toMatch(/^order not sent: 0 ms of its 0 ms left after 0 ms/);
    expect(DEFAULT_MIN_LIFE_LEFT).toBe(0.25);
  });
});

describe('the manager does not route orders whose time ran out', () => {
  let net: LoopbackNetwork;
  let seq = 0;

  beforeAll(async () => {
    net = await LoopbackNetwork.start({
      dirPrefix: 'volcrawl-stale-',
      sites: [{ name: 'news', pages: 3, fanout: 2, changesPerDay: 1 }],
      webSeed: 13,
      warc: false,
      manager: {},
      volunteerSeed: 1300,
    });
    await net.addVolunteer(0, (sink) => new TaskManager({ threads: 2, queue: 2, allowPrivate: true, sink }));
    await waitFor(() => net.mgr.node.crawlers().length === 1, 60_000, 'the manager to know the volunteer as a crawler');
  }, 120_000);

  afterAll(async () => {
    await net?.close();
  }, 60_000);

  /** An order for the test site that is not among the manager's channels (it issues nothing of its own). */
  function issued(deadline: number): IssuedTask {
    const origin = new URL(net.web.site('news').url('/')).origin;
    const now = Date.now();
    const ch: Channel = {
      id: 'stale',
      kind: 'host',
      origin,
      host: new URL(origin).hostname,
      pathPrefixes: ['/'],
      seeds: [`${origin}/`],
      filters: [],
      depth: 1,
      expectedPages: 3,
      maxPages: 3,
      delayMs: 0,
      group: 0,
      pinnedGroup: false,
      changeRate: null,
      changeInterval: 60,
      createdAt: now,
      updatedAt: now,
    };
    return { task: buildTask(ch, taskId(ch.id, now, seq++), deadline, [], [], []), channel: ch };
  }

  it('an expired order reaches no volunteer, by routing or by a chosen push; a live one is accepted', async () => {
    const node = net.mgr.node;
    const vol = net.volunteers[0]!;
    const before = vol.status();
    const staleBefore = node.routed.stale;

    const routed = await node.dispatch(issued(Date.now() - 1000));
    expect(routed.status).toBe('no-crawler');
    expect(routed.reason).toMatch(/^order not sent: 0 ms/);
    const pushed = await node.dispatchTo(issued(Date.now() - 1000), vol.peerId, { forward: false });
    expect(pushed.status).toBe('no-crawler');
    expect(pushed.reason).toMatch(/^order not sent/);
    expect(node.routed.stale).toBe(staleBefore + 2);

    // The control: the same path with time left does reach the volunteer, which takes it.
    const live = await node.dispatchTo(issued(Date.now() + 60_000), vol.peerId, { forward: false });
    expect(live.status).toBe('accepted');
    const after = vol.status();
    expect(after.accepted).toBe(before.accepted + 1);
    // Neither expired order was pushed: a manager that sent them would see them rejected as expired here.
    expect(after.rejected).toBe(before.rejected);
  }, 60_000);
});
