// The recrawl strategies' names and options: defaults, and the one check that
// every option is in range (recrawlOptions). docs/recrawl.md, "Constants", says
// why each default is what it is.

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
  /** CAF: the budget follows the online task threads between rounds (it is steered
   * per thread), so crawlers leaving or joining change it at once, not over rounds. */
  cafFollowThreads: boolean;
  /** CAF: a task may wait for a thread up to this many of its channel's intervals
   * (the others: one), and a channel whose last task is still waiting is not
   * submitted again when it falls due: the waiting task stands for it. 1 = every
   * due channel is submitted and a task still waiting then expires. */
  cafWaitIntervals: number;
  /** CAF: within a group, a channel is recrawled at its group's interval × (its own
   * mean download time ÷ the group's)^this (0: every channel at its group's interval):
   * a cheap channel more often, a costly one less — for the same thread-time, more
   * updates (formula (5) counts updates) and fresher copies. */
  cafCostExponent: number;
  /** CAF: that factor stays within [1 / this, this]. */
  cafCostSpread: number;
}

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
  cafBackoff: 1,
  cafMaxBackoff: 16,
  cafFollowThreads: false,
  cafWaitIntervals: 2,
  cafCostExponent: 0,
  cafCostSpread: 2,
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
  if (typeof o.cafFollowThreads !== 'boolean') bad('cafFollowThreads must be a boolean');
  if (!(o.cafWaitIntervals >= 1 && Number.isFinite(o.cafWaitIntervals))) bad('cafWaitIntervals must be finite and >= 1');
  if (!(o.cafCostExponent >= 0 && o.cafCostExponent <= 1)) bad('cafCostExponent must be in [0, 1]');
  if (!(o.cafCostSpread >= 1 && Number.isFinite(o.cafCostSpread))) bad('cafCostSpread must be finite and >= 1');
  return o;
}
