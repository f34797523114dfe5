// The routing diagnosis (sim/routing.ts, `routing.diagnosis` of sim run --json):
// why a route did not go to the oracle's crawler. Overlay.whereIs on hand-made
// cases, then a short run whose classes must add up.
import { describe, expect, it } from 'vitest';
import { cellSearchOptions } from '../../src/dht/cell-search.js';
import { Overlay } from '../../sim/overlay.js';
import { MISS_CLASSES } from '../../sim/routing.js';
import { runScenario } from '../../sim/run.js';
import { FAITHFUL_MODEL } from '../../sim/model.js';
import type { FlatCoords } from '../../sim/flat-coords.js';

const flat = (xy: [number, number][]): FlatCoords => ({ vec: Float64Array.from(xy.flat()), height: new Float64Array(xy.length).fill(3), dims: 2 });

// As test/dht/placement-search.test.ts: host (8, 8), 70 crawlers dense near (−150, −150), crawler 70 alone
// at (10, 10) announcing its coarsest cell only; crawler 71 far outside every block of the host.
const CRAWLERS: [number, number][] = [...Array.from({ length: 70 }, (_, i): [number, number] => [-150 + (i % 10), -150 + Math.floor(i / 10)]), [10, 10], [3000, 3000]];

function searched(search: Partial<ReturnType<typeof cellSearchOptions>>): Overlay {
  const ov = new Overlay(flat([[8, 8]]), flat(CRAWLERS), { ownStore: false, search: cellSearchOptions(search), sampleSeed: 3 });
  CRAWLERS.forEach((_, c) => ov.join(c, 0));
  ov.search(0, 60, new Int32Array(ov.maxFound), new Float64Array(ov.maxFound));
  return ov;
}

describe('where the oracle’s crawler stood in the search', () => {
  it('outside the blocks, unannounced at the level searched, sampled out, found', () => {
    const off = searched({});
    expect(off.whereIs(71)).toBe('outside');
    expect(off.whereIs(70)).toBe('unannounced');
    expect(off.whereIs(0)).toBe('found');
    expect(searched({ sparseCoarser: true }).whereIs(70)).toBe('found');
    // A sample of 10 of the cluster's 70: most of them are left out.
    const small = searched({ perCell: 10 });
    const where = CRAWLERS.slice(0, 70).map((_, c) => small.whereIs(c));
    expect(where.filter((w) => w === 'found').length).toBeGreaterThanOrEqual(10);
    expect(where.filter((w) => w === 'sampled-out').length).toBeGreaterThan(40);
    expect(where.every((w) => w === 'found' || w === 'sampled-out')).toBe(true);
    // 'found' asks the draw the search made (the route's salt, level and block
    // slot): exactly the cluster's crawlers the same search wrote out (a twin
    // overlay, the same sample seed: the same salt).
    const out = new Int32Array(small.maxFound);
    const ov = new Overlay(flat([[8, 8]]), flat(CRAWLERS), { ownStore: false, search: cellSearchOptions({ perCell: 10 }), sampleSeed: 3 });
    CRAWLERS.forEach((_, c) => ov.join(c, 0));
    const n = ov.search(0, 60, out, new Float64Array(ov.maxFound));
    const written = new Set(Array.from(out.subarray(0, n)).filter((c) => c < 70));
    expect(new Set(where.flatMap((w, c) => (w === 'found' ? [c] : [])))).toEqual(written);
  });

  it('a short run: every sampled route is the oracle’s or in one class; without the rule more are unannounced', () => {
    const run = (sparseCoarser: boolean) => {
      const r = runScenario({ scenario: 'ruc', strategies: ['iir'], routing: 'coord', seed: 1, quick: true, steps: 600, model: FAITHFUL_MODEL, config: { overlay: { search: { ...cellSearchOptions(), sparseCoarser } } } });
      const x = r.strategies.iir!.routingStats;
      // The load imbalance's yardsticks come with the run (sim/imbalance.ts).
      expect(x.loadImbalanceIdeal).toBeGreaterThan(0);
      expect(x.loadImbalancePerCapacity).toBeGreaterThan(0);
      return x.diagnosis!;
    };
    const on = run(true);
    const off = run(false);
    for (const d of [on, off]) {
      expect(d.sampled).toBeGreaterThan(100);
      expect(d.oracleTaken + MISS_CLASSES.reduce((a, k) => a + d.classes[k].count, 0)).toBe(d.sampled);
      // Every class carries its counterfactual p90 (an empty class: the run's own).
      for (const k of MISS_CLASSES) expect(d.classes[k].p90IfOracle).toBeGreaterThan(0);
      // Sent to the nearest crawler with room, a full route's stretch is hardly below the oracle's own
      // (both are nearest by predicted RTT, the stretch reads the true one: a little either way).
      expect(d.p90IfRoomOracle).toBeGreaterThanOrEqual(0.97 * d.classes.full.p90IfOracle);
      // On predicted RTT (what both are chosen by) the order is exact: the nearest crawler with room
      // is one the oracle could have chosen, and the policy's own choice is never better than the oracle's.
      expect(d.predicted.p90IfFullToRoomOracle).toBeGreaterThanOrEqual(d.predicted.p90IfFullToOracle);
      expect(d.predicted.overOracleP90).toBeGreaterThanOrEqual(1);
      expect(d.predicted.p90IfFullToOracle).toBeGreaterThanOrEqual(1);
      // Every 'full' route was placed at some hop within the limit, each bucket with its ratio.
      expect(d.fullByHop.length).toBe(4);
      expect(d.fullByHop.reduce((a, b) => a + b.count, 0)).toBe(d.classes.full.count);
      for (const b of d.fullByHop) if (b.count > 0) expect(b.overRoomOracleP90).toBeGreaterThanOrEqual(b.overRoomOracleMedian);
    }
    expect(off.classes.unannounced.count).toBeGreaterThan(2 * on.classes.unannounced.count);
  });
});
