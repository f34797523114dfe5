// A small seeded PRNG (sfc32 seeded through splitmix32). Everything that needs
// randomness takes an Rng argument so that a seed reproduces an experiment.

export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
}

function splitmix32(state: number): () => number {
  let s = state >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
}

export class Sfc32 implements Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    if (!Number.isFinite(seed)) throw new RangeError(`seed must be a finite number, got ${seed}`);
    const mix = splitmix32(Math.floor(seed) ^ Math.floor(seed / 0x100000000));
    this.a = mix();
    this.b = mix();
    this.c = mix();
    this.d = 1;
    for (let i = 0; i < 12; i++) this.next();
  }

  next(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return (t >>> 0) / 4294967296;
  }
}

/** A 32-bit integer hash (murmur3's finaliser, a bijection on 32 bits):
 * pseudo-random, stable orders. */
export function hash32(x: number, seed: number): number {
  let z = (x ^ seed) >>> 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  z = Math.imul(z ^ (z >>> 16), 0x27d4eb2f);
  return (z ^ (z >>> 15)) >>> 0;
}

export function createRng(seed: number): Rng {
  return new Sfc32(seed);
}

/** Integer uniform in [0, n). */
export function randomInt(rng: Rng, n: number): number {
  return Math.floor(rng.next() * n);
}

/** Uniform in [lo, hi). */
export function uniform(rng: Rng, lo: number, hi: number): number {
  return lo + (hi - lo) * rng.next();
}

/** Normal deviate by Box–Muller; draws two uniforms per call to stay stateless. */
export function normal(rng: Rng, mean = 0, sd = 1): number {
  let u = rng.next();
  while (u <= Number.MIN_VALUE) u = rng.next();
  const v = rng.next();
  return mean + sd * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/** Exponential deviate with the given mean. */
export function exponential(rng: Rng, mean: number): number {
  return -mean * Math.log(1 - rng.next());
}

/** Derives an independent seed for a named sub-stream, so adding draws in one
 * part of an experiment does not shift the numbers of another. */
export function deriveSeed(seed: number, label: string): number {
  let h = (seed ^ 0x811c9dc5) >>> 0;
  for (let i = 0; i < label.length; i++) {
    h ^= label.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return splitmix32(h)();
}
