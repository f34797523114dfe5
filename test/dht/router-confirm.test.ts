// Before a route commits, the Router confirms its top candidates' current
// coordinates (router.ts confirm, #18): its copies lag the crawlers' own, and
// at 100 nodes a quarter of the routes went elsewhere than the best crawler
// because a copy put another one nearer. Real libp2p nodes on loopback: each
// crawler answers info queries with its own (current) coordinate and takes
// orders; the manager's copies are planted stale. The cell search is stubbed
// (the crawlers are its answer) so the test is about the ranking only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPair } from '@libp2p/crypto/keys';
import type { PrivateKey } from '@libp2p/interface';
import type { VolcrawlLibp2p } from '../../src/dht/libp2p.js';
import { loopbackLibp2p } from '../../testbed/net/loopback.js';
import { COORD_PROTOCOL, CoordService } from '../../src/dht/coord-protocol.js';
import { PeerTable } from '../../src/dht/peers.js';
import { Router } from '../../src/dht/router.js';
import { TaskReceiver } from '../../src/dht/task-protocol.js';
import { signedTestOrder, type SignedOrder } from './task-order.js';
import { answerComplete } from '../../src/dht/cell-search.js';
import { jsonChannel } from '../../src/dht/wire.js';
import { parseTask, type Task } from '../../src/crawler/task.js';
import { VivaldiNode, type Coordinate } from '../../src/coords/index.js';
import { createRng } from '../../src/rng.js';

const at = (x: number): Coordinate => ({ vec: Float64Array.from([x, 0]), height: 0, error: 0.1 });
const load = { running: 0, queued: 0, free: 4 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function waitUntil(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await sleep(50);
  expect(cond()).toBe(true);
}

interface Crawler {
  node: VolcrawlLibp2p;
  id: string;
  coords: CoordService;
  /** Whom this crawler heard from over the coordinate protocol (an info query notes the asker). */
  peers: PeerTable;
  taken: Task[];
}

describe('Router: confirming the top candidates before committing', () => {
  let manager: VolcrawlLibp2p;
  let managerKey: PrivateKey;
  const crawlers: Crawler[] = [];
  // Current coordinates: crawler 0 nearest the host at 0, crawler 1 moved far away.
  const current = [5, 200, 100, 110, 120, 130];

  beforeAll(async () => {
    managerKey = await generateKeyPair('Ed25519');
    manager = await loopbackLibp2p({ privateKey: managerKey });
    for (const [i, x] of current.entries()) {
      const node = await loopbackLibp2p();
      const vivaldi = new VivaldiNode({ dimensions: 2 }, createRng(10 + i));
      vivaldi.coord.vec.set([x, 0]);
      vivaldi.coord.height = 0;
      const peers = new PeerTable();
      // An hour between probing rounds: the coordinate stays where the test put it.
      const coords = new CoordService({ libp2p: node, peers, vivaldi, crawler: true, rng: createRng(20 + i), load: () => load, intervalMs: 3_600_000, lag: false });
      await coords.start();
      const taken: Task[] = [];
      await new TaskReceiver<Task>({ libp2p: node, manager: manager.peerId.toString(), parseTask, runner: { submit: (t) => (taken.push(t), 'accepted'), load: () => load }, peers }).start();
      await manager.dial(node.getMultiaddrs()[0]!);
      crawlers.push({ node, id: node.peerId.toString(), coords, peers, taken });
    }
  }, 60_000);

  afterAll(async () => {
    for (const c of crawlers) await c.coords.stop();
    await Promise.all([manager?.stop(), ...crawlers.map((c) => c.node.stop())]);
  });

  /** A manager-side router whose copies are the given x positions, learned 20 s ago. */
  async function routerWith(copies: number[], opts: { confirmTop: number; confirmWaitMs?: number }): Promise<{ router: Router; peers: PeerTable }> {
    const peers = new PeerTable();
    for (const [i, x] of copies.entries()) peers.note(crawlers[i]!.id, { coord: at(x), load, crawler: true });
    const coords = new CoordService({ libp2p: manager, peers, crawler: false, rng: createRng(1), lag: false });
    const router = new Router({ libp2p: manager as never, peers, coords, confirmTop: opts.confirmTop, confirmFreshMs: 10_000, confirmWaitMs: opts.confirmWaitMs ?? 5_000 });
    const ids = crawlers.slice(0, copies.length).map((c) => c.id);
    router.cellLookup.providers = () => Promise.resolve({ ids, complete: answerComplete(ids.length, true, router.search) });
    router.cellLookup.cached = () => true;
    // Learned 20 s ago: older than confirmFreshMs, younger than staleMs (the router before ranked on them).
    for (const p of peers.all()) p.coordAt = performance.now() - 20_000;
    return { router, peers };
  }

  let seq = 0;
  const order = (): Promise<SignedOrder> => signedTestOrder(manager, managerKey, `confirm-${++seq}`, { vec: [0, 0], height: 0 });

  const askedBy = (mgr: string) => crawlers.filter((c) => c.peers.get(mgr) !== undefined).map((c) => crawlers.indexOf(c));

  it('asks the top candidates for their current coordinate and sends the order to the nearest by it; asks at most 2 × confirmTop', async () => {
    // The copies: crawler 1 (moved away since) looks nearest, crawler 0 second.
    const { router, peers } = await routerWith([20, 1, 100, 110, 120, 130], { confirmTop: 2 });
    const o = await order();
    const r = await router.route(o.envelope, o.order);
    expect(r.status).toBe('accepted');
    expect(r.chosen).toBe(crawlers[0]!.id);
    expect(crawlers[0]!.taken.map((t) => t.id)).toEqual([o.order.id]);
    expect(peers.get(crawlers[1]!.id)!.coord!.vec[0]).toBe(200);
    // Round 1 asked the top two by the copies (1, 0); round 2 the newcomer to the top two (2). Nobody else.
    expect(askedBy(manager.peerId.toString())).toEqual([0, 1, 2]);
    expect(r.confirmQueries).toBe(3);
    expect(r.confirmQueries!).toBeLessThanOrEqual(2 * 2);
    // The copies are current now: the next route asks nobody.
    const o2 = await order();
    const r2 = await router.route(o2.envelope, o2.order);
    expect(r2.chosen).toBe(crawlers[0]!.id);
    expect(r2.confirmQueries).toBe(0);
    expect(router.confirmQueries).toBe(3);
  }, 30_000);

  it('with confirmTop 0 ranks on the copies as they are (the behaviour before)', async () => {
    const { router } = await routerWith([20, 1, 100], { confirmTop: 0 });
    const o = await order();
    const r = await router.route(o.envelope, o.order);
    expect(r.chosen).toBe(crawlers[1]!.id);
    expect(r.confirmQueries).toBe(0);
  }, 30_000);

  it('waits at most confirmWaitMs: a slow answer does not hold the route, and updates the copy for the next one', async () => {
    // A crawler whose coordinate service answers info queries only after 1.5 s.
    const slow = await loopbackLibp2p();
    const slowTaken: Task[] = [];
    try {
      await slow.handle(COORD_PROTOCOL, async (stream) => {
        const ch = jsonChannel(stream, 4096, 10_000);
        await ch.read();
        await sleep(1_500);
        await ch.write({ coord: { vec: [400, 0], height: 0, error: 0.1 }, load, crawler: true });
        await ch.close();
      });
      await new TaskReceiver<Task>({ libp2p: slow, manager: manager.peerId.toString(), parseTask, runner: { submit: (t) => (slowTaken.push(t), 'accepted'), load: () => load }, peers: new PeerTable() }).start();
      await manager.dial(slow.getMultiaddrs()[0]!);
      const peers = new PeerTable();
      const slowId = slow.peerId.toString();
      peers.note(slowId, { coord: at(2), load, crawler: true });
      peers.note(crawlers[2]!.id, { coord: at(100), load, crawler: true });
      const coords = new CoordService({ libp2p: manager, peers, crawler: false, rng: createRng(1), lag: false });
      const router = new Router({ libp2p: manager as never, peers, coords, confirmTop: 2, confirmFreshMs: 10_000, confirmWaitMs: 100 });
      router.cellLookup.providers = () => Promise.resolve({ ids: [slowId, crawlers[2]!.id], complete: true });
      router.cellLookup.cached = () => true;
      for (const p of peers.all()) p.coordAt = performance.now() - 20_000;
      const o = await order();
      const r = await router.route(o.envelope, o.order);
      // The slow one had not answered by the deadline: the route went on with its copy (nearest).
      expect(r.chosen).toBe(slowId);
      expect(slowTaken).toHaveLength(1);
      expect(peers.get(slowId)!.coord!.vec[0]).toBe(2);
      // Its answer lands later and the next route ranks on it.
      await waitUntil(() => peers.get(slowId)!.coord!.vec[0] === 400);
      const o2 = await order();
      expect((await router.route(o2.envelope, o2.order)).chosen).toBe(crawlers[2]!.id);
    } finally {
      await slow.stop();
    }
  }, 30_000);

  it('a top candidate that cannot be reached when asked is marked down and not chosen', async () => {
    const { router, peers } = await routerWith([20, 1, 100], { confirmTop: 2 });
    // Crawler 0 (the nearest by both copy and current coordinate) goes away without a goodbye.
    const gone = crawlers[0]!;
    await gone.coords.stop();
    await gone.node.stop();
    const o = await order();
    const r = await router.route(o.envelope, o.order);
    expect(r.status).toBe('accepted');
    expect(peers.get(gone.id)!.down).toBe(true);
    expect(r.chosen).toBe(crawlers[2]!.id);
  }, 30_000);
});
