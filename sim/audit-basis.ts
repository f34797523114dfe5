// The ground the paper audit (sim/audit.ts) stands on: which table holds what, the change
// interval θ and formula (5)'s weight of each rank, the rounding allowance, and the verdict
// a published figure gets against its bound. Apart so that every check reads the tables
// through the same few accessors and judges with the same rule.
import type { PaperQualityTable, PaperScenario, PaperTaskTable } from './paper-tables.js';
import { groupWeights } from '../src/recrawl/quality.js';
import { PAPER_SETUP, TABLE_1, TABLE_2, TABLE_3, TABLE_4 } from './paper-tables.js';

/** Allowance before a published figure above its bound counts as infeasible: task counts
 * are printed to 3 decimals of 10⁶ (≤ 0.06% of a rank's θ × tasks sum), and a run that
 * submits every channel once more at step 0 adds N × mean θ ≤ 0.3% to the channel-minutes
 * derived from FIXED. Together < 0.5%. */
export const MARGIN = 0.005;

/** Half a unit in the last printed digit of a task count (0.001E6). */
export const TASK_ROUNDING = 500;

export type Verdict = 'feasible' | 'marginal' | 'infeasible';

/** feasible: published ≤ bound; marginal: above it by at most MARGIN; infeasible: beyond. */
export function verdictOf(published: number, bound: number, margin = MARGIN): Verdict {
  if (published <= bound) return 'feasible';
  return published <= bound * (1 + margin) ? 'marginal' : 'infeasible';
}

/** Which Tables a scenario's figures are in: rec = Tables 1 (tasks) and 2 (quality), ruc = 3 and 4. */
export const taskTable = (s: PaperScenario): PaperTaskTable => (s === 'rec' ? TABLE_1 : TABLE_3);
export const qualityTable = (s: PaperScenario): PaperQualityTable => (s === 'rec' ? TABLE_2 : TABLE_4);
export const theta = (rank: number): number => PAPER_SETUP.changeInterval[rank]!;
/** Formula (5)'s weight of paper rank r (4 = the 60-minute group): src/recrawl/quality.ts's
 * groupWeights, our group g = K − 1 − r. audit-transcription.ts holds it to §4.1's words. */
const RANKS = TABLE_1.rows.length;
export const weight = (rank: number): number => groupWeights(RANKS)[RANKS - 1 - rank]!;

export interface BoundSide {
  /** Best formula-(5) score with every published task succeeding. */
  bound: number;
  published: number;
  /** published / bound: the success rate the figure needs (task-weighted for the weighted
   * score, θ × tasks-weighted for the unweighted one); > 1 is impossible. */
  required: number;
  verdict: Verdict;
}

/** A published figure beside its bound, with the success rate it needs and its verdict. */
export function side(published: number, bound: number): BoundSide {
  return { bound, published, required: published / bound, verdict: verdictOf(published, bound) };
}

/** Figures as the paper prints them: task counts in units of 10⁶, rates in percent. */
export const e6 = (x: number, d = 3): string => `${(x / 1e6).toFixed(d)}E6`;
export const pct = (x: number, d = 1): string => `${(x * 100).toFixed(d)}%`;
