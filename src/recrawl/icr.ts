// ICR, the paper's integrated capacity reassignment (§3.2): one θ from
// equation (4) for the whole system, the group intervals θ·Δt·Πω, encouraged
// system-wide or per group.

import { checkPriorities, clampIntervals, resetWindow, type RoundReport } from './round.js';
import type { ChannelRecord, RecrawlState } from './state.js';

/** Update rate and mean download time of a channel from its last L updates.
 * rate = n / (now − oldest kept update + half a mean gap). The mean gap is taken
 * between the kept updates (or is the channel's current interval when only one is
 * kept). The half gap stands for the unseen time before the oldest kept update
 * (on average half a gap for periodic updates), which makes the estimate unbiased
 * for periodic updates and keeps a channel updated just now from being credited
 * with an absurd rate. meanDownload = mean of the kept download times. */
export function channelHistory(
  c: ChannelRecord,
  now: number,
  currentInterval: number,
): { rate: number; meanDownload: number | null } {
  const n = c.updateTimes.length;
  if (n === 0) return { rate: 0, meanDownload: null };
  let s = 0;
  for (const d of c.downloadTimes) s += d;
  const first = c.updateTimes[0]!;
  const last = c.updateTimes[n - 1]!;
  const gap = n >= 2 ? (last - first) / (n - 1) : currentInterval;
  const span = now - first + gap / 2;
  return { rate: span > 0 ? n / span : 0, meanDownload: s / n };
}

/**
 * Equation (4): θ = Σ_k ( (1/Π_{j<k} ω_j) Σ_{PGP(k)} t̄_j ) / (Δt · history(Σ_l λ_l t̄_l)).
 * groupDownloadSums[k] = Σ of t̄ over the channels of group k;
 * observedLoad = history(Σ λ_l t̄_l), the thread-time per unit time the system delivered.
 */
export function icrTheta(
  groupDownloadSums: readonly number[],
  omegas: readonly number[],
  deltaT: number,
  observedLoad: number,
): number {
  let num = 0;
  let prod = 1;
  for (let k = 0; k < groupDownloadSums.length; k++) {
    if (k > 0) prod *= omegas[k - 1]!;
    num += groupDownloadSums[k]! / prod;
  }
  return num / (deltaT * observedLoad);
}

/** ICR: group k's interval = θ · Δt · Π_{j<k} ω_j. */
export function icrIntervals(theta: number, deltaT: number, omegas: readonly number[], k: number): number[] {
  const out: number[] = [];
  let iv = theta * deltaT;
  for (let g = 0; g < k; g++) {
    if (g > 0) iv *= omegas[g - 1]!;
    out.push(iv);
  }
  return out;
}

/** What ICR reads: per group the sum of the channels' mean download times t̄ (over the
 * channels with an update kept) and how many have one, the group sizes; over all
 * channels the same sum and count, the observed load Σ λ·t̄, and the window's tasks
 * submitted and successful, in all and per group (icrEncourage 'group'). */
export interface IcrInputs {
  tSum: number[];
  tKnown: number[];
  members: number[];
  allT: number;
  allN: number;
  observedLoad: number;
  sub: number;
  suc: number;
  subBy: number[];
  sucBy: number[];
}

/** ICR's inputs summed over the channel records in channel order (the simulator's way). */
export function icrInputs(state: RecrawlState, now: number): IcrInputs {
  const k = state.groups.length;
  // Per channel t̄ and λ from the last L updates; channels without any update yet
  // use their group's mean t̄ (or the global mean) in the demand term.
  const tSum = new Array<number>(k).fill(0);
  const tKnown = new Array<number>(k).fill(0);
  const members = new Array<number>(k).fill(0);
  let observedLoad = 0;
  let sub = 0;
  let suc = 0;
  const subBy = new Array<number>(k).fill(0);
  const sucBy = new Array<number>(k).fill(0);
  let allT = 0;
  let allN = 0;
  for (const c of state.channels) {
    members[c.group]! += 1;
    sub += c.subCount;
    suc += c.sucCount;
    subBy[c.group]! += c.subCount;
    sucBy[c.group]! += c.sucCount;
    const h = channelHistory(c, now, state.groups[c.group]!.interval);
    if (h.meanDownload !== null) {
      tSum[c.group]! += h.meanDownload;
      tKnown[c.group]! += 1;
      allT += h.meanDownload;
      allN += 1;
      observedLoad += h.rate * h.meanDownload;
    }
  }
  return { tSum, tKnown, members, allT, allN, observedLoad, sub, suc, subBy, sucBy };
}

/** ICR (§3.2): θ from equation (4) using the last L updates, × δ if the system's
 * success rate beat the last one; intervals θ·Δt·Πω; then checkPriorities. */
export function reassignICR(state: RecrawlState, now: number): RoundReport {
  return applyICR(state, icrInputs(state, now), now);
}

/** ICR's round from its inputs (however they were summed); starts a new window. */
export function applyICR(state: RecrawlState, inputs: IcrInputs, now: number): RoundReport {
  const o = state.options;
  const k = state.groups.length;
  const { tSum, tKnown, members, allT, allN, observedLoad, sub, suc, subBy, sucBy } = inputs;
  let theta = state.theta;
  let enc = false;
  const rate = sub > 0 ? suc / sub : null;
  if (allN > 0 && observedLoad > 0) {
    const globalMean = allT / allN;
    const groupSums = tSum.map((s, g) => {
      const mean = tKnown[g]! > 0 ? s / tKnown[g]! : globalMean;
      return s + (members[g]! - tKnown[g]!) * mean;
    });
    theta = icrTheta(groupSums, state.omegas, state.deltaT, observedLoad);
  }
  const perGroup = o.icrEncourage === 'group';
  if (!perGroup && rate !== null) {
    if (rate > state.lastSystemSuccessRate) {
      theta *= o.encourageRate;
      enc = true;
    }
    state.lastSystemSuccessRate = rate;
  }
  // Keep θ inside the floor/ceiling so it does not run away while clamped.
  theta = Math.max(theta, o.minInterval / state.deltaT);
  if (o.maxInterval !== null) theta = Math.min(theta, o.maxInterval / state.deltaT);
  state.theta = theta;
  const ivs = icrIntervals(theta, state.deltaT, state.omegas, k);
  const rates: (number | null)[] = perGroup ? subBy.map((n, g) => (n > 0 ? sucBy[g]! / n : null)) : new Array<number | null>(k).fill(rate);
  const encouraged = new Array<boolean>(k).fill(enc);
  if (perGroup) {
    // IIR's step per group (§3.1), after θ·Δt·Πω: a group whose own success
    // rate beat its own last one is encouraged by δ.
    rates.forEach((r, g) => {
      if (r === null) return;
      const grp = state.groups[g]!;
      if (r > grp.lastSuccessRate) {
        ivs[g] = ivs[g]! * o.encourageRate;
        encouraged[g] = true;
      }
      grp.lastSuccessRate = r;
    });
  }
  const final = clampIntervals(state, checkPriorities(ivs, o.smallestMultiple, o.biggestMultiple));
  final.forEach((v, g) => (state.groups[g]!.interval = v));
  resetWindow(state, now);
  return {
    at: now,
    strategy: 'icr',
    intervals: final,
    successRates: rates,
    encouraged,
    theta,
    observedLoad,
  };
}
