// The strategies' inputs kept as running per-group aggregates, so a manager need
// not hold every channel's record to run a round. Pure, plain JSON data.
//
// IIR reads, per group, the number of channels, tasks submitted and successful in
// the window, and the sum and count of the hIntervals of the channels updated in
// it; the trigger reads how many top-group channels passed `triggerUpdates`
// successes. Each is a sum over channels of a function of one channel's record
// (`contribution`), so a change of one record changes the aggregate by the
// difference of its two contributions: subtract the old, add the new.
//
// Exactly: counts are integers (exact in a double below 2^53). The hInterval sum
// is a floating-point sum that is added to and subtracted from in any order, so it
// is kept as Shewchuk's non-overlapping partials (the exact value of the sum,
// as Python's math.fsum keeps it) and read rounded once, correctly. The figure
// therefore depends only on the set of channels' hIntervals, never on the order
// of updates — the same bits as `statsOf` computes from scratch over the records.
// (`iirInputs` in iir.ts, the simulator's, sums naively in channel order: it may
// differ from this one in the last bits.)
//
// ICR also reads each channel's update rate at the round's time (channelHistory's
// rate depends on `now`), which no fixed set of running sums gives: `IcrScan`
// accumulates those inputs, exactly, over a pass through the records at the round;
// its window counts (in all and per group) are the aggregates' integers. CAF reads
// the same tally plus each group's sum and minimum of change intervals (tally.ts's
// GroupTally), which the same pass takes.
import { channelHistory } from './icr.js';
import { historyInterval, type IirInputs } from './iir.js';
import type { ChannelRecord, RecrawlState } from './state.js';
import type { GroupTally } from './tally.js';

/** An exact floating-point sum: non-overlapping partials, smallest magnitude first. */
export type ExactSum = number[];

/** Adds x to the exact sum `s` (in place). Subtracting is adding −x. */
export function exactAdd(s: ExactSum, x: number): void {
  let i = 0;
  for (let j = 0; j < s.length; j++) {
    let y = s[j]!;
    if (Math.abs(x) < Math.abs(y)) [x, y] = [y, x];
    const hi = x + y;
    const lo = y - (hi - x);
    if (lo !== 0) s[i++] = lo;
    x = hi;
  }
  s.length = i;
  s.push(x);
}

/** The exact sum rounded once to the nearest double (ties to even). */
export function exactValue(s: ExactSum): number {
  let n = s.length;
  if (n === 0) return 0;
  let hi = s[--n]!;
  let lo = 0;
  while (n > 0) {
    const x = hi;
    const y = s[--n]!;
    hi = x + y;
    const yr = hi - x;
    lo = y - yr;
    if (lo !== 0) break;
  }
  // Half-way cases: the partials below decide the direction of the rounding.
  if (n > 0 && ((lo < 0 && s[n - 1]! < 0) || (lo > 0 && s[n - 1]! > 0))) {
    const y = lo * 2;
    const x = hi + y;
    if (y === x - hi) hi = x;
  }
  return hi;
}

/** One group's aggregates over the current observation window. */
export interface GroupStats {
  /** Channels in the group. */
  members: number;
  /** Tasks submitted, successful and failed in the window (Σ subCount, sucCount, failCount). */
  sub: number;
  suc: number;
  fail: number;
  /** Channels with an update in the window (IIR's count of hIntervals). */
  updated: number;
  /** Channels with more than `triggerUpdates` updates in the window (the trigger, group 0). */
  over: number;
  /** Σ hInterval over the updated channels, exact. */
  hSum: ExactSum;
}

export function emptyStats(groups: number): GroupStats[] {
  return Array.from({ length: groups }, () => ({ members: 0, sub: 0, suc: 0, fail: 0, updated: 0, over: 0, hSum: [] }));
}

/** Adds (sign 1) or removes (sign −1) one channel's contribution to its group's aggregates. */
export function contribute(stats: GroupStats[], c: ChannelRecord, sign: 1 | -1, triggerUpdates: number): void {
  const g = stats[c.group];
  if (g === undefined) throw new RangeError(`no group ${c.group}`);
  g.members += sign;
  g.sub += sign * c.subCount;
  g.suc += sign * c.sucCount;
  g.fail += sign * c.failCount;
  if (c.sucCount > triggerUpdates) g.over += sign;
  const hi = historyInterval(c);
  if (hi !== null) {
    g.updated += sign;
    exactAdd(g.hSum, sign * hi);
  }
}

/** The aggregates computed from scratch over channel records (any order gives the same). */
export function statsOf(channels: readonly ChannelRecord[], groups: number, triggerUpdates: number): GroupStats[] {
  const s = emptyStats(groups);
  for (const c of channels) contribute(s, c, 1, triggerUpdates);
  return s;
}

/** A new window (after a round): every channel's counters start again at zero. */
export function resetStats(stats: GroupStats[]): void {
  for (const g of stats) {
    g.sub = 0;
    g.suc = 0;
    g.fail = 0;
    g.updated = 0;
    g.over = 0;
    g.hSum = [];
  }
}

/** IIR's inputs from the aggregates. */
export function iirInputsOf(stats: readonly GroupStats[]): IirInputs {
  return { sumIv: stats.map((g) => exactValue(g.hSum)), cnt: stats.map((g) => g.updated), sub: stats.map((g) => g.sub), suc: stats.map((g) => g.suc) };
}

/** The trigger's counts (RecrawlState.topCount and triggerCount) from the aggregates. */
export function triggerCounts(stats: readonly GroupStats[]): { topCount: number; triggerCount: number } {
  return { topCount: stats[0]?.members ?? 0, triggerCount: stats[0]?.over ?? 0 };
}

/** ICR's and CAF's inputs over a pass through the channel records at time `now`, summed
 * exactly (so the pass may visit the records in any order). Window counts come from the aggregates. */
export class IcrScan {
  private readonly tSum: ExactSum[];
  private readonly changeSum: ExactSum[];
  private readonly changeMin: number[];
  private readonly tKnown: number[];
  private readonly members: number[];
  private readonly allT: ExactSum = [];
  private allN = 0;
  private readonly load: ExactSum = [];

  constructor(
    private readonly state: RecrawlState,
    private readonly now: number,
  ) {
    const k = state.groups.length;
    this.tSum = Array.from({ length: k }, () => []);
    this.changeSum = Array.from({ length: k }, () => []);
    this.changeMin = new Array<number>(k).fill(Infinity);
    this.tKnown = new Array<number>(k).fill(0);
    this.members = new Array<number>(k).fill(0);
  }

  add(c: ChannelRecord): void {
    this.members[c.group]! += 1;
    exactAdd(this.changeSum[c.group]!, c.changeInterval);
    this.changeMin[c.group] = Math.min(this.changeMin[c.group]!, c.changeInterval);
    const h = channelHistory(c, this.now, this.state.groups[c.group]!.interval);
    if (h.meanDownload === null) return;
    exactAdd(this.tSum[c.group]!, h.meanDownload);
    this.tKnown[c.group]! += 1;
    exactAdd(this.allT, h.meanDownload);
    this.allN += 1;
    exactAdd(this.load, h.rate * h.meanDownload);
  }

  inputs(stats: readonly GroupStats[]): GroupTally {
    return {
      changeSum: this.changeSum.map(exactValue),
      changeMin: [...this.changeMin],
      tSum: this.tSum.map(exactValue),
      tKnown: [...this.tKnown],
      members: [...this.members],
      allT: exactValue(this.allT),
      allN: this.allN,
      observedLoad: exactValue(this.load),
      sub: stats.reduce((a, g) => a + g.sub, 0),
      suc: stats.reduce((a, g) => a + g.suc, 0),
      subBy: stats.map((g) => g.sub),
      sucBy: stats.map((g) => g.suc),
    };
  }
}
