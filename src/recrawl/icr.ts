// ICR, the paper's integrated capacity reassignment (§3.2): one θ from
// equation (4) for the whole system, the group intervals θ·Δt·Πω, encouraged
// system-wide or per group.

import { checkPriorities, clampIntervals, resetWindow, type RoundReport } from './round.js';
import type { RecrawlState } from './state.js';
import { groupTally, type GroupTally } from './tally.js';

export { channelHistory } from './tally.js';

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
export type IcrInputs = Omit<GroupTally, 'changeSum' | 'changeMin'>;

/** ICR's inputs summed over the channel records in channel order (the simulator's
 * way): the shared per-group tally (tally.ts) without the change intervals. */
export function icrInputs(state: RecrawlState, now: number): IcrInputs {
  const { changeSum: _changeSum, changeMin: _changeMin, ...inputs } = groupTally(state, now);
  return inputs;
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
