// The Router's widening for room (placement.ts `widen`, router.ts route):
// real libp2p nodes on loopback. Two crawlers near the host are full (they
// answer 'full' and know nobody to forward to); a third with room sits outside
// the host's finest searched block but inside the next coarser one. The cell
// answers are stubbed from the crawlers' announced cells (the search itself is
// test/dht/placement-widen.test.ts's subject).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPair } from '@libp2p/crypto/keys';
import type { PrivateKey } from '@libp2p/interface';
import type { VolcrawlLibp2p } from '../../src/dht/libp2p.js';
import { loopbackLibp2p } from '../../testbed/net/loopback.js';
import { CoordService } from '../../src/dht/coord-protocol.js';
import { PeerTable } from '../../src/dht/peers.js';
import { Router } from '../../src/dht/router.js';
import { TaskReceiver } from '../../src/dht/task-protocol.js';
import { signedTestOrder, type SignedOrder } from './task-order.js';
import { answerComplete } from '../../src/dht/cell-search.js';
import { announceCells, type Cell } from '../../src/dht/cells.js';
import { parseTask, type Task } from '../../src/crawler/task.js';
import { VivaldiNode } from '../../src/coords/index.js';
import { at, FULL_PAIR, HOST, full, idle } from './hot-spot-world.js';
import { createRng } from '../../src/rng.js';

// The full pair share every cell up to level 8, the crawler with room at (40, 8) shares
// their level-6 cell only (38 ms from the host, within 4× 16 ms).
const SPOTS: [number, number][] = [...FULL_PAIR, [40, 8]];

interface Crawler {
  node: VolcrawlLibp2p;
  id: string;
  coords: CoordService;
  taken: Task[];
}

describe('Router: widening the search for room', () => {
  let manager: VolcrawlLibp2p;
  let managerKey: PrivateKey;
  const crawlers: Crawler[] = [];

  beforeAll(async () => {
    managerKey = await generateKeyPair('Ed25519');
    manager = await loopbackLibp2p({ privateKey: managerKey });
    for (const [i, xy] of SPOTS.entries()) {
      const node = await loopbackLibp2p();
      const vivaldi = new VivaldiNode({ dimensions: 2 }, createRng(10 + i));
      vivaldi.coord.vec.set(xy);
      vivaldi.coord.height = 3;
      const peers = new PeerTable();
      const load = i < 2 ? full : idle;
      const coords = new CoordService({ libp2p: node, peers, vivaldi, crawler: true, rng: createRng(20 + i), load: () => load, intervalMs: 3_600_000, lag: false });
      await coords.start();
      const taken: Task[] = [];
      const runner = { submit: (t: Task) => (i < 2 ? 'full' : (taken.push(t), 'accepted')) as 'accepted' | 'full', load: () => load };
      await new TaskReceiver<Task>({ libp2p: node, manager: manager.peerId.toString(), parseTask, runner, peers }).start();
      await manager.dial(node.getMultiaddrs()[0]!);
      crawlers.push({ node, id: node.peerId.toString(), coords, taken });
    }
  }, 60_000);

  afterAll(async () => {
    for (const c of crawlers) await c.coords.stop();
    await Promise.all([manager?.stop(), ...crawlers.map((c) => c.node.stop())]);
  });

  function router(widen: boolean): Router {
    const peers = new PeerTable();
    const records = new Map<string, string[]>();
    for (const [i, c] of crawlers.entries()) {
      peers.note(c.id, { coord: at(...SPOTS[i]!), load: i < 2 ? full : idle, crawler: true });
      for (const cell of announceCells(at(...SPOTS[i]!))) records.set(cell.name, [...(records.get(cell.name) ?? []), c.id]);
    }
    const coords = new CoordService({ libp2p: manager, peers, crawler: false, rng: createRng(1), lag: false });
    // A cell of 2 is dense here (so the search goes to the finest level), and 1 candidate is enough (no widening for count).
    const r = new Router({ libp2p: manager as never, peers, coords, denseCell: 2, minCandidates: 1, placement: { widen } });
    r.cellLookup.providers = (cell: Cell) => {
      const ids = records.get(cell.name) ?? [];
      return Promise.resolve({ ids, complete: answerComplete(ids.length, true, r.search) });
    };
    r.cellLookup.cached = () => true;
    return r;
  }

  let seq = 0;
  const order = (): Promise<SignedOrder> => signedTestOrder(manager, managerKey, `widen-${++seq}`, { vec: [...HOST], height: 3 });

  it('off (the default): only the full pair are candidates, both refuse', async () => {
    const o = await order();
    const r = await router(false).route(o.envelope, o.order);
    expect(r.status).toBe('full');
    expect(r.candidates).toBe(2);
    expect(r.widened).toBeUndefined();
    expect(crawlers[2]!.taken).toEqual([]);
  }, 30_000);

  it('on: no room near, so the coarser level joins; the crawler with room takes the task, no cell fetched', async () => {
    const o = await order();
    const r = await router(true).route(o.envelope, o.order);
    expect(r.status).toBe('accepted');
    expect(r.widened).toBe(true);
    expect(r.candidates).toBe(3);
    expect(r.chosen).toBe(crawlers[2]!.id);
    expect(r.cellsFetched).toBe(0);
    expect(crawlers[2]!.taken.map((t) => t.id)).toEqual([o.order.id]);
  }, 30_000);
});
