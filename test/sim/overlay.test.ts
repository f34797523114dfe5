import { describe, expect, it } from 'vitest';
import { DEFAULT_PROVIDER_TTL_MS, providerTiming } from '../../src/dht/announce.js';
import { announceCells, blockAround, DEFAULT_CELLS, levels } from '../../src/dht/cells.js';
import { DEFAULT_OVERLAY_OPTIONS, kadLookupMessages, Overlay, recordSchedule } from '../../sim/overlay.js';
import type { FlatCoords } from '../../sim/flat-coords.js';

/** Points in 2-D with height 5 ms. */
function points(xy: [number, number][]): FlatCoords {
  return { vec: Float64Array.from(xy.flat()), height: new Float64Array(xy.length).fill(5), dims: 2 };
}
const name = (c: { level: number; index: number[] }) => `${c.level}/${c.index.join(',')}`;

describe('simulated overlay: the cells of src/dht/cells.ts', () => {
  it('searches the same blocks the live Router looks up, and files each crawler under the cells it announces', () => {
    const hosts = points([[37.5, -120.25], [500, 500], [-1000, 3]]);
    const crawlers = points([[40, -118], [300, 260], [-1000, 10]]);
    const ov = new Overlay(hosts, crawlers);
    levels().forEach((level, li) => {
      for (let h = 0; h < 3; h++) {
        const v = { vec: hosts.vec.subarray(h * 2, h * 2 + 2) };
        expect(ov.blockOf(h, li)).toEqual(blockAround(v, level).map(name));
      }
    });
    for (let c = 0; c < 3; c++) {
      for (const cell of announceCells({ vec: crawlers.vec.subarray(c * 2, c * 2 + 2) })) expect(ov.cellKeys).toContain(name(cell));
    }
  });
});

describe('simulated overlay: provider records', () => {
  it('take the live TTL and kad-dht schedule: re-provided every 6 min, found until the last provide + TTL + half a cleanup', () => {
    expect(DEFAULT_OVERLAY_OPTIONS.providerTtlMs).toBe(DEFAULT_PROVIDER_TTL_MS);
    const live = providerTiming(DEFAULT_PROVIDER_TTL_MS);
    expect(live).toEqual({ validityMs: 600_000, thresholdMs: 300_000, checkMs: 60_000, cleanupMs: 200_000 });
    const sched = recordSchedule(DEFAULT_PROVIDER_TTL_MS);
    // Checks every 60 s from the provide; the first past 600 − 300 s is at 360 s.
    expect(sched.reprovideEvery).toBeCloseTo(6, 12);
    expect(sched.visibleAfterLastProvide).toBeCloseTo((600_000 + 100_000) / 60_000, 12);
    // A short TTL: checks every TTL/4, cleanups every TTL/3.
    const short = recordSchedule(120_000);
    expect(short.reprovideEvery).toBeCloseTo(1.5, 12);
    expect(short.visibleAfterLastProvide).toBeCloseTo((120_000 + 20_000) / 60_000, 12);
  });

  it('lapse that long after a crawler leaves silently: found as a stale record before, not after', () => {
    const hosts = points([[0, 0]]);
    const crawlers = points([[1, 1], [2, 1], [1, 2], [2, 2], [3, 3]]);
    const ov = new Overlay(hosts, crawlers, { eagerLevels: false });
    for (let c = 0; c < 5; c++) ov.join(c, 0);
    const out = new Int32Array(ov.maxFound);
    const rtt = new Float64Array(ov.maxFound);
    expect(ov.search(0, 1, out, rtt)).toBe(5);
    // Leaves at 10 min: re-provided at 6 min; the record is found until 6 + 10 + 1.67 min.
    ov.leave(4, 10);
    const until = 6 + (DEFAULT_PROVIDER_TTL_MS + providerTiming().cleanupMs / 2) / 60_000;
    expect(ov.recordUntil[4]).toBeCloseTo(until, 12);
    expect(ov.findable(4, until - 1e-6)).toBe(true);
    expect(ov.findable(4, until + 1e-6)).toBe(false);
    const stale0 = ov.staleRecords;
    expect(ov.search(0, until - 1e-6, out, rtt)).toBe(4);
    expect(ov.staleRecords).toBe(stale0 + 1);
    expect(ov.search(0, until + 1e-6, out, rtt)).toBe(4);
    expect(ov.staleRecords).toBe(stale0 + 1);
    // Joining again, it is found again at once.
    ov.join(4, until + 1);
    expect(ov.search(0, until + 1, out, rtt)).toBe(5);
  });

  it('counts provides: one per level at join, again every re-provide period while online', () => {
    const ov = new Overlay(points([[0, 0]]), points([[1, 1]]));
    const L = ov.cellsPerCrawler;
    ov.join(0, 0);
    expect(ov.provides).toBe(L);
    ov.leave(0, 20);
    expect(ov.provides).toBe(L + 3 * L); // 6, 12, 18 min
    expect(ov.onlineMinutes).toBe(20);
  });
});

describe('simulated overlay: the widening search', () => {
  it('stops one level after it finds `want` crawlers within reach, and pays those lookups', () => {
    // Four crawlers within 24 ms of the host (level 8 reach = 1.5 × 16 ms).
    const near = new Overlay(points([[0, 0]]), points([[2, 0], [0, 2], [3, 3], [-2, -1], [400, 400]]), { eagerLevels: false });
    for (let c = 0; c < 5; c++) near.join(c, 0);
    const out = new Int32Array(near.maxFound);
    const rtt = new Float64Array(near.maxFound);
    near.search(0, 1, out, rtt);
    const blockCells = (li: number) => near.blockOf(0, li).length;
    expect(near.lookups).toBe(blockCells(0) + blockCells(1));
    // Nothing near: every level is read.
    const far = new Overlay(points([[0, 0]]), points([[900, 900]]), { eagerLevels: false });
    far.join(0, 0);
    expect(far.search(0, 1, out, rtt)).toBe(1);
    expect(far.lookups).toBe([0, 1, 2, 3].reduce((a, li) => a + far.blockOf(0, li).length, 0));
  });

  it('keeps at most providersPerCell records per cell, in a fixed order', () => {
    const xy: [number, number][] = Array.from({ length: 30 }, (_, i) => [1 + (i % 6), 1 + Math.floor(i / 6)]);
    const ov = new Overlay(points([[4, 4]]), points(xy), { eagerLevels: false, providersPerCell: 5 });
    for (let c = 0; c < 30; c++) ov.join(c, 0);
    const out = new Int32Array(ov.maxFound);
    const rtt = new Float64Array(ov.maxFound);
    // All 30 sit in one cell at each level; the search reads two levels (5
    // found within reach at the finest, then one more): 5 from each cell.
    const n = ov.search(0, 1, out, rtt);
    expect(n).toBeGreaterThanOrEqual(5);
    expect(n).toBeLessThanOrEqual(10);
    const first = Array.from(out.subarray(0, n));
    expect(Array.from(out.subarray(0, ov.search(0, 2, out, rtt)))).toEqual(first);
    // A provider leaving lets the next one in once its record lapses.
    ov.leave(first[0]!, 5);
    const later = Array.from(out.subarray(0, ov.search(0, 15, out, rtt)));
    expect(later).toHaveLength(n);
    expect(later).not.toContain(first[0]);
  });

  it('reuses a lookup within the cache TTL and models each as a Kademlia query of α⌈log₂ n⌉ messages', () => {
    const ov = new Overlay(points([[0, 0]]), points([[2, 0], [0, 2], [3, 3], [-2, -1]]), { eagerLevels: true });
    for (let c = 0; c < 4; c++) ov.join(c, 0);
    const out = new Int32Array(ov.maxFound);
    const rtt = new Float64Array(ov.maxFound);
    ov.search(0, 1, out, rtt);
    const cells = [0, 1, 2, 3].reduce((a, li) => a + ov.blockOf(0, li).length, 0);
    expect(ov.lookups).toBe(cells);
    expect(ov.lookupMessages).toBe(cells * kadLookupMessages(4, 3));
    ov.search(0, 1 + 1 / 60, out, rtt); // 1 s later: cached (the manager's Router keeps lookups 2 s)
    expect(ov.lookups).toBe(cells);
    expect(ov.cacheHits).toBe(cells);
    ov.search(0, 1 + 3 / 60, out, rtt);
    expect(ov.lookups).toBe(2 * cells);
    expect(kadLookupMessages(28_000, 3)).toBe(3 * 15);
  });
});

describe('simulated overlay: what the manager can see', () => {
  it('a cell lookup returns at most providersPerCell records, so crowded crawlers beyond them are visible to no search', () => {
    // 30 crawlers on one spot share one cell (one level in use): only 20 can be returned.
    // (With several levels each cell has its own provider order, so the union is larger.)
    const hosts = points([[0, 0]]);
    const crawlers = points(Array.from({ length: 30 }, (_, i) => [i * 1e-6, 0] as [number, number]));
    const ov = new Overlay(hosts, crawlers, { providersPerCell: 20, cells: { ...DEFAULT_CELLS, minLevel: 8, maxLevel: 8 } });
    for (let c = 0; c < 30; c++) ov.join(c, 0);
    expect(ov.visibleCrawlers(0)).toBe(20);
    const out = new Int32Array(ov.maxFound);
    const rtt = new Float64Array(ov.maxFound);
    expect(ov.search(0, 0, out, rtt)).toBe(20);
    // One that leaves stops counting; its record still fills a window slot until it lapses.
    ov.leave(out[0]!, 1);
    expect(ov.visibleCrawlers(1)).toBe(19);
  });
});

describe('simulated overlay: a search repeated for a task held after every attempt refused', () => {
  it('bills the same lookups and stale records again, and only while nothing changed', () => {
    const hosts = points([[0, 0], [900, 900]]);
    const crawlers = points([[1, 1], [2, 1], [1, 2], [2, 2], [3, 3]]);
    const ov = new Overlay(hosts, crawlers, { cacheTtlMs: 0 });
    for (let c = 0; c < 5; c++) ov.join(c, 0);
    ov.leave(4, 1);
    const out = new Int32Array(ov.maxFound);
    const rtt = new Float64Array(ov.maxFound);
    const n = ov.search(0, 2, out, rtt);
    const once = { lookups: ov.lookups, messages: ov.lookupMessages, stale: ov.staleRecords };
    expect(once.stale).toBe(1);
    expect(ov.repeatSearch(0, 2)).toBe(n);
    // With no Router cache every lookup is paid again; the stale record is met again.
    expect(ov.lookups).toBe(2 * once.lookups);
    expect(ov.lookupMessages).toBe(2 * once.messages);
    expect(ov.staleRecords).toBe(2);
    // Another host, another time, or a join or leave since: nothing to repeat.
    expect(ov.repeatSearch(1, 2)).toBe(-1);
    expect(ov.repeatSearch(0, 3)).toBe(-1);
    ov.search(0, 3, out, rtt);
    ov.join(4, 3);
    expect(ov.repeatSearch(0, 3)).toBe(-1);
  });
});
