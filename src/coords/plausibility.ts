// Is a node's claimed coordinate consistent with the RTTs others measured to it?
//
// A node attracts the tasks for the hosts near its coordinate, so a node that
// wants a region's hosts claims a coordinate there. What it cannot do is
// answer a probe before the probe reaches it: a measured RTT can be inflated
// (by holding replies) but not deflated below the path's propagation delay —
// provided the measurer times the raw round trip (request written → reply
// read) and does not subtract a turnaround the node itself reports. The checks,
// after the secure-coordinate literature:
//
//  - Votes (Veracity, Sherr, Blaze & Loo, USENIX ATC 2009: each measurer of a
//    verification set votes on whether the published coordinate predicts its
//    measured RTT within an error bound; the coordinate is rejected when too
//    many vote against): a measurer votes against when |predicted − measured|
//    exceeds relTolerance·measured + slackMs.
//  - Too close (the physical bound): a claim that predicts an RTT well below
//    what a measurer timed puts the node nearer that measurer than physics
//    allows. An honest node's prediction errs both ways; a node faking
//    closeness to a region errs this way towards every measurer in it.
//  - Selective delay (the triangle inequality): for two measurers j, k at
//    distance d_jk, |r_j − r_k| ≤ d_jk on real paths; a node that delays its
//    replies to some measurers (to drag its fitted position elsewhere) breaks
//    it for many pairs. A measurer that lies (about its RTT or its own
//    coordinate) breaks it too, for the pairs it is in: the violations that
//    removing a few measurers explains (at most a quarter of them, greedily,
//    the one in most violating pairs first) are blamed on those measurers,
//    reported as `outlierMeasurers`, and not on the node.
//  - Net force (Newton, Zage & Nita-Rotaru, ICDCS 2012, which checks Vivaldi
//    updates against Newton's laws: a settled system is in equilibrium, and
//    an outlying force is suspect): the mean spring force the measurements
//    exert on the claimed coordinate, (1/n)·Σ (r_j − p_j)·u_j. At the node's
//    true position it is near zero; its length says how far the claim sits
//    from where the RTTs would pull it. Reported, not voted on: with few
//    measurers on one side it is a weak statistic.
//
// Measurers whose own coordinate is uncertain (a new node, a loaded one, a LAN
// where sub-millisecond RTTs keep Vivaldi's relative error at its cap) vote
// with every bound widened by a multiple of their uncertainty in ms (their
// median misfit against their neighbours' RTTs): a weak landmark can still
// tell 1 ms from 300 ms, and a landmark that is far off contributes nothing.
//
// What this cannot check, and docs/trust.md repeats: a node that delays every
// reply by the same amount looks like a node with a longer access link (a
// bigger height) — it can only look farther from everyone, which costs it
// tasks; a claim is tested only where measurers are (ask the nodes already in
// the claimed cell to probe the claimant: those are the ones a false
// closeness contradicts); measurers that collude with the node can report
// any RTT; and a measurer's own coordinate is itself a claim.
//
// Pure: no I/O, no clock; placing from RTTs takes an injected Rng.
import type { Rng } from '../rng.js';
import type { VivaldiOptions } from './options.js';
import { placeHost } from './place.js';
import type { Coordinate } from './vivaldi.js';
import { isFiniteCoordinate, predictRtt } from './vivaldi.js';
import { mergeOptions, optionChecker } from '../options.js';

export interface RttObservation {
  /** Who measured; several observations from one measurer count once (its lowest RTT). */
  measurer: string;
  /** The measurer's coordinate when it measured. */
  coord: Coordinate;
  /** Raw round trip the measurer timed to the node, ms (the minimum of its probes). */
  rttMs: number;
  /** How far the measurer's own coordinate may be off, ms (its median misfit
   * against the RTTs it measured to its neighbours). Absent or 0: a settled
   * landmark, judged by the bounds alone. A measurer whose coordinate has not
   * settled still votes, but every bound is widened by uncertaintyFactor × this:
   * on loopback a witness with a coordinate tens of ms off still knows that
   * the 1 ms it timed is not the 300 ms a claim predicts. */
  uncertaintyMs?: number;
  /** How much the measurer's coordinate predicts RTTs too long, ms (its median
   * overshoot): widens, in place of uncertaintyMs, the one bound a load-delayed
   * RTT cannot trip — a claim predicting a longer RTT than measured. Absent:
   * uncertaintyMs is used both ways. */
  overshootMs?: number;
}

export interface PlausibilityOptions {
  /** A prediction within relTolerance·rtt + slackMs of the measured RTT is consistent. */
  relTolerance: number;
  slackMs: number;
  /** A prediction below deflationRatio·rtt − slackMs is "too close". */
  deflationRatio: number;
  /** Distinct measurers needed for a verdict. */
  minMeasurers: number;
  /** Inconsistent when more than this fraction of measurers vote against. */
  maxAgainstFraction: number;
  /** Inconsistent when at least this many measurers find the claim too close. */
  minTooClose: number;
  /** Triangle bound: |r_j − r_k| ≤ (1 + triangleTolerance)·d_jk + slackMs. */
  triangleTolerance: number;
  /** Inconsistent when, after setting aside up to a quarter of the measurers
   * as outliers, more than this fraction of the remaining pairs break the bound. */
  maxTriangleFraction: number;
  /** A claim with a larger error estimate is unsettled: no verdict (and it should not be announced). */
  maxClaimError: number;
  /** Each bound is widened by this many times a measurer's own uncertaintyMs
   * (its median misfit: an honest node's misfit exceeds 3× the median rarely). */
  uncertaintyFactor: number;
  /** A measurer vouches for a claim (counts towards "consistent") only when its
   * bounds are widened by at most this, ms: one whose own coordinate is
   * further off cannot tell the claim from a lie of that size. */
  maxVouchWidenMs: number;
}

export const DEFAULT_PLAUSIBILITY: Readonly<PlausibilityOptions> = Object.freeze({
  relTolerance: 0.5,
  slackMs: 10,
  deflationRatio: 0.6,
  minMeasurers: 3,
  maxAgainstFraction: 0.5,
  minTooClose: 2,
  triangleTolerance: 0.5,
  maxTriangleFraction: 0.1,
  maxClaimError: 0.5,
  uncertaintyFactor: 3,
  maxVouchWidenMs: 150,
});

/** Defaults merged with `partial`, validated; throws RangeError naming the bad option. */
export function plausibilityOptions(partial: Partial<PlausibilityOptions> = {}): PlausibilityOptions {
  const o = mergeOptions('plausibilityOptions', DEFAULT_PLAUSIBILITY, partial);
  const check = optionChecker('plausibilityOptions');
  check(Number.isFinite(o.relTolerance) && o.relTolerance >= 0, `relTolerance must be >= 0, got ${o.relTolerance}`);
  check(Number.isFinite(o.slackMs) && o.slackMs >= 0, `slackMs must be >= 0, got ${o.slackMs}`);
  check(Number.isFinite(o.deflationRatio) && o.deflationRatio > 0 && o.deflationRatio <= 1, `deflationRatio must be in (0, 1], got ${o.deflationRatio}`);
  check(Number.isInteger(o.minMeasurers) && o.minMeasurers >= 1, `minMeasurers must be an integer >= 1, got ${o.minMeasurers}`);
  check(Number.isFinite(o.maxAgainstFraction) && o.maxAgainstFraction >= 0 && o.maxAgainstFraction < 1, `maxAgainstFraction must be in [0, 1), got ${o.maxAgainstFraction}`);
  check(Number.isInteger(o.minTooClose) && o.minTooClose >= 1, `minTooClose must be an integer >= 1, got ${o.minTooClose}`);
  check(Number.isFinite(o.triangleTolerance) && o.triangleTolerance >= 0, `triangleTolerance must be >= 0, got ${o.triangleTolerance}`);
  check(Number.isFinite(o.maxTriangleFraction) && o.maxTriangleFraction >= 0 && o.maxTriangleFraction < 1, `maxTriangleFraction must be in [0, 1), got ${o.maxTriangleFraction}`);
  check(!Number.isNaN(o.maxClaimError) && o.maxClaimError > 0, `maxClaimError must be > 0, got ${o.maxClaimError}`);
  check(Number.isFinite(o.uncertaintyFactor) && o.uncertaintyFactor >= 0, `uncertaintyFactor must be >= 0, got ${o.uncertaintyFactor}`);
  check(o.maxVouchWidenMs >= 0, `maxVouchWidenMs must be >= 0, got ${o.maxVouchWidenMs}`);
  return o;
}

export type ClaimReason = 'votes' | 'too-close' | 'selective-delay';

export interface ObservationCheck {
  measurer: string;
  rttMs: number;
  predictedMs: number;
  /** (predicted − measured) / measured. */
  relError: number;
  against: boolean;
  tooClose: boolean;
}

export interface ClaimCheck {
  verdict: 'consistent' | 'inconsistent' | 'insufficient' | 'unsettled';
  reasons: ClaimReason[];
  measurers: number;
  against: number;
  tooClose: number;
  /** Measurers not against whose bounds are narrow enough to vouch for the claim (maxVouchWidenMs). */
  vouchers: number;
  /** Measurer pairs checked and those breaking the triangle bound. */
  trianglePairs: number;
  triangleViolations: number;
  /** Measurers set aside because the violations they are in explain the others (suspect measurers). */
  outlierMeasurers: string[];
  /** Violations left once they are set aside. */
  unexplainedViolations: number;
  /** Median |relative error| of the claim's predictions. */
  medianRelError: number;
  /** Length of the mean spring force on the claim, ms. */
  netForceMs: number;
  observations: ObservationCheck[];
}

/** One observation per measurer (its lowest RTT), invalid ones dropped. */
export function distinctObservations(obs: readonly RttObservation[], dims: number): RttObservation[] {
  const best = new Map<string, RttObservation>();
  for (const o of obs) {
    if (!(o.rttMs > 0) || !Number.isFinite(o.rttMs) || o.coord.vec.length !== dims || !isFiniteCoordinate(o.coord)) continue;
    if (o.uncertaintyMs !== undefined && !(o.uncertaintyMs >= 0 && Number.isFinite(o.uncertaintyMs))) continue;
    if (o.overshootMs !== undefined && !(o.overshootMs >= 0 && Number.isFinite(o.overshootMs))) continue;
    const b = best.get(o.measurer);
    if (b === undefined || o.rttMs < b.rttMs) best.set(o.measurer, o);
  }
  return [...best.values()];
}

/** The median of xs (NaN when empty). */
export function medianOf(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : 0.5 * (s[m - 1]! + s[m]!);
}

/** Checks `claimed` against RTTs others measured to the node that claims it. */
export function checkCoordinateClaim(claimed: Coordinate, observations: readonly RttObservation[], options: Partial<PlausibilityOptions> | PlausibilityOptions = {}): ClaimCheck {
  const o = plausibilityOptions(options);
  const dims = claimed.vec.length;
  const obs = distinctObservations(observations, dims);
  const empty: ClaimCheck = {
    verdict: 'insufficient', reasons: [], measurers: obs.length, against: 0, tooClose: 0, vouchers: 0, trianglePairs: 0, triangleViolations: 0, outlierMeasurers: [], unexplainedViolations: 0, medianRelError: NaN, netForceMs: NaN, observations: [],
  };
  if (!isFiniteCoordinate(claimed)) return { ...empty, verdict: 'inconsistent', reasons: ['votes'] };
  if (claimed.error > o.maxClaimError) return { ...empty, verdict: 'unsettled' };
  if (obs.length < o.minMeasurers) return empty;

  const checks: ObservationCheck[] = [];
  let vouchers = 0;
  const force = new Float64Array(dims);
  for (const ob of obs) {
    const predictedMs = predictRtt(claimed, ob.coord);
    const diff = predictedMs - ob.rttMs;
    const widen = o.uncertaintyFactor * (ob.uncertaintyMs ?? 0);
    // A prediction longer than the RTT is widened by the measurer's overshoot
    // alone: event-loop delay lengthens the RTTs a loaded measurer times (and
    // so its both-ways misfit), never its predictions.
    const widenAgainst = diff > 0 ? o.uncertaintyFactor * (ob.overshootMs ?? ob.uncertaintyMs ?? 0) : widen;
    const against = Math.abs(diff) > o.relTolerance * ob.rttMs + o.slackMs + widenAgainst;
    const tooClose = predictedMs < o.deflationRatio * ob.rttMs - o.slackMs - widen;
    checks.push({ measurer: ob.measurer, rttMs: ob.rttMs, predictedMs, relError: diff / ob.rttMs, against, tooClose });
    if (!against && Math.max(widen, widenAgainst) <= o.maxVouchWidenMs) vouchers++;
    // Spring force on the claim: a measured RTT longer than predicted pushes it away from the measurer.
    let len = 0;
    for (let i = 0; i < dims; i++) len += (claimed.vec[i]! - ob.coord.vec[i]!) ** 2;
    len = Math.sqrt(len);
    if (len > 1e-9) for (let i = 0; i < dims; i++) force[i]! += (-diff * (claimed.vec[i]! - ob.coord.vec[i]!)) / len;
  }
  let f2 = 0;
  for (let i = 0; i < dims; i++) f2 += (force[i]! / obs.length) ** 2;

  const tri = triangleViolations(obs, o);
  const against = checks.filter((c) => c.against).length;
  const tooClose = checks.filter((c) => c.tooClose).length;
  const reasons: ClaimReason[] = [];
  if (tooClose >= o.minTooClose) reasons.push('too-close');
  if (against > o.maxAgainstFraction * obs.length) reasons.push('votes');
  if (tri.remainingPairs >= 3 && tri.unexplained > o.maxTriangleFraction * tri.remainingPairs) reasons.push('selective-delay');
  // No fault found is no evidence when too few measurers could have found one:
  // on a loaded loopback witnesses' own coordinates were 200–1 300 ms off, and
  // a crawler 300 ms from its claim collected "ok" verdicts (overlay credit).
  const verdict = reasons.length > 0 ? 'inconsistent' : vouchers >= o.minMeasurers ? 'consistent' : 'insufficient';
  return {
    verdict,
    reasons,
    measurers: obs.length,
    against,
    tooClose,
    vouchers,
    trianglePairs: tri.pairs,
    triangleViolations: tri.violations,
    outlierMeasurers: tri.outliers,
    unexplainedViolations: tri.unexplained,
    medianRelError: medianOf(checks.map((c) => Math.abs(c.relError))),
    netForceMs: Math.sqrt(f2),
    observations: checks,
  };
}

/** Pairs of measurers whose RTTs to the node break |r_j − r_k| ≤ (1 + tol)·d_jk + slack,
 * and what is left once up to a quarter of the measurers (at least one) are set aside,
 * each time the one in most remaining violations. */
function triangleViolations(obs: readonly RttObservation[], o: PlausibilityOptions): { pairs: number; violations: number; outliers: string[]; unexplained: number; remainingPairs: number } {
  const n = obs.length;
  const bad: [number, number][] = [];
  for (let j = 0; j < n; j++) {
    for (let k = j + 1; k < n; k++) {
      const d = predictRtt(obs[j]!.coord, obs[k]!.coord);
      const widen = o.uncertaintyFactor * ((obs[j]!.uncertaintyMs ?? 0) + (obs[k]!.uncertaintyMs ?? 0));
      if (Math.abs(obs[j]!.rttMs - obs[k]!.rttMs) > (1 + o.triangleTolerance) * d + o.slackMs + widen) bad.push([j, k]);
    }
  }
  const removed = new Set<number>();
  let left = bad;
  const budget = Math.max(1, Math.floor(n / 4));
  while (left.length > 0 && removed.size < budget) {
    const count = new Map<number, number>();
    for (const [j, k] of left) {
      count.set(j, (count.get(j) ?? 0) + 1);
      count.set(k, (count.get(k) ?? 0) + 1);
    }
    let worst = -1;
    let most = 0;
    for (const [i, c] of count) if (c > most || (c === most && i < worst)) [worst, most] = [i, c];
    removed.add(worst);
    left = left.filter(([j, k]) => j !== worst && k !== worst);
  }
  const m = n - removed.size;
  return {
    pairs: (n * (n - 1)) / 2,
    violations: bad.length,
    outliers: [...removed].sort((a, b) => a - b).map((i) => obs[i]!.measurer),
    unexplained: left.length,
    remainingPairs: (m * (m - 1)) / 2,
  };
}

export interface MeasuredPosition {
  /** Where the RTTs place the node (src/coords' placeHost, measurers as landmarks). */
  coord: Coordinate;
  /** How far that position may be off, ms: its median relative misfit × the median RTT (at least slackMs), plus its fitted height. */
  uncertaintyMs: number;
  measurers: number;
}

/** The node's position as the measurements alone put it; null with fewer than minMeasurers. */
export function measuredPosition(
  observations: readonly RttObservation[],
  vivaldi: Partial<VivaldiOptions>,
  rng: Rng,
  options: Partial<PlausibilityOptions> | PlausibilityOptions = {},
): MeasuredPosition | null {
  const o = plausibilityOptions(options);
  const dims = observations[0]?.coord.vec.length ?? 0;
  const obs = distinctObservations(observations, dims);
  if (obs.length < o.minMeasurers) return null;
  const coord = placeHost(obs.map((x) => ({ coord: x.coord, rttMs: x.rttMs })), { ...vivaldi, dimensions: dims }, rng);
  // A fitted height can be traded for distance when the measurers do not
  // surround the node (move towards them, grow the height: the fit barely
  // changes), so the position is uncertain by that height too.
  const uncertaintyMs = Math.max(o.slackMs, coord.error * medianOf(obs.map((x) => x.rttMs))) + Math.max(0, coord.height);
  return { coord, uncertaintyMs, measurers: obs.length };
}
