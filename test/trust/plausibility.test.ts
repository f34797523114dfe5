// Coordinate claims against measured RTTs (src/coords/plausibility.ts) and
// cell announcements against claims and measured positions (src/dht/plausibility.ts).
import { describe, expect, it } from 'vitest';
import { createRng, exponential, normal, uniform, type Rng } from '../../src/rng.js';
import { checkCoordinateClaim, measuredPosition, plausibilityOptions, predictRtt, type Coordinate, type RttObservation } from '../../src/coords/index.js';
import { announceCells, cellAt, cellSide, DEFAULT_CELLS } from '../../src/dht/cells.js';
import { checkAnnouncement, distanceToCell, justifiedCells, parseCellName } from '../../src/dht/plausibility.js';
import { ownMisfitsMs, ownUncertaintyMs } from '../../src/dht/overlay-check.js';
import type { PeerState } from '../../src/dht/peers.js';

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

describe('witnesses whose own coordinates have not settled', () => {
  // A world of 12 nodes: true positions, each node's Vivaldi coordinate off by
  // N(0, sigma) per axis (unsettled: error 1.2), RTTs the truth stretched by up
  // to 20 % plus event-loop lag. Node 0 is judged by witnesses 1–5, each
  // reporting its own uncertainty as the witness service computes it (its
  // median misfit against the RTTs it measured to the others).
  function world(seed: number, scale: 'loopback' | 'internet', sigma: number, loadLagMs?: number) {
    const rng = createRng(seed);
    const n = 12;
    const truth = Array.from({ length: n }, () =>
      scale === 'loopback' ? c([uniform(rng, 0, 0.3), uniform(rng, 0, 0.3)], 0.05) : c([uniform(rng, -100, 100), uniform(rng, -100, 100)], uniform(rng, 1, 10)),
    );
    const lag = loadLagMs ?? (scale === 'loopback' ? 2 : 5);
    const rtt = (i: number, j: number) => Math.min(...[0, 1].map(() => predictRtt(truth[i]!, truth[j]!) * uniform(rng, 1, 1.2) + exponential(rng, lag)));
    const coord = truth.map((t) => c([t.vec[0]! + normal(rng, 0, sigma), t.vec[1]! + normal(rng, 0, sigma)], t.height + Math.abs(normal(rng, 0, sigma / 4)), 1.2));
    const peerStates = (w: number): PeerState[] => coord.flatMap((co, i) => (i === w ? [] : [{ id: `n${i}`, coord: co, rttMs: rtt(w, i), seenAt: 0, crawler: true, down: false }]));
    const witnesses: RttObservation[] = [1, 2, 3, 4, 5].map((w) => ({ measurer: `n${w}`, coord: coord[w]!, rttMs: rtt(w, 0), ...ownMisfitsMs(coord[w]!, peerStates(w), 'n0')! }));
    const mine = coord[0]!;
    return { witnesses, honest: c([...mine.vec], mine.height, 0.3), liar: c([mine.vec[0]! + 300, mine.vec[1]!], mine.height, 0.2) };
  }
  const runs = 200;
  /** bothWays: witnesses report only their symmetric misfit (as before overshootMs). */
  const judged = (scale: 'loopback' | 'internet', sigma: number, loadLagMs?: number, bothWays = false) => {
    let honestFlagged = 0;
    let liarCaught = 0;
    for (let s = 1; s <= runs; s++) {
      const w = world(s * 7919 + sigma, scale, sigma, loadLagMs);
      const witnesses = bothWays ? w.witnesses.map(({ overshootMs: _o, ...rest }) => rest) : w.witnesses;
      if (checkCoordinateClaim(w.honest, witnesses).verdict === 'inconsistent') honestFlagged++;
      if (checkCoordinateClaim(w.liar, witnesses).verdict === 'inconsistent') liarCaught++;
    }
    return { honestFlagged, liarCaught };
  };

  it('never flag an honest claim, however noisy their coordinates, on a LAN or on the Internet', () => {
    for (const scale of ['loopback', 'internet'] as const) {
      for (const sigma of [2, 20, 50, 150]) expect(judged(scale, sigma).honestFlagged, `${scale}, sigma ${sigma}`).toBe(0);
    }
  });
  it('still tell the 1 ms they timed from the 300 ms a false claim predicts, while their own noise is well below it', () => {
    expect(judged('loopback', 2).liarCaught).toBe(runs);
    expect(judged('loopback', 20).liarCaught).toBeGreaterThanOrEqual(0.95 * runs);
    expect(judged('internet', 20).liarCaught).toBeGreaterThanOrEqual(0.75 * runs);
    // Witnesses hundreds of ms off cannot tell: no verdict against anyone.
    expect(judged('loopback', 150).liarCaught).toBeLessThan(0.5 * runs);
  });
  it('on a loaded machine still catch a claim that predicts RTTs too long: event-loop delay lengthens RTTs, never predictions', () => {
    // Load delays the RTTs every witness times (to its neighbours and to the
    // crawler on trial) by tens of ms; its coordinate is no worse than at rest.
    for (const lagMs of [30, 60, 100]) {
      expect(judged('loopback', 20, lagMs).honestFlagged, `lag ${lagMs}`).toBe(0);
      expect(judged('loopback', 20, lagMs).liarCaught, `lag ${lagMs}`).toBeGreaterThanOrEqual(0.95 * runs);
    }
    // Delays of hundreds of ms: the both-ways misfit has grown with them and
    // widens the bound the 300 ms lie is tested by (what the benchmark's loaded
    // runs showed: the faker judged "ok"); the overshoot has not.
    const directional = judged('loopback', 20, 300);
    const bothWays = judged('loopback', 20, 300, true);
    expect(bothWays.liarCaught).toBeLessThan(0.3 * runs);
    expect(directional.liarCaught).toBeGreaterThanOrEqual(0.7 * runs);
    // No honest claim flagged that the both-ways figure spared. (At these delays a few
    // honest claims are "too close" either way: see docs/trust.md, not checkable.)
    expect(directional.honestFlagged).toBeLessThanOrEqual(bothWays.honestFlagged);
    for (const sigma of [2, 20, 50, 150]) {
      const [directional, bothWays] = [judged('internet', sigma, 60), judged('internet', sigma, 60, true)];
      if (sigma <= 50) expect(directional.honestFlagged, `internet, sigma ${sigma}, loaded`).toBe(0);
      expect(directional.honestFlagged, `internet, sigma ${sigma}, loaded`).toBeLessThanOrEqual(bothWays.honestFlagged);
    }
  });
  it('cannot vouch for a claim when their own coordinates are off by more than the lie (no "ok" for a liar on a loaded machine)', () => {
    // As the benchmark's loaded runs saw it: RTTs of tens of ms, witnesses' misfits of hundreds.
    const at = [c([0, 0]), c([20, 10]), c([-15, 5]), c([5, -20])];
    const obs = (u: number): RttObservation[] => at.map((co, i) => ({ measurer: `w${i}`, coord: co, rttMs: 20 + 5 * i, uncertaintyMs: u, overshootMs: u }));
    const liar = c([300, 0]);
    const noisy = checkCoordinateClaim(liar, obs(400));
    expect(noisy.against).toBe(0);
    expect(noisy.vouchers).toBe(0);
    expect(noisy.verdict).toBe('insufficient'); // was 'consistent': overlay credit for a liar
    expect(checkCoordinateClaim(liar, obs(400), { maxVouchWidenMs: Infinity }).verdict).toBe('consistent');
    // Witnesses that can tell: the liar is caught, and an honest claim among them is vouched for.
    expect(checkCoordinateClaim(liar, obs(10)).verdict).toBe('inconsistent');
    const honest = checkCoordinateClaim(c([2, 0]), obs(10));
    expect(honest.verdict).toBe('consistent');
    expect(honest.vouchers).toBe(4);
    // Settled witnesses (no uncertainty) always vouch.
    expect(checkCoordinateClaim(c([2, 0]), at.map((co, i) => ({ measurer: `w${i}`, coord: co, rttMs: 20 + 5 * i }))).vouchers).toBe(4);
    expect(() => plausibilityOptions({ maxVouchWidenMs: Number.NaN })).toThrow(/maxVouchWidenMs/);
  });
  it('counts a witness whose uncertainty is unknown as a settled one, and ignores invalid uncertainties', () => {
    const w = world(1, 'loopback', 20);
    const bare = w.witnesses.map(({ uncertaintyMs: _u, overshootMs: _o, ...rest }) => rest);
    // without their uncertainty these noisy witnesses frame the honest claim: why the checker drops unsettled witnesses that report none
    expect(checkCoordinateClaim(w.honest, bare).verdict).toBe('inconsistent');
    expect(checkCoordinateClaim(w.honest, w.witnesses.map((x) => ({ ...x, uncertaintyMs: -1 }))).verdict).toBe('insufficient');
    expect(() => plausibilityOptions({ uncertaintyFactor: -1 })).toThrow(/uncertaintyFactor/);
  });
  it('a witness\'s uncertainty leaves out the crawler on trial and needs three others', () => {
    const me = c([0, 0], 0);
    const peer = (id: string, x: number, rttMs: number): PeerState => ({ id, coord: c([x, 0], 0), rttMs, seenAt: 0, crawler: true, down: false });
    const peers = [peer('a', 10, 10), peer('b', 20, 25), peer('d', 30, 20), peer('liar', 300, 1)];
    expect(ownUncertaintyMs(me, peers, 'liar')).toBe(5);
    expect(ownUncertaintyMs(me, peers, 'nobody')).toBe(7.5);
    expect(ownUncertaintyMs(me, peers.slice(0, 2), 'liar')).toBeUndefined();
    // predicted − measured: 0, −5, +10 (and the liar's +299 left out): only d is predicted too long
    expect(ownMisfitsMs(me, peers, 'liar')).toEqual({ uncertaintyMs: 5, overshootMs: 10 });
    expect(ownMisfitsMs(me, peers.slice(0, 2).concat(peer('e', 5, 40)), 'liar')).toEqual({ uncertaintyMs: 5, overshootMs: 0 });
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
