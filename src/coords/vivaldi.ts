// Vivaldi network coordinates (Dabek, Cox, Kaashoek, Morris, SIGCOMM 2004) with
// the guards a live node needs. The update path allocates nothing: all maths
// runs on Float64Arrays preallocated per node.
import type { Rng } from '../rng.js';
import { normal } from '../rng.js';
import type { VivaldiOptions } from './options.js';
import { vivaldiOptions } from './options.js';

export interface Coordinate {
  /** Euclidean part, length = dimensions. */
  vec: Float64Array;
  /** Height in ms (0 when the model has no height). */
  height: number;
  /** Relative error estimate (the paper's e_i). */
  error: number;
}

/** Predicted RTT in ms: ‖a − b‖ + ha + hb. */
export function predictRtt(a: Coordinate, b: Coordinate): number {
  const d = a.vec.length;
  if (b.vec.length !== d) throw new RangeError(`predictRtt: dimension mismatch (${d} vs ${b.vec.length})`);
  return predictRttAt(a.vec, 0, a.height, b.vec, 0, b.height, d);
}

/** predictRtt for coordinates stored flat (the simulator keeps millions in
 * typed arrays): the d-vector of a at x[xi ..] with height ha, of b at y[yi ..]
 * with height hb. */
export function predictRttAt(x: ArrayLike<number>, xi: number, ha: number, y: ArrayLike<number>, yi: number, hb: number, d: number): number {
  let s = 0;
  for (let i = 0; i < d; i++) {
    const t = x[xi + i]! - y[yi + i]!;
    s += t * t;
  }
  return Math.sqrt(s) + ha + hb;
}

/** A coordinate at the origin with the options' initial height and error. */
export function originCoordinate(opts: VivaldiOptions): Coordinate {
  return {
    vec: new Float64Array(opts.dimensions),
    height: opts.height ? opts.initialHeightMs : 0,
    error: opts.initialError,
  };
}

export function cloneCoordinate(c: Coordinate): Coordinate {
  return { vec: Float64Array.from(c.vec), height: c.height, error: c.error };
}

export function isFiniteCoordinate(c: Coordinate): boolean {
  if (!Number.isFinite(c.height) || !Number.isFinite(c.error)) return false;
  const v = c.vec;
  for (let i = 0; i < v.length; i++) if (!Number.isFinite(v[i]!)) return false;
  return true;
}

/** Fills `out` with a uniformly random unit vector (normal deviates, normalised). */
export function randomUnitVector(rng: Rng, out: Float64Array): Float64Array {
  for (;;) {
    let s = 0;
    for (let i = 0; i < out.length; i++) {
      const g = normal(rng);
      out[i] = g;
      s += g * g;
    }
    if (s > 1e-20) {
      const inv = 1 / Math.sqrt(s);
      for (let i = 0; i < out.length; i++) out[i]! *= inv;
      return out;
    }
  }
}

interface FilterRing {
  buf: Float64Array;
  count: number;
  pos: number;
}

/** Euclidean distance under which two points count as coincident. */
const COINCIDENT = 1e-9;

export class VivaldiNode {
  readonly opts: VivaldiOptions;
  /** The node's current coordinate (mutated in place by update). */
  readonly coord: Coordinate;
  /** Accepted updates so far. */
  updates = 0;
  private readonly rng: Rng;
  private readonly diff: Float64Array;
  private readonly sortBuf: Float64Array;
  private readonly filters = new Map<string | number, FilterRing>();

  constructor(opts: Partial<VivaldiOptions> | VivaldiOptions, rng: Rng) {
    this.opts = vivaldiOptions(opts);
    this.rng = rng;
    this.coord = originCoordinate(this.opts);
    this.diff = new Float64Array(this.opts.dimensions);
    this.sortBuf = new Float64Array(Math.max(1, this.opts.latencyFilterSize));
  }

  /** Back to the origin with the initial height and error; filters kept. */
  reset(): void {
    this.coord.vec.fill(0);
    this.coord.height = this.opts.height ? this.opts.initialHeightMs : 0;
    this.coord.error = this.opts.initialError;
  }

  /** Forgets a peer's latency-filter history (e.g. when it leaves). */
  forgetPeer(peerKey: string | number): void {
    this.filters.delete(peerKey);
  }

  /** Predicted RTT from this node to `remote`, ms. */
  predict(remote: Coordinate): number {
    return predictRtt(this.coord, remote);
  }

  /** Median of the last `latencyFilterSize` samples for this peer (the new one included). */
  private filtered(peerKey: string | number, rtt: number): number {
    const k = this.opts.latencyFilterSize;
    let ring = this.filters.get(peerKey);
    if (ring === undefined) {
      if (this.filters.size >= this.opts.latencyFilterPeers) {
        const oldest = this.filters.keys().next();
        if (!oldest.done) this.filters.delete(oldest.value);
      }
      ring = { buf: new Float64Array(k), count: 0, pos: 0 };
      this.filters.set(peerKey, ring);
    }
    ring.buf[ring.pos] = rtt;
    ring.pos = ring.pos + 1 === k ? 0 : ring.pos + 1;
    if (ring.count < k) ring.count++;
    const n = ring.count;
    const s = this.sortBuf;
    for (let i = 0; i < n; i++) {
      const v = ring.buf[i]!;
      let j = i - 1;
      while (j >= 0 && s[j]! > v) {
        s[j + 1] = s[j]!;
        j--;
      }
      s[j + 1] = v;
    }
    const mid = n >> 1;
    return n % 2 === 1 ? s[mid]! : 0.5 * (s[mid - 1]! + s[mid]!);
  }

  /**
   * One Vivaldi step against a remote node's coordinate and a measured RTT (ms).
   * Returns false, leaving the state untouched, when a guard rejects the sample
   * (and false after a reset to the origin caused by a non-finite result).
   */
  update(remote: Coordinate, rttMs: number, peerKey?: string | number): boolean {
    const o = this.opts;
    const me = this.coord;
    const x = me.vec;
    const y = remote.vec;
    const dims = x.length;
    if (y.length !== dims) throw new RangeError(`VivaldiNode.update: remote has ${y.length} dimensions, expected ${dims}`);
    if (o.validateInput) {
      if (!(rttMs > 0) || !Number.isFinite(rttMs)) return false;
      if (!isFiniteCoordinate(remote) || remote.error < 0 || remote.height < 0) return false;
    }
    if (rttMs > o.maxRttMs) return false;
    let rtt = rttMs;
    if (o.latencyFilterSize > 0 && peerKey !== undefined) rtt = this.filtered(peerKey, rttMs);

    const diff = this.diff;
    let d2 = 0;
    for (let i = 0; i < dims; i++) {
      const t = x[i]! - y[i]!;
      diff[i] = t;
      d2 += t * t;
    }
    const dist = Math.sqrt(d2);
    const hsum = o.height ? me.height + remote.height : 0;
    const pred = dist + hsum;

    // Sample weight and error estimate.
    const ei = me.error;
    const ej = remote.error;
    const tot = ei + ej;
    const w = tot > 0 ? ei / tot : 0.5;
    const es = Math.abs(pred - rtt) / rtt;
    const cw = o.ce * w;
    let err = es * cw + ei * (1 - cw);
    if (err > o.maxError) err = o.maxError;

    // Move along the unit vector of (xi − xj) in the height-vector space:
    // u = (xi − xj, hi + hj) / (‖xi − xj‖ + hi + hj).
    const force = o.cc * w * (rtt - pred);
    if (dist > COINCIDENT) {
      const s = force / pred;
      for (let i = 0; i < dims; i++) x[i]! += s * diff[i]!;
      if (o.height) me.height += s * hsum;
    } else {
      // Coincident points: a random direction in the Euclidean part; the
      // height is left alone for this step.
      randomUnitVector(this.rng, diff);
      for (let i = 0; i < dims; i++) x[i]! += force * diff[i]!;
    }
    if (o.height) {
      if (me.height < o.minHeightMs) me.height = o.minHeightMs;
    }
    me.error = err;

    if (o.gravityRho > 0) {
      let n2 = 0;
      for (let i = 0; i < dims; i++) n2 += x[i]! * x[i]!;
      const norm = Math.sqrt(n2);
      if (norm > COINCIDENT) {
        const g = norm / o.gravityRho;
        const s = Math.min(1, (g * g) / norm);
        for (let i = 0; i < dims; i++) x[i]! -= s * x[i]!;
      }
    }

    if (o.resetOnNonFinite && !isFiniteCoordinate(me)) {
      this.reset();
      return false;
    }
    this.updates++;
    return true;
  }
}
