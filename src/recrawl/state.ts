// The state every strategy keeps (plain JSON-serialisable data a manager can
// persist): per channel and per group records, the observation window, and the
// interval a channel is recrawled at.

import { recrawlOptions, type RecrawlOptions } from './options.js';

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
  /** CAF: the multiplier for its cost beside its group's (cafCostExponent; 1 or absent = none). */
  costFactor?: number;
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
  /** CAF: the online task threads the budget was set for (null until a round saw a load report). */
  cafThreads: number | null;
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
    cafThreads: null,
    load: null,
    createdAt: now,
  };
}

export function groupInterval(state: RecrawlState, group: number): number {
  return state.groups[group]!.interval;
}

/** The interval a channel is actually recrawled at: its group's interval, never
 * below the floor, and never faster than rateCap × its change frequency. */
export function channelInterval(state: RecrawlState, channel: number): number {
  const c = state.channels[channel]!;
  return boundedInterval(state, state.groups[c.group]!.interval * (c.backoff ?? 1) * (c.costFactor ?? 1), c.changeInterval);
}

/** The interval a channel of `group` with this change interval is recrawled at
 * before CAF's per-channel factors (backoff, cost): what a group's interval means in practice. */
export function groupChannelInterval(state: RecrawlState, group: number, changeInterval: number): number {
  return boundedInterval(state, state.groups[group]!.interval, changeInterval);
}

function boundedInterval(state: RecrawlState, interval: number, changeInterval: number): number {
  const o = state.options;
  let iv = interval;
  if (o.rateCap !== null) iv = Math.max(iv, changeInterval / o.rateCap);
  return Math.max(iv, o.minInterval);
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
  if (s.cafThreads === undefined) s.cafThreads = null;
  if (s.load === undefined) s.load = null;
  for (const c of s.channels) {
    if (typeof c.gapSum !== 'number') c.gapSum = 0;
    if (typeof c.backoff !== 'number') c.backoff = 1;
  }
  return s;
}
