// The statistics the trust decisions rest on: the Beta distribution (the
// reputation posterior) and the tail of a sum of independent Bernoulli trials
// with different probabilities (how many pages an honest pair of crawls may
// legitimately see differ). Pure numerics, no dependencies.

const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
  12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];

/** ln Γ(x) for x > 0 (Lanczos, g = 7; relative error ~1e-15). */
export function logGamma(x: number): number {
  if (!(x > 0)) throw new RangeError(`logGamma: x must be > 0, got ${x}`);
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const z = x - 1;
  let a = LANCZOS[0]!;
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += LANCZOS[i]! / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

/** Continued fraction of the incomplete beta function (modified Lentz). */
function betaContinuedFraction(x: number, a: number, b: number): number {
  const tiny = 1e-300;
  const qab = a + b;
  const qap = a + 1;
  const qam = a - 1;
  let c = 1;
  let d = 1 - (qab * x) / qap;
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 1000; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (qab + m) * x) / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < 1e-15) break;
  }
  return h;
}

/** CDF of Beta(a, b) at x: the regularised incomplete beta function I_x(a, b). */
export function betaCdf(x: number, a: number, b: number): number {
  if (!(a > 0) || !(b > 0) || !Number.isFinite(a) || !Number.isFinite(b)) {
    throw new RangeError(`betaCdf: a and b must be finite and > 0, got ${a}, ${b}`);
  }
  if (Number.isNaN(x)) throw new RangeError('betaCdf: x is NaN');
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const lnFront = logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log1p(-x);
  const front = Math.exp(lnFront);
  // The continued fraction converges fast for x < (a + 1) / (a + b + 2); use the symmetry otherwise.
  if (x < (a + 1) / (a + b + 2)) return Math.min(1, Math.max(0, (front * betaContinuedFraction(x, a, b)) / a));
  return Math.min(1, Math.max(0, 1 - (front * betaContinuedFraction(1 - x, b, a)) / b));
}

/** Quantile of Beta(a, b) (bisection on the CDF; 60 halvings ≈ 1e-18 of the unit interval). */
export function betaQuantile(p: number, a: number, b: number): number {
  if (!(p >= 0 && p <= 1)) throw new RangeError(`betaQuantile: p must be in [0, 1], got ${p}`);
  let lo = 0;
  let hi = 1;
  for (let i = 0; i < 60; i++) {
    const mid = 0.5 * (lo + hi);
    if (betaCdf(mid, a, b) < p) lo = mid;
    else hi = mid;
  }
  return 0.5 * (lo + hi);
}

/** Beyond this many successes the exact sum is replaced by the Chernoff bound. */
const EXACT_TAIL_LIMIT = 2000;

/**
 * P(M ≥ m) where M is the number of successes among independent trials with
 * probabilities `ps` (the Poisson-binomial distribution). Exact by dynamic
 * programming over 0..m−1 successes (O(n·m)); for m above 2000 the Chernoff
 * bound exp(−μ)(eμ/m)^m, which over-states the tail (conservative for a test
 * that accuses when the tail is small).
 */
export function poissonBinomialTail(ps: readonly number[], m: number): number {
  if (!(m >= 0) || !Number.isInteger(m)) throw new RangeError(`poissonBinomialTail: m must be an integer >= 0, got ${m}`);
  if (m === 0) return 1;
  if (m > ps.length) return 0;
  for (const p of ps) if (!(p >= 0 && p <= 1)) throw new RangeError(`poissonBinomialTail: probability out of [0, 1]: ${p}`);
  if (m > EXACT_TAIL_LIMIT) {
    let mu = 0;
    for (const p of ps) mu += p;
    if (m <= mu) return 1;
    return Math.min(1, Math.exp(-mu + m * (1 + Math.log(mu / m))));
  }
  // below[k] = P(exactly k successes so far) for k < m; `atLeast` absorbs the
  // rest, so a tiny tail is summed directly, not found as 1 − (almost 1).
  const below = new Float64Array(m);
  below[0] = 1;
  let atLeast = 0;
  for (const p of ps) {
    const q = 1 - p;
    atLeast += below[m - 1]! * p;
    for (let k = m - 1; k >= 1; k--) below[k] = below[k]! * q + below[k - 1]! * p;
    below[0] = below[0]! * q;
  }
  return Math.min(1, Math.max(0, atLeast));
}

/** P(X ≥ k) for X ~ Binomial(n, p). */
export function binomialTail(n: number, p: number, k: number): number {
  if (!(Number.isInteger(n) && n >= 0)) throw new RangeError(`binomialTail: n must be an integer >= 0, got ${n}`);
  return poissonBinomialTail(new Array<number>(n).fill(p), k);
}
