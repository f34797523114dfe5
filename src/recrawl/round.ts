// What every adaptive strategy's round shares: its report, the paper's
// checkPriorities, the floor and ceiling on group intervals, and the start of
// a new observation window.

import type { StrategyName } from './options.js';
import type { RecrawlState } from './state.js';

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
export function clampIntervals(state: RecrawlState, ivs: number[]): number[] {
  const o = state.options;
  return ivs.map((v) => {
    let x = Math.max(v, o.minInterval);
    if (o.maxInterval !== null) x = Math.min(x, o.maxInterval);
    return x;
  });
}

export function resetWindow(state: RecrawlState, now: number): void {
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
