import { describe, expect, it } from 'vitest';
import { createRng, deriveSeed, normal, randomInt } from '../src/rng.js';

describe('seeded PRNG', () => {
  it('repeats a sequence for the same seed and differs for another', () => {
    const a = createRng(42);
    const b = createRng(42);
    const c = createRng(43);
    const sa = Array.from({ length: 5 }, () => a.next());
    expect(Array.from({ length: 5 }, () => b.next())).toEqual(sa);
    expect(Array.from({ length: 5 }, () => c.next())).not.toEqual(sa);
  });

  it('draws uniforms in [0,1) with the right mean, and integers in range', () => {
    const rng = createRng(7);
    let sum = 0;
    let lo = 1;
    let hi = 0;
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 40_000; i++) {
      const x = rng.next();
      lo = Math.min(lo, x);
      hi = Math.max(hi, x);
      sum += x;
      counts[randomInt(rng, 4)]!++;
    }
    expect(lo).toBeGreaterThanOrEqual(0);
    expect(hi).toBeLessThan(1);
    expect(sum / 40_000).toBeCloseTo(0.5, 2);
    for (const n of counts) expect(n).toBeGreaterThan(9_500);
  });

  it('draws normals with the requested mean and deviation', () => {
    const rng = createRng(1);
    const xs = Array.from({ length: 20_000 }, () => normal(rng, 1000, 200));
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    const sd = Math.sqrt(xs.reduce((s, x) => s + (x - mean) ** 2, 0) / xs.length);
    expect(mean).toBeGreaterThan(995);
    expect(mean).toBeLessThan(1005);
    expect(sd).toBeGreaterThan(195);
    expect(sd).toBeLessThan(205);
  });

  it('derives distinct, stable sub-seeds by label', () => {
    expect(deriveSeed(1, 'hosts')).toBe(deriveSeed(1, 'hosts'));
    expect(deriveSeed(1, 'hosts')).not.toBe(deriveSeed(1, 'crawlers'));
    expect(deriveSeed(1, 'hosts')).not.toBe(deriveSeed(2, 'hosts'));
  });
});
