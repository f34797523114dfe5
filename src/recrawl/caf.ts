// CAF, capacity-aware freshness (ours): how much to recrawl from the crawlers'
// reported load, and how to split it across the groups for the freshest copies.

import { allocateFrequencies, type AllocationGroup } from './freshness-allocation.js';
import { resetWindow, type RoundReport } from './round.js';
import type { RecrawlState } from './state.js';
import { groupTally, type GroupTally } from './tally.js';

/**
 * CAF, capacity-aware freshness (ours). Two jobs, kept apart:
 * 1. How much to recrawl: a budget B of thread-time per unit time, steered by
 *    a multiplicative feedback loop on the crawlers' reported load: with u the
 *    share of online threads running a task and q the queued tasks per online
 *    thread, the error is e = min(cafTargetUtilisation − u, cafMaxQueue − q) and
 *    B ← B · exp(gain · e), by at most `cafMaxStep` per round. Idle threads raise
 *    it until they are busy or the queues are long enough; long queues lower it.
 *    Both terms matter: locality-first placement queues tasks at crawlers near
 *    busy hosts while crawlers elsewhere idle, so queues alone misread spare
 *    capacity and utilisation alone cannot see overload (it saturates at 1).
 *    What IIR and ICR infer from success rates (which churn lowers whatever the
 *    load) comes here from the crawlers themselves. Without a load report CAF
 *    steers the success rate to `cafTargetSuccess` instead.
 * 2. How to split it: the split of B across groups that keeps the copies
 *    freshest (freshness-allocation.ts), each group's recrawl costing its
 *    measured mean download time, and none recrawled less often than once per
 *    `cafMaxStretch` change intervals.
 * The first round starts from the current intervals' demand Σ n_g t̄_g / I_g.
 * `tally` is the per-group tally at `now`: summed over `state.channels` unless
 * given (a manager, which holds no channel resident, passes window-stats.ts's
 * `IcrScan.inputs`).
 */
export function reassignCAF(state: RecrawlState, now: number, tally: GroupTally = groupTally(state, now)): RoundReport {
  const o = state.options;
  const k = state.groups.length;
  const { members, changeSum, changeMin, tSum, tKnown, allT, allN, sub, suc } = tally;
  const rate = sub > 0 ? suc / sub : null;
  const current = state.groups.map((g) => g.interval);
  if (allN === 0) {
    // Nothing completed yet: no cost to plan with.
    resetWindow(state, now);
    return { at: now, strategy: 'caf', intervals: current, successRates: new Array<number | null>(k).fill(rate), encouraged: new Array<boolean>(k).fill(false) };
  }
  const globalMean = allT / allN;
  const cost = tSum.map((s, g) => (tKnown[g]! > 0 ? s / tKnown[g]! : globalMean));
  let budget = state.cafBudget ?? current.reduce((b, iv, g) => b + (members[g]! * cost[g]!) / iv, 0);
  let error: number;
  const load = state.load;
  // Steered per online thread: the capacity that came or went since the last
  // round moves the budget with it, before the load loop corrects what is left.
  const threads = load !== null && load.threads > 0 ? load.threads : null;
  if (o.cafFollowThreads && threads !== null && state.cafThreads !== null) budget *= threads / state.cafThreads;
  if (threads !== null) state.cafThreads = threads;
  if (load !== null && load.threads > 0) error = Math.min(o.cafTargetUtilisation - load.running / load.threads, o.cafMaxQueue - load.queued / load.threads);
  else if (load !== null) error = -1; // no thread online: back off
  else error = rate !== null ? 2 * (rate - o.cafTargetSuccess) : 0;
  const step = Math.min(o.cafMaxStep, Math.max(1 / o.cafMaxStep, Math.exp(o.cafGain * error)));
  budget *= step;
  const groups: AllocationGroup[] = [];
  for (let g = 0; g < k; g++) {
    const change = members[g]! > 0 ? changeSum[g]! / members[g]! : state.groups[g]!.initialInterval;
    let maxF = 1 / Math.max(o.minInterval, 1e-9);
    // The rate cap is per channel (channelInterval applies it to each): the group's
    // ceiling is its fastest-changing channel's, so no channel is held below its own
    // cap by slower ones sharing its group (at the group's mean change interval, a
    // group mixing 0.5 h and 3 h channels recrawled the 0.5 h ones hourly).
    if (o.rateCap !== null) maxF = Math.min(maxF, o.rateCap / (Number.isFinite(changeMin[g]!) ? changeMin[g]! : change));
    let minF = 1 / (o.cafMaxStretch * change);
    if (o.maxInterval !== null) minF = Math.max(minF, 1 / o.maxInterval);
    minF = Math.min(minF, maxF);
    groups.push({ channels: members[g]!, changeInterval: change, cost: cost[g]!, minFrequency: minF, maxFrequency: maxF });
  }
  const f = allocateFrequencies(groups, budget);
  // The budget the allocation could spend (bounds reached): no wind-up beyond it.
  state.cafBudget = groups.reduce((b, g, i) => b + g.channels * f[i]! * g.cost, 0);
  if (o.cafCostExponent > 0) setCostFactors(state, cost);
  const final = f.map((x) => 1 / x);
  final.forEach((v, g) => (state.groups[g]!.interval = v));
  resetWindow(state, now);
  return {
    at: now,
    strategy: 'caf',
    intervals: final,
    successRates: new Array<number | null>(k).fill(rate),
    encouraged: new Array<boolean>(k).fill(step > 1),
    observedLoad: state.cafBudget,
  };
}

/** Each channel's interval multiplier for its own cost: (its mean download time ÷ its
 * group's)^cafCostExponent within [1 / cafCostSpread, cafCostSpread]; 1 until it has one. */
function setCostFactors(state: RecrawlState, groupCost: readonly number[]): void {
  const o = state.options;
  const hi = o.cafCostSpread;
  for (const c of state.channels) {
    const n = c.downloadTimes.length;
    const g = groupCost[c.group]!;
    if (n === 0 || !(g > 0)) {
      c.costFactor = 1;
      continue;
    }
    let sum = 0;
    for (const d of c.downloadTimes) sum += d;
    c.costFactor = Math.min(hi, Math.max(1 / hi, (sum / n / g) ** o.cafCostExponent));
  }
}

/** How many of its channel's intervals a task may wait for a thread before it
 * expires: CAF's `cafWaitIntervals`, one for the paper's strategies. Above one,
 * the caller does not submit a due channel whose last task is still waiting. */
export function waitIntervals(state: RecrawlState): number {
  return state.options.strategy === 'caf' ? state.options.cafWaitIntervals : 1;
}
