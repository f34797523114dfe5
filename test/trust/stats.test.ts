import { describe, expect, it } from 'vitest';
import { betaCdf, betaQuantile, binomialTail, logGamma, poissonBinomialTail } from '../../src/manager/trust/stats.js';

/** C(n, k) p^k (1 − p)^(n − k) summed over k ≥ m, by hand. */
function binomSum(n: number, p: number, m: number): number {
  let s = 0;
  for (let k = m; k <= n; k++) {
    let c = 1;
    for (let i = 0; i < k; i++) c = (c * (n - i)) / (i + 1);
    s += c * p ** k * (1 - p) ** (n - k);
  }
  return s;
}

describe('logGamma', () => {
  it('matches Γ at integers and at 1/2', () => {
    expect(logGamma(5)).toBeCloseTo(Math.log(24), 12);
    expect(logGamma(1)).toBeCloseTo(0, 12);
    expect(logGamma(0.5)).toBeCloseTo(0.5 * Math.log(Math.PI), 12);
    expect(() => logGamma(0)).toThrow(RangeError);
  });
});

describe('betaCdf', () => {
  it('has the closed forms of small integer parameters', () => {
    for (const x of [0.05, 0.25, 0.5, 0.9]) {
      expect(betaCdf(x, 2, 1)).toBeCloseTo(x * x, 12); // Beta(2,1): x²
      expect(betaCdf(x, 1, 7)).toBeCloseTo(1 - (1 - x) ** 7, 12); // Beta(1,b): 1 − (1 − x)^b
      expect(betaCdf(x, 3, 2)).toBeCloseTo(4 * x ** 3 - 3 * x ** 4, 12);
    }
    expect(betaCdf(0.5, 4.5, 4.5)).toBeCloseTo(0.5, 12);
  });
  it('equals a binomial tail for integer parameters: I_x(a, b) = P(Bin(a + b − 1, x) ≥ a)', () => {
    expect(betaCdf(0.25, 4, 4)).toBeCloseTo(binomSum(7, 0.25, 4), 12);
    expect(betaCdf(0.1, 3, 40)).toBeCloseTo(binomSum(42, 0.1, 3), 12);
  });
  it('is 0 and 1 at the ends and rejects bad parameters', () => {
    expect(betaCdf(0, 2, 3)).toBe(0);
    expect(betaCdf(1, 2, 3)).toBe(1);
    expect(() => betaCdf(0.5, 0, 1)).toThrow(RangeError);
    expect(() => betaCdf(Number.NaN, 1, 1)).toThrow(RangeError);
  });
  it('has a quantile that inverts it', () => {
    const q = betaQuantile(0.95, 3.5, 12);
    expect(betaCdf(q, 3.5, 12)).toBeCloseTo(0.95, 9);
    expect(betaQuantile(0.5, 2, 1)).toBeCloseTo(Math.SQRT1_2, 9);
  });
});

describe('poissonBinomialTail', () => {
  it('is exact on small hand-computed cases', () => {
    expect(poissonBinomialTail([0.5, 0.5], 1)).toBeCloseTo(0.75, 12);
    expect(poissonBinomialTail([0.5, 0.5], 2)).toBeCloseTo(0.25, 12);
    // P(M ≥ 2) for p = 0.1, 0.2, 0.3: .1·.2·.7 + .1·.8·.3 + .9·.2·.3 + .1·.2·.3 = 0.098
    expect(poissonBinomialTail([0.1, 0.2, 0.3], 2)).toBeCloseTo(0.098, 12);
    expect(poissonBinomialTail([0.1, 0.2, 0.3], 0)).toBe(1);
    expect(poissonBinomialTail([0.1, 0.2, 0.3], 4)).toBe(0);
  });
  it('reduces to the binomial tail with equal probabilities', () => {
    expect(binomialTail(10, 0.5, 8)).toBeCloseTo(56 / 1024, 12);
    expect(binomialTail(10, 0.005, 5)).toBeCloseTo(binomSum(10, 0.005, 5), 18);
  });
  it('bounds a huge count with the Chernoff bound (conservative, never above 1)', () => {
    const ps = new Array<number>(3000).fill(0.5);
    expect(poissonBinomialTail(ps, 2500)).toBeLessThan(1e-100);
    expect(poissonBinomialTail(ps, 2001)).toBeGreaterThan(0);
    expect(poissonBinomialTail(new Array<number>(3000).fill(0.9), 2500)).toBe(1);
  });
  it('rejects probabilities outside [0, 1]', () => {
    expect(() => poissonBinomialTail([1.5], 1)).toThrow(RangeError);
    expect(() => poissonBinomialTail([0.5], 0.5)).toThrow(RangeError);
  });
});
