// Coordinate claims against measured RTTs (src/coords/plausibility.ts) and
// cell announcements against claims and measured positions (src/dht/plausibility.ts).
import { describe, expect, it } from 'vitest';
import { createRng, uniform, type Rng } from '../../src/rng.js';
import { checkCoordinateClaim, measuredPosition, plausibilityOptions, predictRtt, type Coordinate, type RttObservation } from '../../src/coords/index.js';
import { announceCells, cellAt, cellSide, DEFAULT_CELLS } from '../../src/dht/cells.js';
import { checkAnnouncement, distanceToCell, justifiedCells, parseCellName } from '../../src/dht/plausibility.js';

const c = (vec: number[], height = 1, error = 0.2): Coordinate => ({ vec: Float64Array.from(vec), height, error });

// Twelve measurers on a ring of radius 80 ms around the origin, and four in
// a region R around (150, 0) — the nodes already announced there.
const ring = Array.from({ length: 12 }, (_, i) => c([80 * Math.cos((i * Math.PI) / 6), 80 * Math.sin((i * Math.PI) / 6)]));
const region = [c([140, 10]), c([160, -10]), c([150, 15]), c([145, -12])];
const measurers = [...ring, ...region];

/** RTTs measured from every measurer to a node truly at `truth`, ±10 % noise, plus `delay(i)` the node adds. */
function measure(truth: Coordinate, rng: Rng, delay: (i: number) => number = () => 0): RttObservation[] {
  return measurers.map((m, i) => ({ measurer: `m${i}`, coord: m, rttMs: predictRtt(truth, m) * uniform(rng, 0.9, 1.1) + delay(i) }));
}

describe('checkCoordinateClaim', () => {
  it('an honest claim is consistent', () => {
    const truth = c([10, -20], 2);
    const r = checkCoordinateClaim(truth, measure(truth, createRng(1)));
    expect(r.verdict).toBe('consistent');
    expect(r.measurers).toBe(16);
    expect(r.tooClose).toBe(0);
    expect(r.unexplainedViolations).toBe(0);
    expect(r.medianRelError).toBeLessThan(0.1);
    expect(r.netForceMs).toBeLessThan(5);
  });
  it('a node far from region R claiming to be in it is too close to R\'s measurers (an RTT cannot be deflated)', () => {
    const truth = c([-60, 0], 2);
    const r = checkCoordinateClaim(c([150, 0], 2), measure(truth, createRng(2)));
    expect(r.verdict).toBe('inconsistent');
    expect(r.reasons).toContain('too-close');
    expect(r.tooClose).toBeGreaterThanOrEqual(4); // all of R's measurers
    expect(r.netForceMs).toBeGreaterThan(30); // an honest claim's is under 5
  });
  it('a node that delays its replies to match a farther claim passes: it can only look farther from everyone (the limit)', () => {
    const truth = c([0, 0], 2);
    const claim = c([0, 400], 2);
    const obs = measurers.map((m, i) => ({ measurer: `m${i}`, coord: m, rttMs: predictRtt(claim, m) }));
    for (const [i, m] of measurers.entries()) expect(obs[i]!.rttMs).toBeGreaterThanOrEqual(predictRtt(truth, m)); // only inflation
    expect(checkCoordinateClaim(claim, obs).verdict).toBe('consistent');
  });
  it('replies delayed to some measurers and not to others close to them break the triangle inequality', () => {
    // Eight measurers within a few ms of each other (the members of one cell);
    // the node delays its replies to half of them by 60 ms.
    const cluster = Array.from({ length: 8 }, (_, i) => c([100 + 3 * Math.cos(i), 3 * Math.sin(i)]));
    const truth = c([0, 0], 2);
    const rng = createRng(3);
    const obs = cluster.map((m, i) => ({ measurer: `k${i}`, coord: m, rttMs: predictRtt(truth, m) * uniform(rng, 0.95, 1.05) + (i % 2 ? 60 : 0) }));
    const r = checkCoordinateClaim(truth, obs);
    expect(r.reasons).toContain('selective-delay');
    expect(r.triangleViolations).toBe(16); // every delayed/undelayed pair
    expect(r.trianglePairs).toBe(28);
    // The same delay to all of them breaks no triangle: it looks like a longer access link.
    const uniformDelay = cluster.map((m, i) => ({ measurer: `k${i}`, coord: m, rttMs: predictRtt(truth, m) + 60 }));
    expect(checkCoordinateClaim(truth, uniformDelay).triangleViolations).toBe(0);
  });
  it('a lying measurer cannot frame an honest node: the violations it causes are blamed on it', () => {
    // Measurer m12 (in region R) reports 300 ms where it measured ~135.
    const truth = c([10, -20], 2);
    const obs = measure(truth, createRng(12)).map((o) => (o.measurer === 'm12' ? { ...o, rttMs: 300 } : o));
    const r = checkCoordinateClaim(truth, obs);
    expect(r.triangleViolations).toBeGreaterThan(0);
    expect(r.outlierMeasurers).toEqual(['m12']);
    expect(r.unexplainedViolations).toBe(0);
    expect(r.tooClose).toBe(1); // one measurer is not enough
    expect(r.verdict).toBe('consistent');
  });
  it('needs three distinct measurers, keeps each one\'s lowest RTT, and does not judge an unsettled claim', () => {
    const truth = c([0, 0]);
    const few = measure(truth, createRng(4)).slice(0, 2);
    expect(checkCoordinateClaim(truth, [...few, ...few]).verdict).toBe('insufficient');
    const dup = [...measure(truth, createRng(5)), { measurer: 'm0', coord: measurers[0]!, rttMs: 1000 }];
    expect(checkCoordinateClaim(truth, dup).observations.find((o) => o.measurer === 'm0')!.rttMs).toBeLessThan(100);
    expect(checkCoordinateClaim(c([0, 0], 1, 0.9), measure(truth, createRng(6))).verdict).toBe('unsettled');
    expect(checkCoordinateClaim(c([Number.NaN, 0]), measure(truth, createRng(6))).verdict).toBe('inconsistent');
  });
  it('validates its options', () => {
    expect(() => plausibilityOptions({ deflationRatio: 2 })).toThrow(/deflationRatio/);
    expect(() => plausibilityOptions({ minMeasurers: 0 })).toThrow(/minMeasurers/);
  });
});

describe('measuredPosition', () => {
  it('places the node where its RTTs put it, not where it claims to be', () => {
    const truth = c([-60, 0], 2);
    const obs = measurers.map((m, i) => ({ measurer: `m${i}`, coord: m, rttMs: predictRtt(truth, m) }));
    const pos = measuredPosition(obs, { dimensions: 2, height: true }, createRng(7))!;
    expect(Math.hypot(pos.coord.vec[0]! + 60, pos.coord.vec[1]!)).toBeLessThan(5);
    // exact RTTs: the slack floor, plus the fitted height (distance it could stand in for)
    expect(pos.coord.height).toBeLessThan(5);
    expect(pos.uncertaintyMs).toBeCloseTo(10 + pos.coord.height, 9);
    expect(measuredPosition(obs.slice(0, 2), { dimensions: 2 }, createRng(7))).toBeNull();
  });
});

describe('cell names', () => {
  it('parse back to the cells announceCells makes, in 2 and 3 dimensions', () => {
    for (const vec of [[123.4, -567.8], [1, 2, 3], [-2047, 2047], [9999, -9999]]) {
      for (const cell of announceCells({ vec })) {
        const back = parseCellName(cell.name);
        expect(back?.name).toBe(cell.name);
        expect(back?.index).toEqual(cell.index);
        expect(back?.cid.toString()).toBe(cell.cid.toString());
      }
    }
  });
  it('rejects what is not a canonical cell name', () => {
    expect(parseCellName('volcrawl/cell/v1/2/8/zz')).toBeNull();
    expect(parseCellName('volcrawl/host/v1/example.org')).toBeNull();
    expect(parseCellName('volcrawl/cell/v1/2/2/00f')).toBeNull(); // padded beyond its width
    expect(parseCellName('volcrawl/cell/v1/2/2/1f')).toBeNull(); // bits above the width
    expect(parseCellName(cellAt({ vec: [5, 5] }, 2).name)).not.toBeNull();
  });
});

// A point in the middle third of its cell at every level in use: (x + 2048) / side
// has a fractional part of 0.664, 0.656, 0.625 and 0.5 at levels 2, 4, 6 and 8.
const MID = [-344, -344];

describe('justifiedCells', () => {
  const side8 = cellSide(8);
  it('is one cell per level in the middle of cells, and the neighbour too near an edge', () => {
    const middle = justifiedCells({ vec: MID });
    expect(middle).toHaveLength(4);
    expect(middle.map((x) => x.name).sort()).toEqual(announceCells({ vec: MID }).map((x) => x.name).sort());
    const nearEdge = justifiedCells({ vec: [MID[0]! - 0.4 * side8, MID[1]!] });
    expect(nearEdge).toHaveLength(5);
    expect(nearEdge.filter((x) => x.level === 8).map((x) => x.index)).toEqual([[105, 106], [106, 106]]);
  });
});

describe('checkAnnouncement', () => {
  const side8 = cellSide(8);
  const claimed = { vec: MID };
  const names = (vec: number[]): string[] => announceCells({ vec }).map((x) => x.name);
  it('accepts the cells a claimed coordinate gives, and an old cell kept within the hysteresis margin', () => {
    expect(checkAnnouncement(names(claimed.vec), claimed, null)).toEqual({ verdict: 'justified', problems: [], measured: false });
    const old = cellAt(claimed, 8);
    const upper = -2048 + (old.index[0]! + 1) * side8;
    const moved = { vec: [upper + 0.2 * side8, MID[1]!] };
    const others = announceCells(moved).filter((x) => x.level !== 8).map((x) => x.name);
    expect(checkAnnouncement([old.name, ...others], moved, null).verdict).toBe('justified');
    const tooFar = { vec: [upper + 0.3 * side8, MID[1]!] };
    expect(checkAnnouncement([old.name], tooFar, null).problems).toEqual([{ name: old.name, problem: 'far-from-claim', distanceMs: expect.closeTo(0.3 * side8, 9) }]);
  });
  it('rejects more cells than the coordinate justifies', () => {
    const extra = cellAt({ vec: [500, 500] }, 8).name;
    const r = checkAnnouncement([...names(claimed.vec), extra], claimed, null);
    expect(r.verdict).toBe('unjustified');
    expect(r.problems.map((p) => p.problem).sort()).toEqual(['duplicate-level', 'far-from-claim']);
    expect(checkAnnouncement([cellAt(claimed, 7).name], claimed, null).problems[0]!.problem).toBe('level-not-used');
    expect(checkAnnouncement([cellAt({ vec: [1, 2, 3] }, 8).name], claimed, null).problems[0]!.problem).toBe('wrong-dimensions');
    expect(checkAnnouncement(['nonsense'], claimed, null).problems[0]!.problem).toBe('not-a-cell');
  });
  it('rejects an announcement far from the announcer\'s measured position, though it matches its claim', () => {
    // The node is truly at (−60, 0) and claims (150, 0), announcing the cells there.
    const truth = c([-60, 0], 2);
    const claim = c([150, 0], 2);
    const obs = measure(truth, createRng(8));
    const pos = measuredPosition(obs, { dimensions: 2 }, createRng(9))!;
    const announced = names([150, 0]);
    const r = checkAnnouncement(announced, claim, pos);
    expect(r.measured).toBe(true);
    // The 16 and 64 ms cells are far from where the RTTs put it (210 ms away); a
    // 256 ms cell reaches within its margin (64 ms) plus the uncertainty of it.
    expect(r.problems.filter((p) => p.problem === 'far-from-measured').map((p) => parseCellName(p.name)!.level).sort()).toEqual([6, 8]);
    expect(r.verdict).toBe('unjustified');
    // An honest node at (150, 0) announcing the same cells passes.
    const honest = measuredPosition(measure(claim, createRng(10)), { dimensions: 2 }, createRng(11))!;
    expect(checkAnnouncement(announced, claim, honest).verdict).toBe('justified');
  });
  it('measures distance to a cell per axis, after clamping into the cube as cells.ts does', () => {
    const cell = cellAt({ vec: [0, 0] }, 8);
    expect(distanceToCell({ vec: [0, 0] }, cell)).toBe(0);
    expect(distanceToCell({ vec: [side8 + 3, side8 + 4] }, cell)).toBe(4);
    const edge = cellAt({ vec: [99999, 0] }, 8);
    expect(distanceToCell({ vec: [99999, 0] }, edge, DEFAULT_CELLS)).toBe(0);
  });
});
