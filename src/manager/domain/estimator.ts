// Change-rate estimation (the paper leaves it to [12]): Cho & Garcia-Molina,
// "Estimating frequency of change" (ACM TOIT 2003).
//
// A channel is a set of pages, each modelled as a Poisson process of rate r
// (changes per time unit). Every successful recrawl observes, for each page that
// was known from the previous visit, whether its digest changed. A visit after a
// gap t sees a change with probability 1 − e^{−rt}, and several changes in one
// gap look like one, so the naive "changes seen / time" underestimates r.
//
//  - Regular visits (interval I, n page-visits, X of them saw a change):
//      r̂ = −log((n − X + 0.5) / (n + 0.5)) / I      (their bias-reduced estimator)
//  - Irregular visits: the maximum-likelihood estimate solves
//      Σ_changed t_i / (e^{r t_i} − 1) = Σ_unchanged t_j
//    We add half an unchanged observation at the mean interval to both (a
//    pseudo-count that keeps r̂ finite when every visit saw a change); with equal
//    intervals this reduces exactly to the regular estimator above.
//
// Pure: no I/O, no clock. Time unit: whatever the caller uses (the manager uses
// minutes, like src/recrawl).

/** What one successful recrawl observed of a channel. */
export interface VisitObservation {
  /** Time since the previous successful visit (> 0). */
  interval: number;
  /** Pages known from the previous visit and seen again (each a Bernoulli trial). */
  revisited: number;
  /** Of those, pages whose content digest changed. */
  changed: number;
}

/** Cho & Garcia-Molina's bias-reduced estimator for regular visits. */
export function estimateRegular(n: number, changed: number, interval: number): number {
  if (!(n >= 0) || !(changed >= 0) || changed > n) throw new RangeError('estimateRegular: need 0 ≤ changed ≤ n');
  if (!(interval > 0)) throw new RangeError('estimateRegular: interval must be > 0');
  return Math.log((n + 0.5) / (n - changed + 0.5)) / interval;
}

/** Maximum-likelihood estimate for irregular visits (with the half pseudo-count).
 * Returns 0 when no observation saw a change, null when there is no observation. */
export function estimateIrregular(obs: readonly VisitObservation[]): number | null {
  let unchangedTime = 0;
  let tSum = 0;
  let nSum = 0;
  let anyChanged = false;
  for (const o of obs) {
    if (!(o.interval > 0) || !(o.revisited >= 0) || !(o.changed >= 0) || o.changed > o.revisited) {
      throw new RangeError('estimateIrregular: need interval > 0 and 0 ≤ changed ≤ revisited');
    }
    if (o.revisited === 0) continue;
    unchangedTime += (o.revisited - o.changed) * o.interval;
    tSum += o.revisited * o.interval;
    nSum += o.revisited;
    if (o.changed > 0) anyChanged = true;
  }
  if (nSum === 0) return null;
  if (!anyChanged) return 0;
  const rhs = unchangedTime + 0.5 * (tSum / nSum);
  // f(r) = Σ c_i t_i / (e^{r t_i} − 1) is strictly decreasing from +∞ to 0: bisect on log r.
  const f = (r: number): number => {
    let s = 0;
    for (const o of obs) if (o.changed > 0) s += (o.changed * o.interval) / Math.expm1(r * o.interval);
    return s;
  };
  let lo = 1e-12;
  let hi = 1;
  while (f(hi) > rhs && hi < 1e12) hi *= 2;
  while (f(lo) < rhs && lo > 1e-300) lo /= 2;
  for (let i = 0; i < 200; i++) {
    const mid = Math.sqrt(lo * hi);
    if (f(mid) > rhs) lo = mid;
    else hi = mid;
    if (hi / lo < 1 + 1e-12) break;
  }
  return Math.sqrt(lo * hi);
}

/** True when all intervals are equal within 1 %: the regular estimator applies. */
export function isRegular(obs: readonly VisitObservation[]): boolean {
  const ts = obs.filter((o) => o.revisited > 0).map((o) => o.interval);
  if (ts.length === 0) return true;
  const mn = Math.min(...ts);
  const mx = Math.max(...ts);
  return mx <= mn * 1.01;
}

/** Estimated change rate of a channel from its visit history (per time unit);
 * null when nothing was revisited yet. */
export function estimateChangeRate(obs: readonly VisitObservation[]): number | null {
  const used = obs.filter((o) => o.revisited > 0);
  if (used.length === 0) return null;
  if (isRegular(used)) {
    let n = 0;
    let x = 0;
    let t = 0;
    for (const o of used) {
      n += o.revisited;
      x += o.changed;
      t += o.interval * o.revisited;
    }
    return estimateRegular(n, x, t / n);
  }
  return estimateIrregular(used);
}

export interface GroupingOptions {
  /** Visits with at least one revisited page needed before a channel may move. */
  minVisits: number;
  /** Hysteresis factor h > 1: the estimate must lie beyond a band edge × h (or ÷ h) to move. */
  hysteresis: number;
  /** Change interval assumed when no change was ever seen: this many × the slowest group's interval. */
  noChangeFactor: number;
}

export const DEFAULT_GROUPING: Readonly<GroupingOptions> = Object.freeze({ minVisits: 3, hysteresis: 1.25, noChangeFactor: 2 });

/** Band edges between groups: geometric midpoints of adjacent initial intervals
 * (group 0 = shortest interval = highest priority). edges[g] separates g and g+1. */
export function groupEdges(initialIntervals: readonly number[]): number[] {
  const out: number[] = [];
  for (let g = 0; g + 1 < initialIntervals.length; g++) out.push(Math.sqrt(initialIntervals[g]! * initialIntervals[g + 1]!));
  return out;
}

/** The group whose band holds `changeInterval`, without hysteresis. */
export function nearestGroup(changeInterval: number, initialIntervals: readonly number[]): number {
  const edges = groupEdges(initialIntervals);
  let g = 0;
  while (g < edges.length && changeInterval > edges[g]!) g++;
  return g;
}

/**
 * The group a channel should be in, given its current group and estimated change
 * interval. It moves only with enough evidence (minVisits) and only when the
 * estimate is clearly outside the current band (beyond the edge by the
 * hysteresis factor), so an estimate wobbling around an edge does not flap.
 */
export function chooseGroup(
  current: number,
  changeInterval: number,
  visits: number,
  initialIntervals: readonly number[],
  opts: GroupingOptions = DEFAULT_GROUPING,
): number {
  if (visits < opts.minVisits) return current;
  const edges = groupEdges(initialIntervals);
  const lowEdge = current > 0 ? edges[current - 1]! : 0; // faster than this → move up (towards 0)
  const highEdge = current < edges.length ? edges[current]! : Infinity; // slower than this → move down
  if (changeInterval * opts.hysteresis < lowEdge || changeInterval > highEdge * opts.hysteresis) {
    return nearestGroup(changeInterval, initialIntervals);
  }
  return current;
}

/** Change interval (1 / rate) for src/recrawl's ChannelRecord: finite and > 0. */
export function changeIntervalOf(rate: number | null, fallback: number, initialIntervals: readonly number[], opts: GroupingOptions = DEFAULT_GROUPING): number {
  const slowest = initialIntervals[initialIntervals.length - 1]! * opts.noChangeFactor;
  if (rate === null) return fallback;
  if (!(rate > 0)) return slowest;
  return Math.min(1 / rate, slowest);
}
