// The search rule's sparse-cell case (src/dht/cell-search.ts coarserCellJoins),
// live and simulated: a crawler alone in a sparse coarse cell announces no finer
// cell (adaptive announcing, announce.ts), so when a dense cell beside it in the
// host's block sends the search finer, only the complete coarser answer holds it.
import { describe, expect, it } from 'vitest';
import { announceCells, type Cell } from '../../src/dht/cells.js';
import { answerComplete, coarserCellJoins, cellSearchOptions, type CellSearchOptions } from '../../src/dht/cell-search.js';
import { PeerTable } from '../../src/dht/peers.js';
import { rankCandidates, placementOptions } from '../../src/dht/placement.js';
import { Router } from '../../src/dht/router.js';
import { createRng } from '../../src/rng.js';
import { Overlay } from '../../sim/overlay.js';
import type { FlatCoords } from '../../sim/flat-coords.js';

const flat = (xy: [number, number][]): FlatCoords => ({ vec: Float64Array.from(xy.flat()), height: new Float64Array(xy.length).fill(3), dims: 2 });

// Host at (8, 8). Levels 2, 4, 6, 8: cells of 1024, 256, 64, 16 ms; a block is the 2 × 2 cells around the host.
// 70 crawlers near (−150, −150): dense in their level-2 and level-4 cells, both in the host's blocks, and
// outside its level-6 block, so the search goes to level 6 (empty, complete) and widens back to level 4.
// Crawler 70 at (10, 10), the host's nearest, sits alone in level-2 cell (0, 0): it announces that cell only.
const HOST: [number, number] = [8, 8];
const CLUSTER = Array.from({ length: 70 }, (_, i): [number, number] => [-150 + (i % 10), -150 + Math.floor(i / 10)]);
const LONE = 70;
const CRAWLERS: [number, number][] = [...CLUSTER, [10, 10]];

describe('the search rule: complete coarser answers join the candidates', () => {
  it('the rule itself: with sparseCoarser (off by default) a complete answer joins', () => {
    expect(coarserCellJoins(true, cellSearchOptions({ sparseCoarser: true }))).toBe(true);
    expect(coarserCellJoins(false, cellSearchOptions({ sparseCoarser: true }))).toBe(false);
    expect(coarserCellJoins(true, cellSearchOptions())).toBe(false);
    expect(() => cellSearchOptions({ sparseCoarser: 'yes' as never })).toThrow(/sparseCoarser/);
  });

  it('the live Router finds the lone crawler with the rule, and ranks it first; by default it does not', async () => {
    const records = new Map<string, string[]>();
    const peers = new PeerTable();
    CRAWLERS.forEach((xy, c) => {
      const id = `crawler-${c}`;
      // As adaptive announcing leaves them: the lone crawler its coarsest cell only, the cluster every level.
      const cells = announceCells({ vec: Float64Array.from(xy) });
      for (const cell of c === LONE ? cells.filter((x) => x.level === 2) : cells) records.set(cell.name, [...(records.get(cell.name) ?? []), id]);
      peers.note(id, { coord: { vec: Float64Array.from(xy), height: 3, error: 0.2 }, crawler: true });
    });
    const lookup = async (search?: CellSearchOptions): Promise<string[]> => {
      const live = new Router({ libp2p: { peerId: { toString: () => 'manager' } } as never, peers, coords: {} as never, rng: createRng(3) });
      if (search !== undefined) (live as unknown as { search: CellSearchOptions }).search = search;
      live.cellLookup.providers = (cell: Cell) => {
        const ids = records.get(cell.name) ?? [];
        return Promise.resolve({ ids, complete: answerComplete(ids.length, true, live.search) });
      };
      live.cellLookup.cached = () => true;
      const found = await live.lookup({ vec: Float64Array.from(HOST), height: 3, error: 0.2 });
      return found.states.map((p) => p.id);
    };
    const withRule = await lookup(cellSearchOptions({ sparseCoarser: true }));
    expect(withRule).toContain(`crawler-${LONE}`);
    const cands = withRule.map((id) => ({ id, coord: peers.get(id)!.coord! }));
    expect(rankCandidates({ vec: Float64Array.from(HOST), height: 3, error: 0.2 }, cands, placementOptions())[0]).toBe(`crawler-${LONE}`);
    const without = await lookup();
    expect(without).not.toContain(`crawler-${LONE}`);
    expect(without.length).toBeGreaterThanOrEqual(64);
  });

  it('the simulated overlay, with adaptive announcing, finds it alike', () => {
    const found = (sparseCoarser: boolean): number[] => {
      const ov = new Overlay(flat([HOST]), flat(CRAWLERS), { ownStore: false, search: { ...cellSearchOptions(), sparseCoarser }, sampleSeed: 3 });
      CRAWLERS.forEach((_, c) => ov.join(c, 0));
      // Long enough for every cluster crawler's density counts to take it finer (a count every half TTL).
      const out = new Int32Array(ov.maxFound);
      const rtt = new Float64Array(ov.maxFound);
      const n = ov.search(0, 60, out, rtt);
      expect(ov.levelsAnnounced(LONE)).toBe(1);
      expect(ov.levelsAnnounced(0)).toBeGreaterThan(2);
      return Array.from(out.subarray(0, n));
    };
    expect(found(true)).toContain(LONE);
    expect(found(false)).not.toContain(LONE);
  });
});
