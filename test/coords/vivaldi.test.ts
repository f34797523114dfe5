import { describe, expect, it } from 'vitest';
import { createRng } from '../../src/rng.js';
import {
  DEFAULT_VIVALDI_OPTIONS,
  FAITHFUL_VIVALDI,
  VivaldiNode,
  embedMatrix,
  embeddingError,
  faithfulVivaldiOptions,
  predictRtt,
  vivaldiOptions,
  type Coordinate,
  type LatencyMatrix,
} from '../../src/coords/index.js';

function matrixFromPoints(points: number[][], heights?: number[]): LatencyMatrix {
  const n = points.length;
  const rtt = new Float64Array(n * n);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) {
      if (i === j) continue;
      let s = 0;
      for (let k = 0; k < points[i]!.length; k++) s += (points[i]![k]! - points[j]![k]!) ** 2;
      rtt[i * n + j] = Math.sqrt(s) + (heights ? heights[i]! + heights[j]! : 0);
    }
  return { n, rtt, source: 'synthetic' };
}

const coord = (vec: number[], height = 0, error = 0.5): Coordinate => ({ vec: Float64Array.from(vec), height, error });

function snapshot(c: Coordinate): { vec: number[]; height: number; error: number } {
  return { vec: Array.from(c.vec), height: c.height, error: c.error };
}

describe('options', () => {
  it('fills defaults and validates with clear RangeErrors', () => {
    const o = vivaldiOptions();
    expect(o).toEqual({ ...DEFAULT_VIVALDI_OPTIONS });
    expect(o.cc).toBe(0.25);
    expect(o.ce).toBe(0.25);
    expect(() => vivaldiOptions({ dimensions: 0 })).toThrow(/dimensions must be an integer in 1\.\.64, got 0/);
    expect(() => vivaldiOptions({ cc: 1.5 })).toThrow(RangeError);
    expect(() => vivaldiOptions({ ce: Number.NaN })).toThrow(/ce must be in/);
    expect(() => vivaldiOptions({ latencyFilterSize: -1 })).toThrow(/latencyFilterSize/);
    expect(() => vivaldiOptions({ gravityRho: -3 })).toThrow(/gravityRho/);
    expect(() => vivaldiOptions({ bogus: 1 } as never)).toThrow(/unknown option 'bogus'/);
    expect(() => vivaldiOptions({ height: true, initialHeightMs: 0, minHeightMs: 0 })).toThrow(/initialHeightMs must be > 0/);
  });
  it('faithful preset turns every guard off', () => {
    const f = faithfulVivaldiOptions({ dimensions: 3 });
    expect(f.dimensions).toBe(3);
    expect(f.maxError).toBe(Infinity);
    expect(f.maxRttMs).toBe(Infinity);
    expect(f.validateInput).toBe(false);
    expect(f.latencyFilterSize).toBe(0);
    expect(f.gravityRho).toBe(0);
    expect(f.resetOnNonFinite).toBe(false);
    expect(f.minHeightMs).toBe(0);
    expect(vivaldiOptions({ ...FAITHFUL_VIVALDI })).toEqual(faithfulVivaldiOptions());
  });
});

describe('predictRtt', () => {
  it('is the Euclidean distance plus both heights', () => {
    expect(predictRtt(coord([0, 0], 2), coord([3, 4], 5))).toBe(12);
  });
});

describe('synthetic recovery', () => {
  it('recovers nodes on a line', () => {
    const pts = Array.from({ length: 10 }, (_, i) => [i * 10 + 5]);
    const m = matrixFromPoints(pts);
    const c = embedMatrix(m, { options: faithfulVivaldiOptions({ dimensions: 2, height: false }), rounds: 1500, neighbours: 9, seed: 3 });
    const s = embeddingError(c, m);
    expect(s.mean).toBeLessThan(0.01);
    expect(s.p90).toBeLessThan(0.02);
  });
  it('recovers a 5×5 grid (mean relative error <= 0.01)', () => {
    const pts: number[][] = [];
    for (let i = 0; i < 5; i++) for (let j = 0; j < 5; j++) pts.push([i * 20, j * 20]);
    const m = matrixFromPoints(pts);
    const c = embedMatrix(m, { options: faithfulVivaldiOptions({ dimensions: 2, height: false }), rounds: 2000, neighbours: 24, seed: 7 });
    const s = embeddingError(c, m);
    expect(s.mean).toBeLessThanOrEqual(0.01);
    expect(s.p90).toBeLessThan(0.001);
  });
  it('recovers a circle with heights using the height model', () => {
    const n = 16;
    const pts = Array.from({ length: n }, (_, i) => [60 * Math.cos((2 * Math.PI * i) / n), 60 * Math.sin((2 * Math.PI * i) / n)]);
    const heights = Array.from({ length: n }, (_, i) => 5 + (i % 4) * 5);
    const m = matrixFromPoints(pts, heights);
    const c = embedMatrix(m, { options: faithfulVivaldiOptions({ dimensions: 2, height: true }), rounds: 3000, neighbours: 15, seed: 11 });
    const s = embeddingError(c, m);
    expect(s.median).toBeLessThan(0.001);
    expect(s.mean).toBeLessThan(0.01);
    // Without the height the access links cannot be represented as well.
    const flat = embedMatrix(m, { options: faithfulVivaldiOptions({ dimensions: 2, height: false }), rounds: 3000, neighbours: 15, seed: 11 });
    expect(embeddingError(flat, m).mean).toBeGreaterThan(s.mean * 2);
  });
  it('is deterministic: same seed, identical coordinates; another seed differs', () => {
    const pts = Array.from({ length: 12 }, (_, i) => [i * 7, (i * i) % 13]);
    const m = matrixFromPoints(pts);
    const run = (seed: number) => embedMatrix(m, { rounds: 200, neighbours: 5, seed }).map(snapshot);
    expect(run(5)).toEqual(run(5));
    expect(run(5)).not.toEqual(run(6));
  });
});

describe('update rule', () => {
  it('follows the adaptive timestep of the paper for one step', () => {
    const n = new VivaldiNode(faithfulVivaldiOptions({ dimensions: 2, height: false, initialError: 1 }), createRng(1));
    n.coord.vec.set([3, 0]);
    const remote = coord([0, 0], 0, 0.5);
    expect(n.update(remote, 5)).toBe(true);
    // w = 1/(1+0.5) = 2/3; es = |3-5|/5 = 0.4; e = 0.4*0.25*w + 1*(1-0.25*w) = 0.9
    expect(n.coord.error).toBeCloseTo(0.9, 12);
    // δ = 0.25*w = 1/6; x = 3 + δ*(5-3)*1
    expect(n.coord.vec[0]).toBeCloseTo(3 + 2 / 6, 12);
    expect(n.coord.vec[1]).toBeCloseTo(0, 12);
  });
  it('moves the height with the height part of the force', () => {
    const n = new VivaldiNode(faithfulVivaldiOptions({ dimensions: 1, height: true, initialError: 1, initialHeightMs: 1 }), createRng(1));
    n.coord.vec.set([3]);
    const remote = coord([0], 1, 1);
    // pred = 3 + 1 + 1 = 5; rtt 10; force = 0.125*5; u = (3, 2)/5
    expect(n.update(remote, 10)).toBe(true);
    expect(n.coord.vec[0]).toBeCloseTo(3 + 0.625 * 0.6, 12);
    expect(n.coord.height).toBeCloseTo(1 + 0.625 * 0.4, 12);
  });
  it('separates coincident points along a random unit vector from the rng', () => {
    const a = new VivaldiNode(vivaldiOptions({ dimensions: 3, height: false }), createRng(9));
    expect(a.update(coord([0, 0, 0], 0, 1.5), 40)).toBe(true);
    let norm = 0;
    for (const v of a.coord.vec) norm += v * v;
    expect(Math.sqrt(norm)).toBeGreaterThan(1);
    const b = new VivaldiNode(vivaldiOptions({ dimensions: 3, height: false }), createRng(9));
    b.update(coord([0, 0, 0], 0, 1.5), 40);
    expect(Array.from(b.coord.vec)).toEqual(Array.from(a.coord.vec));
  });
  it('throws on a dimension mismatch', () => {
    const n = new VivaldiNode({ dimensions: 2 }, createRng(1));
    expect(() => n.update(coord([1, 2, 3]), 10)).toThrow(RangeError);
  });
  it('does not allocate per update (coordinate arrays stay the same objects)', () => {
    const n = new VivaldiNode({ dimensions: 4, latencyFilterSize: 5 }, createRng(1));
    const vec = n.coord.vec;
    const remote = coord([10, 0, 0, 0], 1, 0.5);
    for (let i = 0; i < 100; i++) n.update(remote, 20 + (i % 7), 'peer');
    expect(n.coord.vec).toBe(vec);
  });
});

describe('guards', () => {
  const fresh = (o = {}) => {
    const n = new VivaldiNode({ dimensions: 2, latencyFilterSize: 0, ...o }, createRng(2));
    n.update(coord([30, 40], 2, 0.3), 60);
    return n;
  };
  it('rejects NaN, infinite, zero, negative and absurd RTTs leaving the state untouched', () => {
    const n = fresh();
    const before = snapshot(n.coord);
    for (const bad of [Number.NaN, Infinity, -Infinity, 0, -5, 10_001, 1e9]) {
      expect(n.update(coord([1, 1], 1, 0.2), bad)).toBe(false);
      expect(snapshot(n.coord)).toEqual(before);
    }
    expect(n.update(coord([1, 1], 1, 0.2), 10_000)).toBe(true);
  });
  it('rejects a non-finite remote coordinate', () => {
    const n = fresh();
    const before = snapshot(n.coord);
    expect(n.update(coord([Number.NaN, 0], 1, 0.2), 20)).toBe(false);
    expect(n.update(coord([0, 0], Infinity, 0.2), 20)).toBe(false);
    expect(snapshot(n.coord)).toEqual(before);
  });
  it('with validation off, a bad RTT goes through (and the reset guard then catches NaN)', () => {
    const n = fresh({ validateInput: false, resetOnNonFinite: true });
    expect(n.update(coord([1, 1], 1, 0.2), Number.NaN)).toBe(false);
    expect(snapshot(n.coord)).toEqual({ vec: [0, 0], height: n.opts.initialHeightMs, error: n.opts.initialError });
  });
  it('with every guard off, NaN poisons the state (faithful)', () => {
    const n = fresh(faithfulVivaldiOptions({ dimensions: 2 }));
    expect(n.update(coord([1, 1], 1, 0.2), Number.NaN)).toBe(true);
    expect(Number.isNaN(n.coord.vec[0]!)).toBe(true);
  });
  it('maxRttMs can be turned off', () => {
    const n = fresh({ maxRttMs: Infinity });
    expect(n.update(coord([1, 1], 1, 0.2), 50_000)).toBe(true);
  });
  it('caps the error estimate, and the cap can be turned off', () => {
    const capped = new VivaldiNode({ dimensions: 2, latencyFilterSize: 0, initialError: 1.5, maxError: 1.5 }, createRng(1));
    capped.coord.vec.set([1, 0]);
    capped.update(coord([0, 0], 0, 1.5), 1000); // es ≈ 1.0 → stays ≤ 1.5
    capped.coord.vec.set([5000, 0]);
    capped.update(coord([0, 0], 0, 1.5), 1); // es huge
    expect(capped.coord.error).toBe(1.5);
    const free = new VivaldiNode(faithfulVivaldiOptions({ dimensions: 2, height: false }), createRng(1));
    free.coord.vec.set([5000, 0]);
    free.update(coord([0, 0], 0, 1.5), 1);
    expect(free.coord.error).toBeGreaterThan(10);
  });
  it('keeps the height at or above the minimum, and at >= 0 when the minimum is off', () => {
    const n = new VivaldiNode({ dimensions: 2, latencyFilterSize: 0, gravityRho: 0, minHeightMs: 3, initialHeightMs: 5 }, createRng(1));
    n.coord.vec.set([100, 0]);
    for (let i = 0; i < 50; i++) n.update(coord([0, 0], 10, 0.1), 1);
    expect(n.coord.height).toBe(3);
    const f = new VivaldiNode(faithfulVivaldiOptions({ dimensions: 2 }), createRng(1));
    f.coord.vec.set([100, 0]);
    for (let i = 0; i < 50; i++) f.update(coord([0, 0], 10, 0.1), 1);
    expect(f.coord.height).toBe(0);
  });
  it('latency filter: a single outlier spike does not move the node; off, it does', () => {
    const run = (size: number) => {
      const n = new VivaldiNode({ dimensions: 2, height: false, latencyFilterSize: size, gravityRho: 0 }, createRng(4));
      const remote = coord([0, 0], 0, 0.05);
      n.coord.vec.set([50, 0]);
      n.coord.error = 0.05;
      for (let i = 0; i < 5; i++) n.update(remote, 50, 'p');
      const before = n.coord.vec[0]!;
      n.update(remote, 2000, 'p');
      return n.coord.vec[0]! - before;
    };
    expect(Math.abs(run(5))).toBeLessThan(1e-9);
    expect(run(0)).toBeGreaterThan(100);
  });
  it('latency filter keeps the history of each peer apart', () => {
    const n = new VivaldiNode({ dimensions: 1, height: false, latencyFilterSize: 3, latencyFilterPeers: 2, gravityRho: 0 }, createRng(4));
    n.coord.vec.set([10]);
    n.coord.error = 0.05;
    const remote = coord([0], 0, 0.05);
    n.update(remote, 10, 'a');
    n.update(remote, 10, 'a');
    // 'b' has no history: its spike is its own median.
    const x0 = n.coord.vec[0]!;
    n.update(remote, 500, 'b');
    expect(n.coord.vec[0]!).toBeGreaterThan(x0 + 10);
  });
  it('gravity pulls a far node toward the origin; off, it does not', () => {
    const pull = (rho: number) => {
      const n = new VivaldiNode({ dimensions: 2, height: false, latencyFilterSize: 0, gravityRho: rho }, createRng(4));
      n.coord.vec.set([3000, 0]);
      n.coord.error = 0.01;
      n.update(coord([3100, 0], 0, 1.5), 100); // a perfectly predicted sample
      return n.coord.vec[0]!;
    };
    expect(pull(150)).toBeCloseTo(3000 - (3000 / 150) ** 2, 6);
    expect(pull(0)).toBeCloseTo(3000, 9);
  });
});
