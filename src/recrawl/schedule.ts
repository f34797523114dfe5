// When a strategy runs a round, and which round it runs.

import { reassignCAF } from './caf.js';
import { reassignICR } from './icr.js';
import { reassignIIR } from './iir.js';
import type { RoundReport } from './round.js';
import type { RecrawlState } from './state.js';

export function shouldReassign(state: RecrawlState, now: number): boolean {
  const o = state.options;
  if (o.strategy === 'fixed') return false;
  // CAF steers on a clock: its top group may be the one it recrawls least.
  if (o.strategy === 'caf') return now - state.windowStart >= o.cafPeriod;
  const top = state.topCount;
  if (top > 0 && state.triggerCount >= o.triggerFraction * top) return true;
  return o.maxRoundGap !== null && now - state.windowStart >= o.maxRoundGap;
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
