// IIR, the paper's individual interval reassignment (§3.1): each group's next
// interval is the mean achieved update interval of its channels, encouraged
// by δ when its success rate improved.

import { checkPriorities, clampIntervals, resetWindow, type RoundReport } from './round.js';
import type { ChannelRecord, RecrawlState } from './state.js';

/** hInterval of a channel: the mean gap between consecutive successful updates over
 * the gaps that ended in the current window (the first of them measured from the
 * update before the window, or from the state's creation). null when the channel had
 * no update in the window: it then has no say in its group's new interval. */
export function historyInterval(c: ChannelRecord): number | null {
  return c.sucCount > 0 ? c.gapSum / c.sucCount : null;
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
