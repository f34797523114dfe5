// Host placement: a web host does not run Vivaldi, so it is placed from RTTs
// that several coordinate-holding nodes measured to it, their coordinates held
// fixed as landmarks. Method: weighted least squares on the relative error,
//   minimise Σ_l ((‖x − x_l‖ + h + h_l − rtt_l) / rtt_l)²,
// by gradient steps (spring relaxation against the landmarks only) from two
// deterministic starts; the better fit wins.
import type { Rng } from '../rng.js';
import type { VivaldiOptions } from './options.js';
import { vivaldiOptions } from './options.js';
import type { Coordinate } from './vivaldi.js';
import { isFiniteCoordinate, randomUnitVector } from './vivaldi.js';

export interface Landmark {
  coord: Coordinate;
  rttMs: number;
}

const ITERATIONS = 600;

interface Fit {
  vec: Float64Array;
  height: number;
  cost: number;
}

function relax(ls: Landmark[], o: VivaldiOptions, rng: Rng, start: Float64Array, h0: number): Fit {
  const dims = o.dimensions;
  const x = Float64Array.from(start);
  let h = h0;
  const grad = new Float64Array(dims);
  const dir = new Float64Array(dims);
  let wsum = 0;
  for (const l of ls) wsum += 1 / (l.rttMs * l.rttMs);
  for (let it = 0; it < ITERATIONS; it++) {
    const eta = 0.5 * (1 - it / ITERATIONS) + 0.02;
    grad.fill(0);
    let gh = 0;
    for (const l of ls) {
      const y = l.coord.vec;
      let d2 = 0;
      for (let i = 0; i < dims; i++) {
        const t = x[i]! - y[i]!;
        dir[i] = t;
        d2 += t * t;
      }
      let d = Math.sqrt(d2);
      if (d < 1e-9) {
        randomUnitVector(rng, dir);
        d = 1;
      }
      const pred = Math.sqrt(d2) + (o.height ? h + l.coord.height : 0);
      const wr = (l.rttMs - pred) / (l.rttMs * l.rttMs);
      for (let i = 0; i < dims; i++) grad[i]! += (wr * dir[i]!) / d;
      gh += wr;
    }
    for (let i = 0; i < dims; i++) x[i]! += (eta * grad[i]!) / wsum;
    // Half the step on the height: moving the point and the height together
    // along the same residual would overshoot.
    if (o.height) h = Math.max(o.minHeightMs, h + (0.5 * eta * gh) / wsum);
  }
  let cost = 0;
  for (const l of ls) {
    let d2 = 0;
    for (let i = 0; i < dims; i++) d2 += (x[i]! - l.coord.vec[i]!) ** 2;
    const r = (Math.sqrt(d2) + (o.height ? h + l.coord.height : 0) - l.rttMs) / l.rttMs;
    cost += r * r;
  }
  return { vec: x, height: h, cost };
}

/**
 * Places a host from landmark RTTs. Landmarks with invalid RTTs (non-finite,
 * <= 0, above maxRttMs) or coordinates (wrong dimension, non-finite) are
 * ignored; throws RangeError when none is usable. The returned error is the
 * median relative misfit to the landmarks (at least 0.01, capped at maxError).
 */
export function placeHost(landmarks: ReadonlyArray<Landmark>, opts: Partial<VivaldiOptions>, rng: Rng): Coordinate {
  const o = vivaldiOptions(opts);
  const dims = o.dimensions;
  const ls = landmarks.filter(
    (l) =>
      l.rttMs > 0 &&
      Number.isFinite(l.rttMs) &&
      l.rttMs <= o.maxRttMs &&
      l.coord.vec.length === dims &&
      isFiniteCoordinate(l.coord),
  );
  if (ls.length === 0) throw new RangeError('placeHost: no usable landmark (need a finite RTT > 0 and a coordinate of matching dimension)');

  // Start 1: centroid weighted by 1/rtt². Start 2: beside the nearest landmark.
  const centroid = new Float64Array(dims);
  let wsum = 0;
  let nearest = ls[0]!;
  for (const l of ls) {
    const w = 1 / (l.rttMs * l.rttMs);
    wsum += w;
    for (let i = 0; i < dims; i++) centroid[i]! += w * l.coord.vec[i]!;
    if (l.rttMs < nearest.rttMs) nearest = l;
  }
  for (let i = 0; i < dims; i++) centroid[i]! /= wsum;
  const h0 = o.height ? Math.max(o.minHeightMs, o.initialHeightMs) : 0;
  const jitter = randomUnitVector(rng, new Float64Array(dims));
  const near = new Float64Array(dims);
  for (let i = 0; i < dims; i++) near[i] = nearest.coord.vec[i]! + 0.5 * nearest.rttMs * jitter[i]!;
  const a = relax(ls, o, rng, centroid, h0);
  const b = relax(ls, o, rng, near, h0);
  const best = b.cost < a.cost ? b : a;

  const res = ls.map((l) => {
    let d2 = 0;
    for (let i = 0; i < dims; i++) d2 += (best.vec[i]! - l.coord.vec[i]!) ** 2;
    return Math.abs(Math.sqrt(d2) + (o.height ? best.height + l.coord.height : 0) - l.rttMs) / l.rttMs;
  });
  res.sort((p, q) => p - q);
  const med = res.length % 2 ? res[res.length >> 1]! : 0.5 * (res[res.length / 2 - 1]! + res[res.length / 2]!);
  return { vec: best.vec, height: o.height ? best.height : 0, error: Math.min(o.maxError, Math.max(0.01, med)) };
}
