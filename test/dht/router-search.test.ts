// One cell search for the live Router and the simulator (src/dht/cell-search.ts):
// the same provider records give the same candidates in both.
import { describe, expect, it } from 'vitest';
import { announceCells, type Cell } from '../../src/dht/cells.js';
import { answerComplete, candidatesFrom, cellSampleSeed, cellSearchOptions, drawSample, levelStops, providerSample, SampleScratch, searchLevels } from '../../src/dht/cell-search.js';
import { DEFAULT_CELLS } from '../../src/dht/cells.js';
import { PeerTable } from '../../src/dht/peers.js';
import { Router } from '../../src/dht/router.js';
import { createRng } from '../../src/rng.js';
import { Overlay } from '../../sim/overlay.js';
import type { FlatCoords } from '../../sim/flat-coords.js';

describe('cell search rules', () => {
  it('coarsest level first; stops when every cell is complete; candidates from the finest level, widened while too few', () => {
    expect(searchLevels(DEFAULT_CELLS)).toEqual([2, 4, 6, 8]);
    const o = cellSearchOptions({ denseAt: 64, minCandidates: 8 });
    expect(answerComplete(63, true, o)).toBe(true);
    expect(answerComplete(64, true, o)).toBe(false);
    expect(answerComplete(5, false, o)).toBe(false);
    expect(levelStops([true, true, true, true])).toBe(true);
    expect(levelStops([true, false])).toBe(false);
    expect(candidatesFrom([500, 120, 30], o)).toBe(2);
    expect(candidatesFrom([500, 120, 3], o)).toBe(1);
    expect(candidatesFrom([500, 5, 3], o)).toBe(0);
    expect(candidatesFrom([500, 5, 3, 99], o, 3)).toBe(0);
    expect(() => cellSearchOptions({ denseAt: 0 })).toThrow(/denseAt/);
    expect(() => cellSearchOptions({ perCell: 0 })).toThrow(/perCell/);
  });

  it('a bounded sample per cell: at most perCell, in the answer\'s order, a fresh uniform draw per seed', () => {
    const ids = Array.from({ length: 100 }, (_, i) => `peer-${i}`);
    expect(providerSample(ids.slice(0, 20), 20, 7)).toEqual(ids.slice(0, 20));
    const one = providerSample(ids, 20, 7);
    expect(one).toHaveLength(20);
    expect(new Set(one).size).toBe(20);
    expect(one).toEqual(ids.filter((id) => one.includes(id)));
    expect(providerSample(ids, 20, 7)).toEqual(one);
    expect(providerSample(ids, 20, 8)).not.toEqual(one);
    // The draw reads no id: other names in the same places are kept in the same places (nothing to grind).
    const renamed = ids.map((id) => `${id}-ground`);
    expect(providerSample(renamed, 20, 7)).toEqual(one.map((id) => `${id}-ground`));
    // Over 2 000 routes each provider is kept about 20 % of the time, early or late in the list alike.
    const kept = new Array<number>(100).fill(0);
    for (let salt = 0; salt < 2000; salt++) for (const id of providerSample(ids, 20, cellSampleSeed(salt, 8, 0))) kept[Number(id.slice(5))]!++;
    expect(Math.min(...kept)).toBeGreaterThan(300);
    expect(Math.max(...kept)).toBeLessThan(500);
    const firstHalf = kept.slice(0, 50).reduce((a, b) => a + b, 0);
    expect(Math.abs(firstHalf - 20_000)).toBeLessThan(1000);
    // The cells of one route draw apart: two slots of one salt keep different providers.
    expect(providerSample(ids, 20, cellSampleSeed(3, 8, 0))).not.toEqual(providerSample(ids, 20, cellSampleSeed(3, 8, 1)));
  });

  it('drawSample (Floyd): k distinct positions, every k-subset equally likely', () => {
    // 2 of 5: ten subsets, each 1/10 of 20 000 draws (2 000, sd ≈ 42); a draw
    // that favoured early or late positions, or repeated one, would miss.
    const scratch = new SampleScratch();
    const counts = new Map<string, number>();
    for (let seed = 0; seed < 20_000; seed++) {
      drawSample(5, 2, cellSampleSeed(seed, 4, 2), scratch);
      const [a, b] = [scratch.picked[0]!, scratch.picked[1]!].sort((x, y) => x - y);
      counts.set(`${a},${b}`, (counts.get(`${a},${b}`) ?? 0) + 1);
    }
    // Only the ten pairs of distinct positions in [0, 5) occur.
    const pairs = [...counts.keys()].map((k) => k.split(',').map(Number) as [number, number]);
    expect(pairs.every(([a, b]) => a >= 0 && a < b && b < 5)).toBe(true);
    expect(counts.size).toBe(10);
    for (const c of counts.values()) expect(Math.abs(c - 2000)).toBeLessThan(200);
    // A large cell: 64 distinct positions of 2 558, reusing the scratch.
    drawSample(2558, 64, 99, scratch);
    expect(new Set(scratch.picked.subarray(0, 64)).size).toBe(64);
    expect(Math.max(...scratch.picked.subarray(0, 64))).toBeLessThan(2558);
  });
});

/** Crawlers: a dense cluster (coarse cells hold more than denseAt) and a sparse spread. */
function world(seed: number): { hosts: [number, number][]; crawlers: [number, number][] } {
  const rng = createRng(seed);
  const crawlers: [number, number][] = [];
  for (let i = 0; i < 220; i++) crawlers.push([100 + (rng.next() - 0.5) * 120, -40 + (rng.next() - 0.5) * 120]);
  for (let i = 0; i < 120; i++) crawlers.push([(rng.next() - 0.5) * 3000, (rng.next() - 0.5) * 3000]);
  const hosts: [number, number][] = [[100, -40], [130, -10], [60, 20], [300, 300], [-1200, 900], [0, 0], [1400, -1400]];
  for (let i = 0; i < 25; i++) hosts.push([(rng.next() - 0.5) * 3000, (rng.next() - 0.5) * 3000]);
  return { hosts, crawlers };
}

const flat = (xy: [number, number][]): FlatCoords => ({ vec: Float64Array.from(xy.flat()), height: new Float64Array(xy.length).fill(3), dims: 2 });

describe('the live Router and the simulator search alike', () => {
  for (const rules of [
    { denseAt: 64, minCandidates: 8, perCell: 20 },
    { denseAt: 16, minCandidates: 30, perCell: 20 },
    { denseAt: 64, minCandidates: 8, perCell: Infinity },
  ]) {
    it(`the same provider records give the same candidates (denseAt ${rules.denseAt}, minCandidates ${rules.minCandidates}, perCell ${rules.perCell})`, async () => {
      const { hosts, crawlers } = world(7);
      // The records every holder stores: cell name → crawler ids (each crawler announces one cell per level).
      const records = new Map<string, string[]>();
      const peers = new PeerTable();
      crawlers.forEach((xy, c) => {
        const id = `crawler-${c}`;
        for (const cell of announceCells({ vec: xy })) records.set(cell.name, [...(records.get(cell.name) ?? []), id]);
        peers.note(id, { coord: { vec: Float64Array.from(xy), height: 3, error: 0.2 }, crawler: true });
      });
      const live = new Router({ libp2p: { peerId: { toString: () => 'manager' } } as never, peers, coords: {} as never, denseCell: rules.denseAt, minCandidates: rules.minCandidates, perCell: rules.perCell, rng: createRng(5) });
      // Every crawler announces every level here (adaptive announcing off), as the records above.
      const sim = new Overlay(flat(hosts), flat(crawlers), { search: rules, ownStore: false, adaptive: false, sampleSeed: 5 });
      // A CellLookup whose every answer is a record holder's whole list (as kad-dht's remote holders answer);
      // both draw one sample salt per route from the same seed.
      let asked = 0;
      let sampled = 0;
      live.cellLookup.providers = (cell: Cell) => {
        asked++;
        const ids = records.get(cell.name) ?? [];
        if (ids.length > rules.perCell) sampled++;
        return Promise.resolve({ ids, complete: answerComplete(ids.length, true, live.search) });
      };
      live.cellLookup.cached = () => true;
      crawlers.forEach((_, c) => sim.join(c, 0));
      const out = new Int32Array(sim.maxFound);
      const rtt = new Float64Array(sim.maxFound);
      const sizes = new Set<number>();
      for (let h = 0; h < hosts.length; h++) {
        const before = { asked, lookups: sim.lookups + sim.cacheHits };
        const n = sim.search(h, 0, out, rtt);
        const found = await live.lookup({ vec: Float64Array.from(hosts[h]!), height: 3, error: 0.2 });
        const liveIds = found.states.map((p) => p.id).sort();
        const simIds = Array.from(out.subarray(0, n), (c) => `crawler-${c}`).sort();
        expect(simIds, `host ${h}`).toEqual(liveIds);
        // The same cells looked up.
        expect(sim.lookups + sim.cacheHits - before.lookups, `host ${h}`).toBe(asked - before.asked);
        sizes.add(liveIds.length);
      }
      // The cases differ: some hosts stop coarse, some go finer, some widen back.
      expect(sizes.size).toBeGreaterThan(3);
      // Some answers held more than perCell providers: the sample was drawn, alike.
      if (rules.perCell < Infinity) expect(sampled).toBeGreaterThan(0);
    });
  }
});
