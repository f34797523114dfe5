// The Router ranks candidates on the manager's copies of their coordinates.
// A copy's age is the coordinate's own: a task reply (load only) must not make
// an old coordinate look fresh (#18: a crawler that kept receiving tasks kept
// the coordinate it had when the manager first met it).
import { describe, expect, it } from 'vitest';
import { answerComplete } from '../../src/dht/cell-search.js';
import { PeerTable, toWireCoord } from '../../src/dht/peers.js';
import { Router } from '../../src/dht/router.js';
import type { Coordinate } from '../../src/coords/index.js';

const at = (x: number): Coordinate => ({ vec: Float64Array.from([x, 0, 0]), height: 1, error: 0.2 });

describe('Router coordinate copies', () => {
  it('asks for a fresh coordinate before ranking on one older than maxStaleMs, however recently the peer sent load', async () => {
    const peers = new PeerTable();
    peers.note('crawler-1', { coord: at(500), crawler: true }); // learned when we met it, long before it settled
    const asked: string[] = [];
    const coords = {
      info: async (id: string) => {
        asked.push(id);
        return { coord: toWireCoord(at(10)), crawler: true };
      },
    };
    const router = new Router({ libp2p: { peerId: { toString: () => 'manager' } } as never, peers, coords: coords as never, maxStaleMs: 20_000, staleMs: 10_000 });
    router.cellLookup.providers = () => Promise.resolve({ ids: ['crawler-1'], complete: answerComplete(1, true, router.search) });
    router.cellLookup.cached = () => true;
    // The copy was learned 30 s ago (older than maxStaleMs); task replies keep bringing load since.
    peers.get('crawler-1')!.coordAt = performance.now() - 30_000;
    for (let i = 0; i < 5; i++) peers.note('crawler-1', { load: { running: 0, queued: 0, free: 4 } });
    const found = await router.lookup(at(0));
    expect(asked).toEqual(['crawler-1']);
    expect(found.states.map((p) => p.coord!.vec[0])).toEqual([10]);
    // Fresh now: the next lookup ranks on the copy without asking.
    await router.lookup(at(0));
    expect(asked).toHaveLength(1);
  });
});
