import { describe, expect, it } from 'vitest';
import { DEFAULT_PROVIDER_TTL_MS, providerTiming } from '../../src/dht/announce.js';
import { announceCells, blockAround, DEFAULT_CELLS, levels } from '../../src/dht/cells.js';
import { DEFAULT_CELL_SEARCH } from '../../src/dht/cell-search.js';
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
    // No Router cache: every search reads the records as they are.
    const ov = new Overlay(hosts, crawlers, { cacheTtlMs: 0, maxStaleMs: 0 });
    for (let c = 0; c < 5; c++) ov.join(c, 0);
    const out = new Int32Array(ov.maxFound);
    const rtt = new Float64Array(ov.maxFound);
    expect(ov.search(0, 1, out, rtt)).toBe(5);
    // Leaves at 10 min: re-provided at 6 min; the record is found until 6 + 10 + 1.67 min.
    ov.leave(4, 10);
    const until = 6 + (DEFAULT_PROVIDER_TTL_MS + providerTiming().cleanupMs / 2) / 60_000;
    expect(ov.recordUntil(4)).toBeCloseTo(until, 12);
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
    const ov = new Overlay(points([[0, 0]]), points([[1, 1]]), { adaptive: false });
    const L = ov.cellsPerCrawler;
    ov.join(0, 0);
    expect(ov.provides).toBe(L);
    ov.leave(0, 20);
    expect(ov.provides).toBe(L + 3 * L); // 6, 12, 18 min
    expect(ov.onlineMinutes).toBe(20);
  });
});

describe('simulated overlay: the search of cell-search.ts', () => {
  const blockCells = (ov: Overlay, h: number, lis: number[]) => lis.reduce((a, li) => a + ov.blockOf(h, li).length, 0);
  const run = (ov: Overlay, h: number, t: number) => {
    const out = new Int32Array(ov.maxFound);
    const rtt = new Float64Array(ov.maxFound);
    return Array.from(out.subarray(0, ov.search(h, t, out, rtt))).sort((a, b) => a - b);
  };

  it('looks up the coarsest level first and stops at the first level whose every cell answered completely, paying only those lookups', () => {
    // Level index 3 is the coarsest (level 2, 1024-ms cells), 0 the finest.
    const xy: [number, number][] = Array.from({ length: 10 }, (_, i) => [1 + (i % 5), 1 + Math.floor(i / 5)]);
    const sparse = new Overlay(points([[8, 8]]), points(xy), { adaptive: false });
    for (let c = 0; c < 10; c++) sparse.join(c, 0);
    expect(run(sparse, 0, 1)).toHaveLength(10);
    expect(sparse.lookups).toBe(blockCells(sparse, 0, [3]));
    // Cells of 10 are dense at denseAt 10: every level is looked up, coarsest first.
    const dense = new Overlay(points([[8, 8]]), points(xy), { search: { denseAt: 10, minCandidates: 1, perCell: 20 }, adaptive: false });
    for (let c = 0; c < 10; c++) dense.join(c, 0);
    expect(run(dense, 0, 1)).toHaveLength(10);
    expect(dense.lookups).toBe(blockCells(dense, 0, [3, 2, 1, 0]));
    expect(dense.levelsLooked).toBe(4);
  });

  it('offers the providers of the finest level looked up, widened coarser while fewer than minCandidates', () => {
    // Host at (8, 8): the level-2 block reaches x, y ∈ [−1024, 1024), the level-4 block [−256, 256).
    const xy: [number, number][] = [[10, 10], [12, 9], [7, 14]];
    for (let i = 0; i < 70; i++) xy.push([-900 + (i % 10), -900 + Math.floor(i / 10)]);
    const hosts = points([[8, 8]]);
    const few = new Overlay(hosts, points(xy), { search: { denseAt: 64, minCandidates: 2, perCell: Infinity }, ownStore: false, adaptive: false });
    const more = new Overlay(hosts, points(xy), { search: { denseAt: 64, minCandidates: 8, perCell: Infinity }, ownStore: false, adaptive: false });
    const sampled = new Overlay(hosts, points(xy), { search: { denseAt: 64, minCandidates: 8, perCell: 20 }, ownStore: false, adaptive: false });
    for (let c = 0; c < xy.length; c++) {
      few.join(c, 0);
      more.join(c, 0);
      sampled.join(c, 0);
    }
    // Level 2 is dense (73 in one cell), level 4's block holds the 3 near ones, complete: the search stops there.
    expect(run(few, 0, 1)).toEqual([0, 1, 2]);
    expect(few.lastFound).toBe(3);
    expect(few.lookups).toBe(blockCells(few, 0, [3, 2]));
    // Three are fewer than 8: the candidates widen to level 2's providers.
    expect(run(more, 0, 1)).toHaveLength(73);
    expect(more.lookups).toBe(blockCells(more, 0, [3, 2]));
    // At most perCell of one cell's answer: the 3 of one cell, 20 of the 70 of another.
    const got = run(sampled, 0, 1);
    expect(got).toHaveLength(23);
    expect(got.slice(0, 3)).toEqual([0, 1, 2]);
    expect(sampled.lastFound).toBe(23);
    // The next route draws another sample (a dense cell's tasks spread over its crawlers).
    const again = run(sampled, 0, 1.01);
    expect(again).toHaveLength(23);
    expect(again).not.toEqual(got);
  });

  it('serves a cached answer while younger than the max-stale age, refreshing it once past the TTL; a crawler that joined shows after the refresh', () => {
    const ov = new Overlay(points([[8, 8]]), points([[10, 10], [12, 12], [9, 11]]), { cacheTtlMs: 30_000, maxStaleMs: 600_000 });
    ov.join(0, 0);
    ov.join(1, 0);
    expect(run(ov, 0, 1)).toEqual([0, 1]);
    const cells = ov.lookups;
    expect(ov.lookupMessages).toBe(cells * kadLookupMessages(2, 3));
    ov.join(2, 1.1);
    // 12 s later: from the cache, not paid, and without the newcomer.
    expect(run(ov, 0, 1.2)).toEqual([0, 1]);
    expect(ov.lookups).toBe(cells);
    expect(ov.cacheHits).toBe(cells);
    // 60 s after the fetch: the old answer is served and a refresh paid; the next search sees it.
    expect(run(ov, 0, 2)).toEqual([0, 1]);
    expect(ov.lookups).toBe(2 * cells);
    expect(run(ov, 0, 2.1)).toEqual([0, 1, 2]);
    expect(ov.lookups).toBe(2 * cells);
    // Past the max-stale age (10 min): fetched before it is served.
    ov.leave(2, 3);
    expect(run(ov, 0, 13)).toEqual([0, 1]);
    expect(ov.lookups).toBe(3 * cells);
    expect(kadLookupMessages(28_000, 3)).toBe(3 * 15);
  });

  it("models the manager's own store: when it holds a cell's records it answers with the first 20 stored, not complete", () => {
    // kadK ≥ n + 1: the manager is among every cell's holders.
    const xy: [number, number][] = Array.from({ length: 30 }, (_, i) => [1 + (i % 6), 1 + Math.floor(i / 6)]);
    const one = { ...DEFAULT_CELLS, minLevel: 8, maxLevel: 8 };
    const own = new Overlay(points([[4, 4]]), points(xy), { cells: one, kadK: 64 });
    const remote = new Overlay(points([[4, 4]]), points(xy), { cells: one, ownStore: false, search: { ...DEFAULT_CELL_SEARCH, perCell: Infinity } });
    for (let c = 29; c >= 0; c--) {
      own.join(c, 29 - c);
      remote.join(c, 29 - c);
    }
    // Stored in the order 29, 28, …: the first 20 are 10 … 29.
    expect(run(own, 0, 40)).toEqual(Array.from({ length: 20 }, (_, i) => 10 + i));
    expect(own.cutAnswers).toBeGreaterThan(0);
    expect(run(remote, 0, 40)).toHaveLength(30);
    expect(remote.cutAnswers).toBe(0);
  });
});

describe('simulated overlay: adaptive announcing (announce.ts announceFiner / dropFinest)', () => {
  it('announces the coarsest level, one finer per density count while dense, and drops the finest once the cell above thins', () => {
    // 80 crawlers on one spot (every level's cell holds all 80) and one far away.
    const xy: [number, number][] = Array.from({ length: 80 }, (_, i) => [5 + (i % 4) * 0.1, 5]);
    xy.push([-900, 900]);
    const ov = new Overlay(points([[5, 5]]), points(xy), { ownStore: false });
    const L = ov.cellsPerCrawler;
    for (let c = 0; c < xy.length; c++) ov.join(c, 0);
    // Each counts its coarsest cell as it joins: the 64th and later ones find it dense and go one finer at once.
    expect(ov.levelsAnnounced(0)).toBe(1);
    expect(ov.levelsAnnounced(63)).toBe(2);
    expect(ov.provides).toBe(81 + 17);
    // One count every 5 min: one more level each, up to every level; the far one stays coarse.
    const out = new Int32Array(ov.maxFound);
    const rtt = new Float64Array(ov.maxFound);
    ov.search(0, 5, out, rtt);
    expect(ov.levelsAnnounced(0)).toBe(2);
    expect(ov.levelsAnnounced(63)).toBe(3);
    ov.search(0, 5 * L, out, rtt);
    for (let c = 0; c < 80; c++) expect(ov.levelsAnnounced(c)).toBe(L);
    expect(ov.levelsAnnounced(80)).toBe(1);
    // 60 leave at 30 min: their records lapse by 41.7 min (last re-provide 30 + TTL 10 + half a cleanup);
    // the remaining 20 find the cell above thin from the count at 45 min on and drop one level per count.
    for (let c = 20; c < 80; c++) ov.leave(c, 30);
    ov.search(0, 44, out, rtt);
    expect(ov.levelsAnnounced(0)).toBe(L);
    ov.search(0, 45, out, rtt);
    expect(ov.levelsAnnounced(0)).toBe(L - 1);
    ov.search(0, 45 + 5 * L, out, rtt);
    for (let c = 0; c < 20; c++) expect(ov.levelsAnnounced(c)).toBe(1);
    // A dropped level's record lapses one validity after its last provide: the finer cells empty out.
    ov.search(0, 130, out, rtt);
    // The coarsest block (complete: 21 < 64) holds the 20 and the far one; the search stops there.
    expect(ov.search(0, 130, out, rtt)).toBe(21);
    expect(ov.densityCounts).toBeGreaterThan(0);
  });

  it('without it every level is provided at join, as before session 9', () => {
    const ov = new Overlay(points([[0, 0]]), points([[1, 1], [2, 2]]), { adaptive: false });
    ov.join(0, 0);
    ov.join(1, 0);
    expect(ov.levelsAnnounced(0)).toBe(ov.cellsPerCrawler);
    expect(ov.provides).toBe(2 * ov.cellsPerCrawler);
    expect(ov.densityCounts).toBe(0);
  });
});

describe('simulated overlay: a search repeated for a task held after every attempt refused', () => {
  it('bills the same lookups and stale records again, and only while nothing changed', () => {
    const hosts = points([[0, 0], [900, 900]]);
    const crawlers = points([[1, 1], [2, 1], [1, 2], [2, 2], [3, 3]]);
    const ov = new Overlay(hosts, crawlers, { cacheTtlMs: 0, maxStaleMs: 0 });
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
