// The published (application-level) coordinate: real Vivaldi nodes on a
// synthetic network with noisy RTTs, seeded. A still node's published
// coordinate must stay put through Vivaldi's jitter; a node that truly moves
// must get a new one promptly.
import { describe, expect, it } from 'vitest';
import { AppCoordinate, appCoordOptions, DEFAULT_APP_COORD_OPTIONS, DEFAULT_PLAUSIBILITY, energyDistance, VivaldiNode, predictRtt, type Coordinate } from '../../src/coords/index.js';
import { createRng, exponential, type Rng } from '../../src/rng.js';

const c = (vec: number[], height = 1, error = 0.3): Coordinate => ({ vec: Float64Array.from(vec), height, error });
const dist = (a: Coordinate, b: Coordinate) => Math.hypot(...Array.from(a.vec, (x, k) => x - b.vec[k]!)) + Math.abs(a.height - b.height);

/** n nodes at random points of a 300 ms square with heights of 2–10 ms;
 * each step every node probes a random other one and gets the true RTT plus
 * queueing (exponential, mean 5 % of it), as a loaded network gives. */
class Network {
  readonly pos: number[][];
  readonly h: number[];
  readonly viv: VivaldiNode[];
  readonly app: AppCoordinate[];
  private readonly rng: Rng;
  samples = 0;

  constructor(readonly n: number, seed: number) {
    this.rng = createRng(seed);
    this.pos = Array.from({ length: n }, () => [this.rng.next() * 300, this.rng.next() * 300]);
    this.h = Array.from({ length: n }, () => 2 + this.rng.next() * 8);
    this.viv = Array.from({ length: n }, (_, i) => new VivaldiNode({}, createRng(seed * 1000 + i)));
    this.app = Array.from({ length: n }, () => new AppCoordinate({ enabled: true }));
  }

  rtt(a: number, b: number): number {
    return Math.hypot(this.pos[a]![0]! - this.pos[b]![0]!, this.pos[a]![1]! - this.pos[b]![1]!) + this.h[a]! + this.h[b]!;
  }

  step(): void {
    for (let a = 0; a < this.n; a++) {
      const b = (a + 1 + Math.floor(this.rng.next() * (this.n - 1))) % this.n;
      const r = this.rtt(a, b);
      this.viv[a]!.update(this.viv[b]!.coord, r * (1 + exponential(this.rng, 0.05)), b);
      this.app[a]!.observe(this.viv[a]!.coord, this.samples);
    }
    this.samples++;
  }

  /** Median relative error of node a's predictions, from coordinates `of`. */
  error(a: number, of: (i: number) => Coordinate): number {
    const e: number[] = [];
    for (let b = 0; b < this.n; b++) if (b !== a) e.push(Math.abs(predictRtt(of(a), of(b)) - this.rtt(a, b)) / this.rtt(a, b));
    return e.sort((x, y) => x - y)[e.length >> 1]!;
  }
}

const snapshot = (x: Coordinate): Coordinate => ({ vec: Float64Array.from(x.vec), height: x.height, error: x.error });

describe('application-level coordinates', () => {
  it('validates its options and names the bad one', () => {
    expect(appCoordOptions()).toEqual(DEFAULT_APP_COORD_OPTIONS);
    expect(() => appCoordOptions({ windowSize: 1 })).toThrow(/windowSize/);
    expect(() => appCoordOptions({ windowSize: 2.5 })).toThrow(/windowSize/);
    expect(() => appCoordOptions({ thresholdMs: 0 })).toThrow(/thresholdMs/);
    expect(() => appCoordOptions({ thresholdMs: Number.NaN })).toThrow(/thresholdMs/);
    expect(() => appCoordOptions({ bogus: 1 } as never)).toThrow(/unknown option 'bogus'/);
  });

  it('energy distance: 0 between identical sets, twice the gap between two far points', () => {
    const a = Float64Array.from([0, 0, 1, 1, 2, 0]);
    expect(energyDistance(a, 3, a, 3, 2)).toBeCloseTo(0, 12);
    expect(energyDistance(Float64Array.from([0, 0]), 1, Float64Array.from([3, 4]), 1, 2)).toBeCloseTo(10, 12);
  });

  it('publishes the system coordinate until its first window is full, then that window\'s centroid', () => {
    const app = new AppCoordinate({ enabled: true, windowSize: 4 });
    expect(app.coord).toBeNull();
    const seen = [c([1, 0]), c([3, 0]), c([1, 2]), c([3, 2], 3)];
    for (let i = 0; i < 3; i++) {
      app.observe(seen[i]!, i);
      expect(Array.from(app.coord!.vec)).toEqual(Array.from(seen[i]!.vec));
      expect(app.filtering).toBe(false);
    }
    app.observe(seen[3]!, 3);
    expect(app.filtering).toBe(true);
    expect(Array.from(app.coord!.vec)).toEqual([2, 1]);
    expect(app.coord!.height).toBeCloseTo(1.5, 12);
    expect(app.changedAt).toBe(3);
    // The published error is the system's current one.
    app.observe(c([2, 1], 1.5, 0.07), 4);
    expect(app.coord!.error).toBe(0.07);
    // Non-finite input is ignored; a different dimension starts over.
    expect(app.observe(c([Number.NaN, 0]), 5)).toBe(false);
    expect(app.observed).toBe(5);
    app.observe(c([7, 7, 7]), 6);
    expect(Array.from(app.coord!.vec)).toEqual([7, 7, 7]);
  });

  it('disabled, it publishes the system coordinate as it is', () => {
    const app = new AppCoordinate({ enabled: false, windowSize: 2 });
    for (let i = 0; i < 10; i++) app.observe(c([i, 0]), i);
    expect(Array.from(app.coord!.vec)).toEqual([9, 0]);
    expect(app.filtering).toBe(false);
    expect(app.changes).toBe(0);
  });

  it('a step of the whole window is a move; a window that jitters in place is not', () => {
    const rng = createRng(5);
    const app = new AppCoordinate({ enabled: true, windowSize: 16, thresholdMs: 8 });
    const jitter = (x: number, y: number) => c([x + 2 * (rng.next() - 0.5), y + 2 * (rng.next() - 0.5)]);
    let t = 0;
    for (; t < 200; t++) app.observe(jitter(100, 100), t);
    expect(app.changes).toBe(0);
    let movedAt = -1;
    for (; t < 260 && movedAt < 0; t++) if (app.observe(jitter(120, 100), t)) movedAt = t;
    // Detected within one window of the move, the published coordinate partway there…
    expect(movedAt).toBeGreaterThan(200);
    expect(movedAt - 200).toBeLessThanOrEqual(16);
    expect(app.coord!.vec[0]!).toBeGreaterThan(105);
    // …and once a window has filled at the new place, on it (not partway, where the straddling window put it).
    for (; t < 300; t++) app.observe(jitter(120, 100), t);
    expect(Math.abs(app.coord!.vec[0]! - 120)).toBeLessThan(1);
    expect(Math.abs(app.coord!.vec[1]! - 100)).toBeLessThan(1);
    expect(app.changes).toBeLessThanOrEqual(2);
  });

  it('on real Vivaldi with noisy RTTs: still nodes publish a steadier coordinate, no less accurate', () => {
    const net = new Network(40, 11);
    for (let s = 0; s < 1500; s++) net.step();
    const n = net.n;
    const changes0 = net.app.map((a) => a.changes);
    // Motion over 20 samples (what a router's copy and a fresh reading can
    // differ by), summed over 20 such spans.
    const moveSys = new Array<number>(n).fill(0);
    const movePub = new Array<number>(n).fill(0);
    for (let span = 0; span < 20; span++) {
      const sys0 = net.viv.map((v) => snapshot(v.coord));
      const pub0 = net.app.map((a) => snapshot(a.coord!));
      for (let s = 0; s < 20; s++) net.step();
      net.viv.forEach((v, i) => (moveSys[i]! += dist(v.coord, sys0[i]!) / 20));
      net.app.forEach((a, i) => (movePub[i]! += dist(a.coord!, pub0[i]!) / 20));
    }
    moveSys.sort((a, b) => a - b);
    movePub.sort((a, b) => a - b);
    // Vivaldi's own coordinates wander several ms in 20 samples; the published ones about half that or less.
    expect(moveSys[n >> 1]!).toBeGreaterThan(3);
    expect(movePub[n >> 1]!).toBeLessThan(0.7 * moveSys[n >> 1]!);
    // Changes are rare: at most one per ~20 samples for the median node.
    const changes = net.app.map((a, i) => a.changes - changes0[i]!).sort((a, b) => a - b);
    expect(changes[n >> 1]!).toBeLessThanOrEqual(20);
    // What overlay checks compare: a crawler's published coordinate against the RTTs measured to it, a pair
    // failing beyond relTolerance·rtt + slackMs. Filtered, no more pairs fail than with Vivaldi's own coordinate.
    const outside = (of: (i: number) => Coordinate) => {
      const { relTolerance, slackMs } = DEFAULT_PLAUSIBILITY;
      let bad = 0;
      for (let a = 0; a < n; a++)
        for (let b = 0; b < n; b++) if (a !== b && Math.abs(predictRtt(of(a), net.viv[b]!.coord) - net.rtt(a, b)) > relTolerance * net.rtt(a, b) + slackMs) bad++;
      return bad / (n * (n - 1));
    };
    expect(outside((i) => net.app[i]!.coord!)).toBeLessThanOrEqual(outside((i) => net.viv[i]!.coord) + 0.01);
    // The yardstick: prediction error against the true RTTs is no worse than Vivaldi's own (within 10 %).
    const errSys = Array.from({ length: n }, (_, a) => net.error(a, (i) => net.viv[i]!.coord)).sort((x, y) => x - y)[n >> 1]!;
    const errPub = Array.from({ length: n }, (_, a) => net.error(a, (i) => net.app[i]!.coord!)).sort((x, y) => x - y)[n >> 1]!;
    expect(errPub).toBeLessThan(1.1 * errSys + 0.005);
  });

  it('on real Vivaldi: a node that truly moves gets a new published coordinate promptly', () => {
    const net = new Network(30, 12);
    for (let s = 0; s < 1200; s++) net.step();
    const mover = 0;
    const before = snapshot(net.app[mover]!.coord!);
    const changes0 = net.app[mover]!.changes;
    // It moves 120 ms across the square: every RTT of its changes.
    net.pos[mover]![0]! += net.pos[mover]![0]! < 150 ? 120 : -120;
    let movedAfter = -1;
    for (let s = 0; s < 200; s++) {
      net.step();
      if (movedAfter < 0 && net.app[mover]!.changes > changes0) movedAfter = s + 1;
    }
    // Within two windows of samples the published coordinate has moved, and by the end it sits where Vivaldi does.
    expect(movedAfter).toBeGreaterThan(0);
    expect(movedAfter).toBeLessThanOrEqual(2 * DEFAULT_APP_COORD_OPTIONS.windowSize);
    expect(dist(net.app[mover]!.coord!, before)).toBeGreaterThan(60);
    expect(net.error(mover, (i) => net.app[i]!.coord!)).toBeLessThan(0.15);
  });
});
