// Application-level coordinates (Ledlie, Gardner, Seltzer, "Network
// Coordinates in the Wild", NSDI 2007, §5): Vivaldi's own (system-level)
// coordinate keeps moving a few ms under measurement noise even when nothing
// in the network changed, and everything that ranks by coordinates (a router
// choosing the crawler nearest a host, a host placed from crawlers'
// coordinates, cell announcements) reads that jitter as movement. So a node
// probes with its system coordinate and *publishes* an application-level one
// that changes only when the system coordinate has really moved.
//
// Change detection, as in the paper's ENERGY heuristic: a start window holds
// the first `windowSize` system coordinates since the last change, a current
// window the latest `windowSize`; when the energy distance between the two
// (Székely & Rizzo) exceeds `thresholdMs`, the published coordinate becomes the
// centroid of the current window and the start window begins again; once that
// new start window is full, its centroid is published if it lies more than
// thresholdMs / 2 from the published one (the window the move was detected
// on straddles the move, so its centroid can lie partway). Points are
// the Euclidean part with the height as one more axis (a height change moves
// predicted RTTs as much as a move of the same size). Until the first start
// window is full the node publishes its system coordinate as it is: a joining
// node's coordinate is converging, and holding it back would only delay its
// first useful announcement.
//
// The published error is always the system coordinate's current error (it is
// the node's confidence, which peers weigh their Vivaldi samples by).
//
// Pure: no clock, no randomness; the caller passes each system coordinate.
import { mergeOptions, optionChecker } from '../options.js';
import type { Coordinate } from './vivaldi.js';

export interface AppCoordOptions {
  /** Publish a filtered coordinate; false publishes the system coordinate as it is. */
  enabled: boolean;
  /** System coordinates per window (start and current), 2..256. */
  windowSize: number;
  /** Energy distance between the windows above which the node has moved, ms (> 0). */
  thresholdMs: number;
}

/** Off by default: in 40-node pairs against main (session 11, docs/coords.md)
 * the filtered coordinate lagged Vivaldi's while the live network was still
 * converging (published error 0.222 against Vivaldi's 0.165) and routing was
 * worse, although the seeded offline tests favour it. 16 samples a window:
 * with the probing pace's fanout of 2 a round, a few rounds while a node's
 * samples disagree with its coordinate (a real move speeds probing up), a few
 * minutes once settled. 8 ms: a shift of about 4–6 ms of the whole window
 * (energy ≈ 2 × shift − the windows' spread), below the live coordinates'
 * error (≈ 15 % of RTTs of tens to hundreds of ms). */
export const DEFAULT_APP_COORD_OPTIONS: Readonly<AppCoordOptions> = Object.freeze({
  enabled: false,
  windowSize: 16,
  thresholdMs: 8,
});

const check = optionChecker('appCoordOptions');

/** Defaults merged with `partial`, validated; throws RangeError naming the bad option. */
export function appCoordOptions(partial: Partial<AppCoordOptions> = {}): AppCoordOptions {
  const o = mergeOptions('appCoordOptions', DEFAULT_APP_COORD_OPTIONS, partial);
  check(typeof o.enabled === 'boolean', `enabled must be a boolean, got ${String(o.enabled)}`);
  check(Number.isInteger(o.windowSize) && o.windowSize >= 2 && o.windowSize <= 256, `windowSize must be an integer in 2..256, got ${o.windowSize}`);
  check(Number.isFinite(o.thresholdMs) && o.thresholdMs > 0, `thresholdMs must be a finite number > 0, got ${o.thresholdMs}`);
  return o;
}

/** Energy distance between two point sets (rows of `dims` numbers, flat):
 * 2·E‖a−b‖ − E‖a−a′‖ − E‖b−b′‖, ≥ 0, 0 for identical sets. */
export function energyDistance(a: Float64Array, na: number, b: Float64Array, nb: number, dims: number): number {
  const mean = (x: Float64Array, nx: number, y: Float64Array, ny: number): number => {
    let s = 0;
    for (let i = 0; i < nx; i++) {
      for (let j = 0; j < ny; j++) {
        let d2 = 0;
        for (let k = 0; k < dims; k++) {
          const t = x[i * dims + k]! - y[j * dims + k]!;
          d2 += t * t;
        }
        s += Math.sqrt(d2);
      }
    }
    return s / (nx * ny);
  };
  return 2 * mean(a, na, b, nb) - mean(a, na, a, na) - mean(b, nb, b, nb);
}

/** Distance between two coordinates with the height as one more axis. */
function pointDistance(a: Coordinate, b: Coordinate): number {
  let s = (a.height - b.height) ** 2;
  for (let k = 0; k < a.vec.length; k++) s += (a.vec[k]! - b.vec[k]!) ** 2;
  return Math.sqrt(s);
}

export class AppCoordinate {
  readonly opts: AppCoordOptions;
  /** Times the published coordinate moved (after the first window filled). */
  changes = 0;
  /** System coordinates observed. */
  observed = 0;
  /** The `now` of the last change (or of the first full window), or null before it. */
  changedAt: number | null = null;
  private pub: Coordinate | null = null;
  private dims = 0;
  /** Start window: the first windowSize points since the last change. */
  private start = new Float64Array(0);
  private startN = 0;
  /** Current window: a ring of the latest windowSize points. */
  private cur = new Float64Array(0);
  private curN = 0;
  private curPos = 0;
  private sys: Coordinate | null = null;

  constructor(opts: Partial<AppCoordOptions> = {}) {
    this.opts = appCoordOptions(opts);
  }

  /** Whether the published coordinate is the filtered one (the first window filled). */
  get filtering(): boolean {
    return this.pub !== null;
  }

  /** The coordinate to publish: the system one until the first window is
   * full (or when disabled), then the filtered one with the system's error. */
  get coord(): Coordinate | null {
    if (this.sys === null) return null;
    if (this.pub === null) return this.sys;
    this.pub.error = this.sys.error;
    return this.pub;
  }

  /** Takes the node's current system coordinate; returns true when the
   * published coordinate moved. Non-finite coordinates are ignored. */
  observe(sys: Coordinate, now: number): boolean {
    const d = sys.vec.length + 1;
    if (!Number.isFinite(sys.height) || !Number.isFinite(sys.error) || !sys.vec.every(Number.isFinite)) return false;
    if (d !== this.dims) this.resize(d);
    this.sys = { vec: Float64Array.from(sys.vec), height: sys.height, error: sys.error };
    this.observed++;
    if (!this.opts.enabled) return false;
    const w = this.opts.windowSize;
    this.put(this.cur, this.curPos, sys);
    this.curPos = (this.curPos + 1) % w;
    if (this.curN < w) this.curN++;
    if (this.startN < w) {
      this.put(this.start, this.startN++, sys);
      if (this.startN < w) return false;
      // The first full window, or the first after a change: publish its
      // centroid. After a change this settles the published coordinate where
      // the node now is (the window the change was detected on straddled the
      // move, so its centroid lies partway).
      const centre = this.centroid(this.start, w);
      if (this.pub === null) {
        this.pub = centre;
        this.changedAt = now;
        return false;
      }
      // Only when it lies farther than a shift the energy test would call a
      // move (energy ≈ 2 × shift): jitter around the new place is not one.
      if (pointDistance(centre, this.pub) <= this.opts.thresholdMs / 2) return false;
      this.pub = centre;
      this.changedAt = now;
      this.changes++;
      return true;
    }
    if (this.curN < w || energyDistance(this.start, w, this.cur, w, d) <= this.opts.thresholdMs) return false;
    this.pub = this.centroid(this.cur, w);
    this.changes++;
    this.changedAt = now;
    this.startN = 0;
    this.curN = 0;
    this.curPos = 0;
    return true;
  }

  private resize(d: number): void {
    const w = this.opts.windowSize;
    this.dims = d;
    this.start = new Float64Array(w * d);
    this.cur = new Float64Array(w * d);
    this.startN = this.curN = this.curPos = 0;
    this.pub = null;
  }

  private put(buf: Float64Array, row: number, c: Coordinate): void {
    const d = this.dims;
    buf.set(c.vec, row * d);
    buf[row * d + d - 1] = c.height;
  }

  private centroid(buf: Float64Array, n: number): Coordinate {
    const d = this.dims;
    const vec = new Float64Array(d - 1);
    let height = 0;
    for (let i = 0; i < n; i++) {
      for (let k = 0; k < d - 1; k++) vec[k]! += buf[i * d + k]! / n;
      height += buf[i * d + d - 1]! / n;
    }
    return { vec, height, error: this.sys?.error ?? 0 };
  }
}
