import { describe, expect, it } from 'vitest';
import { embeddingError, nodeMedianError, quantileSorted, relativeErrors, summarize, type Coordinate, type LatencyMatrix } from '../../src/coords/index.js';

const c = (x: number): Coordinate => ({ vec: Float64Array.of(x), height: 0, error: 0 });

describe('relative error helpers', () => {
  // Three nodes at 0, 10, 30; true RTTs 10, 20 (pred 30 → error 0.5) and one pair missing.
  const m: LatencyMatrix = { n: 3, rtt: Float64Array.from([0, 10, NaN, 10, 0, 20, NaN, 20, 0]), source: 't' };
  const coords = [c(0), c(10), c(40)];
  it('scores only valid pairs', () => {
    const e = relativeErrors(coords, m);
    expect(Array.from(e)).toEqual([0, 0.5]);
    const s = embeddingError(coords, m);
    expect(s.pairs).toBe(2);
    expect(s.median).toBeCloseTo(0.25, 12);
    expect(s.mean).toBeCloseTo(0.25, 12);
  });
  it('quantiles interpolate linearly', () => {
    expect(quantileSorted([1, 2, 3, 4, 5], 0.5)).toBe(3);
    expect(quantileSorted([0, 10], 0.9)).toBeCloseTo(9, 12);
    expect(quantileSorted([], 0.5)).toBeNaN();
    expect(summarize([3, 1, 2]).median).toBe(2);
  });
  it('per-node median error', () => {
    expect(nodeMedianError(coords, m, 1, [0, 2])).toBeCloseTo(0.25, 12);
    expect(nodeMedianError(coords, m, 0, [2])).toBeNaN();
  });
});
