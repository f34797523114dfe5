import { describe, expect, it } from 'vitest';
import { createRng } from '../../src/rng.js';
import { placeHost, predictRtt, type Coordinate } from '../../src/coords/index.js';

const c = (vec: number[], height = 0, error = 0.1): Coordinate => ({ vec: Float64Array.from(vec), height, error });

const landmarkPos = [
  [0, 0],
  [100, 0],
  [0, 100],
  [100, 100],
  [-80, 40],
  [50, -90],
  [-30, -60],
  [70, 160],
];

describe('placeHost', () => {
  it('recovers a known position from exact landmark RTTs (no height)', () => {
    const host = c([30, -20]);
    const lms = landmarkPos.map((p) => {
      const coord = c(p);
      return { coord, rttMs: predictRtt(host, coord) };
    });
    const got = placeHost(lms, { dimensions: 2, height: false }, createRng(1));
    expect(got.vec[0]).toBeCloseTo(30, 1);
    expect(got.vec[1]).toBeCloseTo(-20, 1);
    expect(got.height).toBe(0);
    for (const l of lms) expect(Math.abs(predictRtt(got, l.coord) - l.rttMs) / l.rttMs).toBeLessThan(0.005);
  });
  it('recovers position and height with the height model', () => {
    const host = c([-40, 75], 6);
    const lms = landmarkPos.map((p, i) => {
      const coord = c(p, 2 + (i % 3));
      return { coord, rttMs: predictRtt(host, coord) };
    });
    const got = placeHost(lms, { dimensions: 2, height: true }, createRng(2));
    expect(Math.hypot(got.vec[0]! + 40, got.vec[1]! - 75)).toBeLessThan(1);
    expect(got.height).toBeGreaterThan(5);
    expect(got.height).toBeLessThan(7);
    expect(got.error).toBeLessThan(0.05);
  });
  it('is deterministic given the rng and ignores unusable landmarks', () => {
    const host = c([10, 10]);
    const lms = landmarkPos.map((p) => ({ coord: c(p), rttMs: predictRtt(host, c(p)) }));
    const noisy = [...lms, { coord: c([5, 5]), rttMs: Number.NaN }, { coord: c([5, 5]), rttMs: -3 }, { coord: c([1, 2, 3]), rttMs: 10 }];
    const a = placeHost(noisy, { dimensions: 2, height: false }, createRng(3));
    const b = placeHost(noisy, { dimensions: 2, height: false }, createRng(3));
    expect(Array.from(a.vec)).toEqual(Array.from(b.vec));
    expect(a.vec[0]).toBeCloseTo(10, 1);
    expect(a.vec[1]).toBeCloseTo(10, 1);
  });
  it('throws when no landmark is usable', () => {
    expect(() => placeHost([], { dimensions: 2 }, createRng(1))).toThrow(RangeError);
    expect(() => placeHost([{ coord: c([0, 0]), rttMs: 0 }], { dimensions: 2 }, createRng(1))).toThrow(/no usable landmark/);
  });
});
