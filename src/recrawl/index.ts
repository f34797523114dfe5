// Scale-adaptable recrawl strategies (Xu et al., NPC 2010, §3): FIXED, IIR and ICR,
// and CAF, ours: capacity-aware freshness (reassignCAF below).
//
// Pure: no I/O, no clock, no randomness. Time is passed in by the caller in one
// consistent unit (the simulator uses minutes); download times use the same unit.
// The whole state is plain JSON-serialisable data so a manager can persist it.
//
// Rank convention: group 0 is the HIGHEST priority (most frequently changing
// channels, shortest interval), as in the paper's §3 pseudocode. The paper's
// Tables 1–4 number the other way (their rank 4 is the 60-minute group):
// paper rank r  <->  our group K-1-r. See docs/recrawl.md.

import { allocateFrequencies, type AllocationGroup } from './freshness-allocation.js';

export type StrategyName = 'fixed' | 'iir' | 'icr' | 'caf';
export const STRATEGIES: readonly StrategyName[] = ['fixed', 'iir', 'icr', 'caf'];

/** ICR's encourage step: one system-wide success rate (our first reading) or one
 * per group, as IIR keeps `LastSuccessRate[K]` and ICR inherits its records (§3.2). */
export type IcrEncourage = 'system' | 'group';

export interface RecrawlOptions {
  strategy: StrategyName;
  /** δ < 1: interval multiplier when a group's success rate beat its previous one. */
  encourageRate: number;
  /** σ ≥ 1: a lower group that came out shorter than the group above is raised to σ × it. */
  smallestMultiple: number;
  /** μ > σ: a lower group's interval is capped at μ × the interval of the group above. */
  biggestMultiple: number;
  /** L: number of most recent updates per channel kept for ICR (download times, rate). */
  historyLength: number;
  /** Trigger: this fraction of the highest group's channels ... */
  triggerFraction: number;
  /** ... must have MORE than this many successful updates since the last reassignment. */
  triggerUpdates: number;
  /** Run a reassignment anyway when this much time passed since the last one
   * (guards against a starved top group never firing the trigger). null = never. */
  maxRoundGap: number | null;
  /** Beyond the paper: cap a channel's recrawl rate at this multiple of its change
   * frequency (paper §4.3 suggests 2). null = no cap. */
  rateCap: number | null;
  /** Beyond the paper: no interval ever goes below this (time units). */
  minInterval: number;
  /** Optional ceiling on any group interval (time units). null = none beyond μ. */
  maxInterval: number | null;
  /** ICR's encourage step, system-wide or per group. */
  icrEncourage: IcrEncourage;
  /** CAF: a round every this much time (time units). */
  cafPeriod: number;
  /** CAF: the thread utilisation it steers to (running tasks / online task threads). */
  cafTargetUtilisation: number;
  /** CAF: ... unless the queues hold more than this many tasks per online thread
   * (the paper's crawler queues at most one per thread). */
  cafMaxQueue: number;
  /** CAF: the gain of the load loop (per round, the budget moves by exp(gain × error)). */
  cafGain: number;
  /** CAF: the budget moves by at most this factor per round (> 1). */
  cafMaxStep: number;
  /** CAF: no group is recrawled less often than once per this many change intervals. */
  cafMaxStretch: number;
  /** CAF without a load observation: the success rate it steers to instead. */
  cafTargetSuccess: number;
  /** CAF: a channel whose task found no room or expired waiting is recrawled this
   * many times less often (compounding, up to cafMaxBackoff); a success halves the excess. */
  cafBackoff: number;
  cafMaxBackoff: number;
}

/** Why a task failed: its crawler vanished ('lost'), no crawler had room
 * ('refused'), it waited past its deadline ('expired'), or not said ('other'). */
export type FailureKind = 'lost' | 'refused' | 'expired' | 'other';

export const DEFAULT_RECRAWL_OPTIONS: Readonly<RecrawlOptions> = Object.freeze({
  strategy: 'iir',
  encourageRate: 0.6,
  smallestMultiple: 1.25,
  biggestMultiple: 4,
  historyLength: 5,
  triggerFraction: 0.5,
  triggerUpdates: 5,
  maxRoundGap: null,
  rateCap: null,
  minInterval: 5,
  maxInterval: null,
  icrEncourage: 'system',
  cafPeriod: 100,
  cafTargetUtilisation: 0.95,
  cafMaxQueue: 0.9,
  cafGain: 1,
  cafMaxStep: 1.25,
  cafMaxStretch: 8,
  cafTargetSuccess: 0.85,
  cafBackoff: 2,
  cafMaxBackoff: 16,
});

export function recrawlOptions(partial: Partial<RecrawlOptions> = {}): RecrawlOptions {
  const o: RecrawlOptions = { ...DEFAULT_RECRAWL_OPTIONS, ...partial };
  const bad = (msg: string): never => {
    throw new RangeError(`recrawl options: ${msg}`);
  };
  if (!STRATEGIES.includes(o.strategy)) bad(`unknown strategy ${String(o.strategy)}`);
  if (!(o.encourageRate > 0 && o.encourageRate <= 1)) bad('encourageRate must be in (0, 1]');
  if (!(o.smallestMultiple >= 1)) bad('smallestMultiple must be >= 1');
  if (!(o.biggestMultiple >= o.smallestMultiple)) bad('biggestMultiple must be >= smallestMultiple');
  if (!(Number.isInteger(o.historyLength) && o.historyLength >= 1)) bad('historyLength must be an integer >= 1');
  if (!(o.triggerFraction > 0 && o.triggerFraction <= 1)) bad('triggerFraction must be in (0, 1]');
  if (!(Number.isInteger(o.triggerUpdates) && o.triggerUpdates >= 0)) bad('triggerUpdates must be an integer >= 0');
  if (o.maxRoundGap !== null && !(o.maxRoundGap > 0)) bad('maxRoundGap must be > 0 or null');
  if (o.rateCap !== null && !(o.rateCap > 0)) bad('rateCap must be > 0 or null');
  if (!(o.minInterval >= 0)) bad('minInterval must be >= 0');
  if (o.maxInterval !== null && !(o.maxInterval > 0)) bad('maxInterval must be > 0 or null');
  if (o.icrEncourage !== 'system' && o.icrEncourage !== 'group') bad(`icrEncourage must be 'system' or 'group'`);
  if (!(o.cafPeriod > 0 && Number.isFinite(o.cafPeriod))) bad('cafPeriod must be finite and > 0');
  if (!(o.cafTargetUtilisation > 0 && o.cafTargetUtilisation <= 1)) bad('cafTargetUtilisation must be in (0, 1]');
  if (!(o.cafMaxQueue >= 0 && Number.isFinite(o.cafMaxQueue))) bad('cafMaxQueue must be finite and >= 0');
  if (!(o.cafGain > 0 && Number.isFinite(o.cafGain))) bad('cafGain must be finite and > 0');
  if (!(o.cafMaxStep > 1 && Number.isFinite(o.cafMaxStep))) bad('cafMaxStep must be finite and > 1');
  if (!(o.cafMaxStretch >= 1 && Number.isFinite(o.cafMaxStretch))) bad('cafMaxStretch must be finite and >= 1');
  if (!(o.cafTargetSuccess > 0 && o.cafTargetSuccess < 1)) bad('cafTargetSuccess must be in (0, 1)');
  if (!(o.cafBackoff >= 1 && Number.isFinite(o.cafBackoff))) bad('cafBackoff must be finite and >= 1');
  if (!(o.cafMaxBackoff >= 1 && Number.isFinite(o.cafMaxBackoff))) bad('cafMaxBackoff must be finite and >= 1');
  return o;
}

export interface ChannelRecord {
  group: number;
  /** The channel's own change interval (1 / change frequency). */
  changeInterval: number;
  /** hSubCount: tasks submitted since the last reassignment. */
  subCount: number;
  /** hSucCount: successful updates since the last reassignment. */
  sucCount: number;
  /** Failures (lost, cancelled, rejected) since the last reassignment (informational). */
  failCount: number;
  /** Time of the last successful update, or null. */
  lastUpdate: number | null;
  /** Sum of the gaps between consecutive updates that ended in this window (the
   * first measured from the previous update, or from the state's creation). */
  gapSum: number;
  /** Times and download times of the last L updates, oldest first. */
  updateTimes: number[];
  downloadTimes: number[];
  /** CAF: the channel's own interval multiplier (1 or absent = its group's interval). */
  backoff?: number;
}

export interface GroupRecord {
  initialInterval: number;
  interval: number;
  /** lastSuccessRate of the IIR pseudocode (starts at 0). */
  lastSuccessRate: number;
}

export interface RecrawlState {
  options: RecrawlOptions;
  groups: GroupRecord[];
  channels: ChannelRecord[];
  /** Start of the current observation window (time of the last reassignment). */
  windowStart: number;
  /** Highest-group channels whose sucCount exceeds triggerUpdates in this window. */
  triggerCount: number;
  /** Number of channels in the highest group (group 0). */
  topCount: number;
  rounds: number;
  /** ICR: ΔT_0 = θ·Δt; Δt = the highest group's initial interval. */
  theta: number;
  deltaT: number;
  /** ICR: ω_k = initial(k+1) / initial(k). */
  omegas: number[];
  /** ICR: success rate of the whole system at the last round (encourage step). */
  lastSystemSuccessRate: number;
  /** CAF: the recrawl budget, thread-time per unit time (null until its first round). */
  cafBudget: number | null;
  /** The crawlers' load as last observed (observeLoad), or null when none was. */
  load: SystemLoad | null;
  /** When the state was created (the reference of a channel's first gap). */
  createdAt: number;
}

/** What the crawlers report of their load: online task threads, and the tasks
 * running on them and waiting in their queues. */
export interface SystemLoad {
  threads: number;
  running: number;
  queued: number;
}

export interface ChannelSpec {
  changeInterval: number;
  /** Group index (0 = highest priority). If omitted for every channel, groups are formed by assignGroups. */
  group?: number;
}

/** Splits channels into k groups by change interval (shortest first), equal counts. */
export function assignGroups(changeIntervals: readonly number[], k: number): number[] {
  const order = changeIntervals.map((_, i) => i).sort((a, b) => changeIntervals[a]! - changeIntervals[b]! || a - b);
  const out = new Array<number>(changeIntervals.length).fill(0);
  order.forEach((ch, pos) => {
    out[ch] = Math.min(k - 1, Math.floor((pos * k) / order.length));
  });
  return out;
}

export function createRecrawlState(
  specs: readonly ChannelSpec[],
  options: Partial<RecrawlOptions> = {},
  now = 0,
  groupCount?: number,
): RecrawlState {
  const opts = recrawlOptions(options);
  if (specs.length === 0) throw new RangeError('createRecrawlState: no channels');
  for (const s of specs) {
    if (!(s.changeInterval > 0)) throw new RangeError('createRecrawlState: changeInterval must be > 0');
  }
  let groupOf: number[];
  if (specs.every((s) => s.group !== undefined)) {
    groupOf = specs.map((s) => s.group!);
  } else {
    groupOf = assignGroups(
      specs.map((s) => s.changeInterval),
      groupCount ?? 5,
    );
  }
  const k = groupCount ?? Math.max(...groupOf) + 1;
  const sums = new Array<number>(k).fill(0);
  const counts = new Array<number>(k).fill(0);
  groupOf.forEach((g, i) => {
    if (!Number.isInteger(g) || g < 0 || g >= k) throw new RangeError(`createRecrawlState: bad group ${g}`);
    sums[g]! += specs[i]!.changeInterval;
    counts[g]! += 1;
  });
  const groups: GroupRecord[] = [];
  for (let g = 0; g < k; g++) {
    // An empty group inherits twice the group above (or 1 for group 0) so ratios stay sane.
    const init = counts[g]! > 0 ? sums[g]! / counts[g]! : g > 0 ? groups[g - 1]!.initialInterval * 2 : 1;
    groups.push({ initialInterval: init, interval: init, lastSuccessRate: 0 });
  }
  const omegas: number[] = [];
  for (let g = 0; g + 1 < k; g++) omegas.push(groups[g + 1]!.initialInterval / groups[g]!.initialInterval);
  return {
    options: opts,
    groups,
    channels: specs.map((s, i) => ({
      group: groupOf[i]!,
      changeInterval: s.changeInterval,
      subCount: 0,
      sucCount: 0,
      failCount: 0,
      lastUpdate: null,
      gapSum: 0,
      updateTimes: [],
      downloadTimes: [],
      backoff: 1,
    })),
    windowStart: now,
    triggerCount: 0,
    topCount: counts[0]!,
    rounds: 0,
    theta: 1,
    deltaT: groups[0]!.initialInterval,
    omegas,
    lastSystemSuccessRate: 0,
    cafBudget: null,
    load: null,
    createdAt: now,
  };
}

// ---------------------------------------------------------------- recording

export function recordSubmit(state: RecrawlState, channel: number, _t: number): void {
  state.channels[channel]!.subCount += 1;
}

export function recordSuccess(state: RecrawlState, channel: number, t: number, downloadTime: number): void {
  const c = state.channels[channel]!;
  c.sucCount += 1;
  c.gapSum += t - (c.lastUpdate ?? state.createdAt);
  c.lastUpdate = t;
  c.updateTimes.push(t);
  c.downloadTimes.push(downloadTime);
  const L = state.options.historyLength;
  while (c.updateTimes.length > L) {
    c.updateTimes.shift();
    c.downloadTimes.shift();
  }
  if (c.group === 0 && c.sucCount === state.options.triggerUpdates + 1) state.triggerCount += 1;
  // CAF: a success says the channel's crawlers have room again.
  if (c.backoff !== undefined && c.backoff !== 1) c.backoff = 1 + (c.backoff - 1) / 2;
}

export function recordFailure(state: RecrawlState, channel: number, t: number, kind: FailureKind = 'other'): void {
  state.channels[channel]!.failCount += 1;
  // A crawler's departure says nothing about room.
  if (kind === 'refused' || kind === 'expired') recordNoRoom(state, channel, t);
}

/** The channel's task found no crawler with room (refused, held beyond a full
 * queue, or expired waiting). CAF recrawls such a channel less often, so the
 * submissions that would wait or fail there go to channels whose crawlers have
 * room; the other strategies ignore it. */
export function recordNoRoom(state: RecrawlState, channel: number, _t: number): void {
  const o = state.options;
  if (o.strategy !== 'caf') return;
  const c = state.channels[channel]!;
  c.backoff = Math.min(o.cafMaxBackoff, (c.backoff ?? 1) * o.cafBackoff);
}

// ---------------------------------------------------------------- intervals

export function groupInterval(state: RecrawlState, group: number): number {
  return state.groups[group]!.interval;
}

/** The interval a channel is actually recrawled at: its group's interval, never
 * below the floor, and never faster than rateCap × its change frequency. */
export function channelInterval(state: RecrawlState, channel: number): number {
  const c = state.channels[channel]!;
  const o = state.options;
  let iv = state.groups[c.group]!.interval * (c.backoff ?? 1);
  if (o.rateCap !== null) iv = Math.max(iv, c.changeInterval / o.rateCap);
  return Math.max(iv, o.minInterval);
}

// ---------------------------------------------------------------- pure steps

/** checkPriorities (paper §3.1), group 0 highest. Returns a new array. */
export function checkPriorities(intervals: readonly number[], sigma: number, mu: number): number[] {
  const out = intervals.slice();
  for (let p = 1; p < out.length; p++) {
    const above = out[p - 1]!;
    if (out[p]! < above) out[p] = above * sigma;
    const upper = above * mu;
    if (out[p]! > upper) out[p] = upper;
  }
  return out;
}

/** hInterval of a channel: the mean gap between consecutive successful updates over
 * the gaps that ended in the current window (the first of them measured from the
 * update before the window, or from the state's creation). null when the channel had
 * no update in the window: it then has no say in its group's new interval. */
export function historyInterval(c: ChannelRecord): number | null {
  return c.sucCount > 0 ? c.gapSum / c.sucCount : null;
}

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

// ---------------------------------------------------------------- rounds

export function shouldReassign(state: RecrawlState, now: number): boolean {
  const o = state.options;
  if (o.strategy === 'fixed') return false;
  // CAF steers on a clock: its top group may be the one it recrawls least.
  if (o.strategy === 'caf') return now - state.windowStart >= o.cafPeriod;
  const top = state.topCount;
  if (top > 0 && state.triggerCount >= o.triggerFraction * top) return true;
  return o.maxRoundGap !== null && now - state.windowStart >= o.maxRoundGap;
}

export interface RoundReport {
  at: number;
  strategy: StrategyName;
  intervals: number[];
  successRates: (number | null)[];
  encouraged: boolean[];
  theta?: number;
  observedLoad?: number;
}

/** Applies the floor/ceiling to group intervals (the rate cap is per channel). */
function clampIntervals(state: RecrawlState, ivs: number[]): number[] {
  const o = state.options;
  return ivs.map((v) => {
    let x = Math.max(v, o.minInterval);
    if (o.maxInterval !== null) x = Math.min(x, o.maxInterval);
    return x;
  });
}

function resetWindow(state: RecrawlState, now: number): void {
  for (const c of state.channels) {
    c.subCount = 0;
    c.sucCount = 0;
    c.failCount = 0;
    c.gapSum = 0;
  }
  state.windowStart = now;
  state.triggerCount = 0;
  state.rounds += 1;
}

/** What IIR reads from a window (per group): the sum and number of the channels'
 * hIntervals (channels updated in the window), tasks submitted and successful. */
export interface IirInputs {
  sumIv: number[];
  cnt: number[];
  sub: number[];
  suc: number[];
}

/** IIR's inputs summed over the channel records, in channel order (the simulator's way;
 * window-stats.ts keeps the same figures as exact running sums instead). */
export function iirInputs(state: RecrawlState): IirInputs {
  const k = state.groups.length;
  const sumIv = new Array<number>(k).fill(0);
  const cnt = new Array<number>(k).fill(0);
  const sub = new Array<number>(k).fill(0);
  const suc = new Array<number>(k).fill(0);
  for (const c of state.channels) {
    const hi = historyInterval(c);
    if (hi !== null) {
      sumIv[c.group]! += hi;
      cnt[c.group]! += 1;
    }
    sub[c.group]! += c.subCount;
    suc[c.group]! += c.sucCount;
  }
  return { sumIv, cnt, sub, suc };
}

/** IIR (§3.1): new interval = mean of the channels' hIntervals, × δ if the group's
 * success rate beat the last one; then checkPriorities. */
export function reassignIIR(state: RecrawlState, now: number): RoundReport {
  return applyIIR(state, iirInputs(state), now);
}

/** IIR's round from its inputs (however they were summed); starts a new window. */
export function applyIIR(state: RecrawlState, inputs: IirInputs, now: number): RoundReport {
  const o = state.options;
  const k = state.groups.length;
  const { sumIv, cnt, sub, suc } = inputs;
  const next: number[] = [];
  const rates: (number | null)[] = [];
  const enc: boolean[] = [];
  for (let g = 0; g < k; g++) {
    const grp = state.groups[g]!;
    // A group none of whose channels was updated in the window keeps its interval.
    let iv = cnt[g]! > 0 ? sumIv[g]! / cnt[g]! : grp.interval;
    const rate = sub[g]! > 0 ? suc[g]! / sub[g]! : null;
    let e = false;
    if (rate !== null) {
      if (rate > grp.lastSuccessRate) {
        iv *= o.encourageRate;
        e = true;
      }
      grp.lastSuccessRate = rate;
    }
    next.push(iv);
    rates.push(rate);
    enc.push(e);
  }
  const final = clampIntervals(state, checkPriorities(next, o.smallestMultiple, o.biggestMultiple));
  final.forEach((v, g) => (state.groups[g]!.interval = v));
  resetWindow(state, now);
  return { at: now, strategy: 'iir', intervals: final, successRates: rates, encouraged: enc };
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

/** Records the crawlers' load as they report it (CAF steers on it; the others ignore it). */
export function observeLoad(state: RecrawlState, load: SystemLoad): void {
  if (!(load.threads >= 0 && load.running >= 0 && load.queued >= 0)) throw new RangeError('observeLoad: counts must be >= 0');
  state.load = { threads: load.threads, running: load.running, queued: load.queued };
}

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
 */
export function reassignCAF(state: RecrawlState, now: number): RoundReport {
  const o = state.options;
  const k = state.groups.length;
  const members = new Array<number>(k).fill(0);
  const changeSum = new Array<number>(k).fill(0);
  const tSum = new Array<number>(k).fill(0);
  const tKnown = new Array<number>(k).fill(0);
  let sub = 0;
  let suc = 0;
  let allT = 0;
  let allN = 0;
  for (const c of state.channels) {
    members[c.group]! += 1;
    changeSum[c.group]! += c.changeInterval;
    sub += c.subCount;
    suc += c.sucCount;
    const n = c.downloadTimes.length;
    if (n === 0) continue;
    let s = 0;
    for (const d of c.downloadTimes) s += d;
    tSum[c.group]! += s / n;
    tKnown[c.group]! += 1;
    allT += s / n;
    allN += 1;
  }
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
  if (load !== null && load.threads > 0) error = Math.min(o.cafTargetUtilisation - load.running / load.threads, o.cafMaxQueue - load.queued / load.threads);
  else if (load !== null) error = -1; // no thread online: back off
  else error = rate !== null ? 2 * (rate - o.cafTargetSuccess) : 0;
  const step = Math.min(o.cafMaxStep, Math.max(1 / o.cafMaxStep, Math.exp(o.cafGain * error)));
  budget *= step;
  const groups: AllocationGroup[] = [];
  for (let g = 0; g < k; g++) {
    const change = members[g]! > 0 ? changeSum[g]! / members[g]! : state.groups[g]!.initialInterval;
    let maxF = 1 / Math.max(o.minInterval, 1e-9);
    if (o.rateCap !== null) maxF = Math.min(maxF, o.rateCap / change);
    let minF = 1 / (o.cafMaxStretch * change);
    if (o.maxInterval !== null) minF = Math.max(minF, 1 / o.maxInterval);
    minF = Math.min(minF, maxF);
    groups.push({ channels: members[g]!, changeInterval: change, cost: cost[g]!, minFrequency: minF, maxFrequency: maxF });
  }
  const f = allocateFrequencies(groups, budget);
  // The budget the allocation could spend (bounds reached): no wind-up beyond it.
  state.cafBudget = groups.reduce((b, g, i) => b + g.channels * f[i]! * g.cost, 0);
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

/** Runs the strategy's reassignment (no trigger check). FIXED never changes. */
export function reassign(state: RecrawlState, now: number): RoundReport | null {
  switch (state.options.strategy) {
    case 'fixed':
      return null;
    case 'iir':
      return reassignIIR(state, now);
    case 'icr':
      return reassignICR(state, now);
    case 'caf':
      return reassignCAF(state, now);
  }
}

/** Runs a reassignment if and only if the strategy's trigger says so. */
export function maybeReassign(state: RecrawlState, now: number): RoundReport | null {
  return shouldReassign(state, now) ? reassign(state, now) : null;
}

/** Number of channels in each group. */
export function groupSizes(state: RecrawlState): number[] {
  const out = new Array<number>(state.groups.length).fill(0);
  for (const c of state.channels) out[c.group]! += 1;
  return out;
}

export function serialiseState(state: RecrawlState): string {
  return JSON.stringify(state);
}

export function restoreState(json: string): RecrawlState {
  const s = JSON.parse(json) as RecrawlState;
  s.options = recrawlOptions(s.options);
  // States persisted before these fields existed: start them afresh.
  if (typeof s.createdAt !== 'number') s.createdAt = s.windowStart;
  if (s.cafBudget === undefined) s.cafBudget = null;
  if (s.load === undefined) s.load = null;
  for (const c of s.channels) {
    if (typeof c.gapSum !== 'number') c.gapSum = 0;
    if (typeof c.backoff !== 'number') c.backoff = 1;
  }
  return s;
}
