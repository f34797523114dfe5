// The placement policy's widen rule (src/dht/placement.ts wantsWider /
// needsWider), live and simulated: when no crawler with room lies within the
// spill bound among the finest level's candidates, the search takes the next
// coarser level's providers — answers it already holds, no new lookup — and a
// crawler with room there takes the task instead of a walk through full
// neighbours.
import { describe, expect, it } from 'vitest';
import { announceCells, blockAround, cellIndex, DEFAULT_CELLS, type Cell } from '../../src/dht/cells.js';
import { answerComplete, cellSearchOptions, type CellSearchOptions } from '../../src/dht/cell-search.js';
import { PeerTable } from '../../src/dht/peers.js';
import { CandidateSet, needsWider, placementOptions, rankCandidates, rankingNeedsWider, rankInto, wantsWider, type Candidate } from '../../src/dht/placement.js';
import { Router } from '../../src/dht/router.js';
import { createRng } from '../../src/rng.js';
import { Overlay } from '../../sim/overlay.js';
import type { FlatCoords } from '../../sim/flat-coords.js';

const HEIGHT = 3;
const coord = (xy: readonly [number, number]) => ({ vec: Float64Array.from(xy), height: HEIGHT, error: 0.2 });
const flat = (xy: [number, number][]): FlatCoords => ({ vec: Float64Array.from(xy.flat()), height: new Float64Array(xy.length).fill(HEIGHT), dims: 2 });

// Host at (2, 8). Level 8 has cells of 16 ms, level 6 of 64 ms. 20 crawlers at
// (12..15, 6..10) share one cell at every level: with denseAt 16 each is dense,
// so the search goes to level 8, whose block holds the cluster only. Crawler
// 20 at (40, 8) lies outside the level-8 block but in the cluster's level-6
// cell, 38 ms from the host: within 4× the nearest cluster crawler's RTT (16 ms).
const HOST: [number, number] = [2, 8];
const CLUSTER = Array.from({ length: 20 }, (_, i): [number, number] => [12 + (i % 4), 6 + Math.floor(i / 4)]);
const ROOM = 20;
const CRAWLERS: [number, number][] = [...CLUSTER, [40, 8]];
const SEARCH: CellSearchOptions = cellSearchOptions({ denseAt: 16 });
const full = { running: 4, queued: 2, free: 0 };
const idle = { running: 0, queued: 0, free: 6 };
const loadOf = (c: number) => (c === ROOM ? idle : full);

describe('placement policy: widening the search for room', () => {
  it('the geometry: the room crawler is outside the host level-8 block, inside its level-6 block', () => {
    const block8 = blockAround(coord(HOST), 8, DEFAULT_CELLS).map((c) => c.name);
    const block6 = blockAround(coord(HOST), 6, DEFAULT_CELLS).map((c) => c.name);
    const own = (xy: [number, number], level: number) => announceCells(coord(xy), DEFAULT_CELLS).find((c) => c.level === level)!.name;
    expect(block8).not.toContain(own(CRAWLERS[ROOM]!, 8));
    expect(block6).toContain(own(CRAWLERS[ROOM]!, 6));
    for (const xy of CLUSTER) expect(block8).toContain(own(xy, 8));
    expect(cellIndex(coord(CRAWLERS[ROOM]!), 6, DEFAULT_CELLS)).toEqual(cellIndex(coord(CLUSTER[0]!), 6, DEFAULT_CELLS));
  });

  it('the rule: widen only when on and no candidate with room lies within the spill bound', () => {
    const on = placementOptions({ widen: true });
    const host = coord(HOST);
    const cands = (ids: number[]): Candidate<number>[] => ids.map((c) => ({ id: c, coord: coord(CRAWLERS[c]!), load: loadOf(c) }));
    const clusterOnly = cands(CLUSTER.map((_, i) => i));
    expect(needsWider(host, clusterOnly, on)).toBe(true);
    expect(needsWider(host, clusterOnly, placementOptions())).toBe(false); // off by default
    expect(needsWider(host, [], on)).toBe(false);
    // The room crawler among the candidates (within the spill bound): nothing to widen for.
    expect(needsWider(host, cands([...CLUSTER.map((_, i) => i), ROOM]), on)).toBe(false);
    // Beyond the spill bound it does not count: spill 2 puts 38 ms past 2 × 16 ms.
    expect(needsWider(host, cands([...CLUSTER.map((_, i) => i), ROOM]), placementOptions({ widen: true, spill: 2 }))).toBe(true);
    // An unknown load counts as room.
    expect(needsWider(host, [{ id: 0, coord: coord(CLUSTER[0]!) }], on)).toBe(false);
    // The array form agrees.
    const set = new CandidateSet<number>();
    set.add(0, 16, 4, 2, 0);
    set.add(1, 30, 4, 2, 0);
    const order: number[] = [];
    expect(wantsWider(set, order, rankInto(set, on, order, 4), on)).toBe(true);
    set.add(2, 60, 1, 0, 5);
    expect(wantsWider(set, order, rankInto(set, on, order, 4), on)).toBe(false);
    expect(() => placementOptions({ widen: 'yes' as never })).toThrow(/widen/);
  });

  it('the Router asks on its one ranking (rankingNeedsWider) what needsWider asks on the candidates', () => {
    const rng = createRng(7);
    const opts = [placementOptions({ widen: true }), placementOptions({ widen: true, spill: 1.5 }), placementOptions()];
    let wider = 0;
    for (let round = 0; round < 300; round++) {
      const n = Math.floor(rng.next() * 8);
      const cands: Candidate<number>[] = Array.from({ length: n }, (_, i) => {
        const u = rng.next();
        const load = u < 0.6 ? full : u < 0.9 ? { running: 2, queued: u < 0.75 ? 1 : 0, free: u < 0.75 ? 3 : 4 } : undefined;
        return { id: i, coord: coord([2 + rng.next() * 60, rng.next() * 30]), ...(load !== undefined ? { load } : {}) };
      });
      for (const o of opts) {
        const byId = new Map(cands.map((c) => [c.id, c]));
        const ranked = rankCandidates(coord(HOST), cands, o).map((id) => byId.get(id)!);
        const want = needsWider(coord(HOST), cands, o);
        expect(rankingNeedsWider(ranked, o)).toBe(want);
        if (want) wider++;
      }
    }
    expect(wider).toBeGreaterThan(20);
  });

  it('the live Router: the widened lookup, with the same salt and no new cell fetched, finds the room crawler, which then ranks first', async () => {
    const records = new Map<string, string[]>();
    const peers = new PeerTable();
    CRAWLERS.forEach((xy, c) => {
      const id = `crawler-${c}`;
      for (const cell of announceCells(coord(xy))) records.set(cell.name, [...(records.get(cell.name) ?? []), id]);
      peers.note(id, { coord: coord(xy), crawler: true, load: loadOf(c) });
    });
    const live = new Router({ libp2p: { peerId: { toString: () => 'manager' } } as never, peers, coords: {} as never, rng: createRng(3), denseCell: 16, placement: { widen: true } });
    const asked: string[] = [];
    live.cellLookup.providers = (cell: Cell) => {
      asked.push(cell.name);
      const ids = records.get(cell.name) ?? [];
      return Promise.resolve({ ids, complete: answerComplete(ids.length, true, live.search) });
    };
    live.cellLookup.cached = () => true;
    const first = await live.lookup(coord(HOST));
    const ids = first.states.map((p) => p.id).sort();
    expect(ids).toEqual(CLUSTER.map((_, i) => `crawler-${i}`).sort());
    expect(needsWider(coord(HOST), first.states, live.policy)).toBe(true);
    const askedFirst = new Set(asked);
    const wider = await live.lookup(coord(HOST), new Set(), { salt: first.salt, widen: true });
    expect(wider.fetched).toBe(0);
    // The same cells as the first search: the coarser levels were looked up on the way down.
    expect(new Set(asked)).toEqual(askedFirst);
    expect(wider.states.map((p) => p.id)).toContain(`crawler-${ROOM}`);
    expect(live.rank(wider.states, coord(HOST))[0]!.id).toBe(`crawler-${ROOM}`);
  });

  it('the simulated overlay widens alike, paying no lookup', () => {
    const ov = new Overlay(flat([HOST]), flat(CRAWLERS), { ownStore: false, search: SEARCH, sampleSeed: 3 });
    CRAWLERS.forEach((_, c) => ov.join(c, 0));
    const out = new Int32Array(ov.maxFound);
    const rtt = new Float64Array(ov.maxFound);
    const t = 60;
    const n = ov.search(0, t, out, rtt);
    expect(Array.from(out.subarray(0, n)).sort((a, b) => a - b)).toEqual(CLUSTER.map((_, i) => i));
    const lookups = ov.lookups;
    const w = ov.widen(0, t, out, rtt);
    expect(ov.lookups).toBe(lookups);
    const found = Array.from(out.subarray(0, w));
    expect(found).toContain(ROOM);
    // The same ranking as the live Router's on the same candidates.
    const cands = found.map((c) => ({ id: c, coord: coord(CRAWLERS[c]!), load: loadOf(c) }));
    expect(rankCandidates(coord(HOST), cands, placementOptions({ widen: true }))[0]).toBe(ROOM);
    // Nothing coarser than the coarsest level, and only right after the search it widens.
    expect(ov.widen(0, t + 1, out, rtt)).toBe(-1);
  });
});
