// Scoring an embedding: relative error |d̂ − d| / d over the valid pairs.
import type { Coordinate } from './vivaldi.js';
import { predictRtt } from './vivaldi.js';
import type { LatencyMatrix } from './latency.js';

export interface ErrorStats {
  median: number;
  p90: number;
  mean: number;
  /** Number of pairs scored. */
  pairs: number;
}

/** Quantile of an ascending-sorted array, linear interpolation (NaN if empty). */
export function quantileSorted(sorted: ArrayLike<number>, q: number): number {
  const n = sorted.length;
  if (n === 0) return NaN;
  const pos = (n - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.min(n - 1, lo + 1);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

/** Median / p90 / mean of a list of errors (the input is not modified). */
export function summarize(errors: ArrayLike<number>): ErrorStats {
  const s = Float64Array.from(errors).sort();
  let sum = 0;
  for (let i = 0; i < s.length; i++) sum += s[i]!;
  return { median: quantileSorted(s, 0.5), p90: quantileSorted(s, 0.9), mean: s.length ? sum / s.length : NaN, pairs: s.length };
}

/**
 * Relative errors of every valid unordered pair i < j among `nodes` (default:
 * all). Missing pairs (NaN or <= 0) are skipped.
 */
export function relativeErrors(coords: readonly Coordinate[], m: LatencyMatrix, nodes?: ArrayLike<number>): Float64Array {
  const { n, rtt } = m;
  if (coords.length !== n && nodes === undefined) {
    throw new RangeError(`relativeErrors: ${coords.length} coordinates for a ${n}-node matrix`);
  }
  const idx = nodes ?? Array.from({ length: n }, (_, i) => i);
  const k = idx.length;
  const out = new Float64Array((k * (k - 1)) / 2);
  let c = 0;
  for (let a = 0; a < k; a++) {
    const i = idx[a]!;
    const ci = coords[i]!;
    for (let b = a + 1; b < k; b++) {
      const j = idx[b]!;
      const d = rtt[i * n + j]!;
      if (!(d > 0)) continue;
      out[c++] = Math.abs(predictRtt(ci, coords[j]!) - d) / d;
    }
  }
  return out.subarray(0, c);
}

/** Median / p90 / mean relative error over the valid pairs among `nodes` (default all). */
export function embeddingError(coords: readonly Coordinate[], m: LatencyMatrix, nodes?: ArrayLike<number>): ErrorStats {
  return summarize(relativeErrors(coords, m, nodes));
}

/** Relative errors from node i to each node of `others` with a valid RTT. */
export function nodeRelativeErrors(coords: readonly Coordinate[], m: LatencyMatrix, i: number, others: ArrayLike<number>): Float64Array {
  const { n, rtt } = m;
  const out = new Float64Array(others.length);
  let c = 0;
  for (let b = 0; b < others.length; b++) {
    const j = others[b]!;
    if (j === i) continue;
    const d = rtt[i * n + j]!;
    if (!(d > 0)) continue;
    out[c++] = Math.abs(predictRtt(coords[i]!, coords[j]!) - d) / d;
  }
  return out.subarray(0, c);
}

/** Median relative error of node i against `others` (NaN if no valid pair). */
export function nodeMedianError(coords: readonly Coordinate[], m: LatencyMatrix, i: number, others: ArrayLike<number>): number {
  return quantileSorted(nodeRelativeErrors(coords, m, i, others).sort(), 0.5);
}
