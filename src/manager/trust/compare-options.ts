// The comparison's parameters (compare.ts): defaults, validation, and the
// disagreement reasons they weigh.
import { mergeOptions, optionChecker } from '../../options.js';

export interface CompareOptions {
  /** Rate assumed when the channel's is unknown (changes per page per minute). */
  unknownRatePerMinute: number;
  /** The estimated rate is multiplied by this (≥ 1): estimates are noisy and pages within a channel differ. */
  rateSafetyFactor: number;
  /** P(change) never below this: what the model does not know. */
  pChangeFloor: number;
  /** Pages more likely than this to have changed are compared on title and length only, never counted. */
  checkableMaxPChange: number;
  /** Significance of the mismatch count test. */
  alpha: number;
  /** Mismatching pages needed before the test may accuse (≥ 2: one page never does). */
  minMismatches: number;
  /** A volunteer's claimed fetch time is trusted within ± this of its trusted window. */
  clockSkewMs: number;
  /** At most this many words may differ in their digits for a page to count as volatile. */
  maxVolatileWords: number;
  /** With a per-page rate, a page this stable (P(change) ≤ this) gets no volatile allowance. */
  strictDigitsMaxPChange: number;
  /** A completed crawl that has less than this fraction of what the other found has not crawled. */
  minCoverage: number;
  /** ... and it must miss at least this many pages (or have none at all). */
  minMissing: number;
  /** Injected inter-site links: at least this many only one crawl reported. */
  minInjectedLinks: number;
  /** Changed pages whose lengths are within this ratio (and same title) are "consistent". */
  changedLengthRatio: number;
  /** Weights of the evidence by reason (reputation weights). */
  weights: Readonly<Record<DisagreementReason, number>>;
}

export const DISAGREEMENT_REASONS = ['contradiction', 'mismatch', 'not-crawled', 'failure-claim', 'injected-links'] as const;
export type DisagreementReason = (typeof DISAGREEMENT_REASONS)[number];

export const DEFAULT_COMPARE: Readonly<CompareOptions> = Object.freeze({
  unknownRatePerMinute: 1 / 30,
  rateSafetyFactor: 2,
  pChangeFloor: 0.005,
  checkableMaxPChange: 0.2,
  alpha: 1e-3,
  minMismatches: 2,
  clockSkewMs: 60_000,
  maxVolatileWords: 3,
  strictDigitsMaxPChange: 0.01,
  minCoverage: 0.5,
  minMissing: 3,
  minInjectedLinks: 3,
  changedLengthRatio: 0.5,
  weights: Object.freeze({ contradiction: 2, mismatch: 1, 'not-crawled': 0.5, 'failure-claim': 0.5, 'injected-links': 1 }),
});

/** Defaults merged with `partial`, validated; throws RangeError naming the bad option. */
export function compareOptions(partial: Partial<CompareOptions> = {}): CompareOptions {
  const o = mergeOptions<CompareOptions>('compareOptions', DEFAULT_COMPARE, partial);
  o.weights = { ...DEFAULT_COMPARE.weights, ...partial.weights };
  const check = optionChecker('compareOptions');
  const prob = (x: number): boolean => Number.isFinite(x) && x >= 0 && x <= 1;
  check(Number.isFinite(o.unknownRatePerMinute) && o.unknownRatePerMinute >= 0, `unknownRatePerMinute must be >= 0, got ${o.unknownRatePerMinute}`);
  check(Number.isFinite(o.rateSafetyFactor) && o.rateSafetyFactor >= 1, `rateSafetyFactor must be >= 1, got ${o.rateSafetyFactor}`);
  check(prob(o.pChangeFloor) && o.pChangeFloor < 1, `pChangeFloor must be in [0, 1), got ${o.pChangeFloor}`);
  check(prob(o.checkableMaxPChange), `checkableMaxPChange must be in [0, 1], got ${o.checkableMaxPChange}`);
  check(Number.isFinite(o.alpha) && o.alpha > 0 && o.alpha < 1, `alpha must be in (0, 1), got ${o.alpha}`);
  check(Number.isInteger(o.minMismatches) && o.minMismatches >= 2, `minMismatches must be an integer >= 2, got ${o.minMismatches}`);
  check(Number.isFinite(o.clockSkewMs) && o.clockSkewMs >= 0, `clockSkewMs must be >= 0, got ${o.clockSkewMs}`);
  check(Number.isInteger(o.maxVolatileWords) && o.maxVolatileWords >= 0, `maxVolatileWords must be an integer >= 0, got ${o.maxVolatileWords}`);
  check(prob(o.strictDigitsMaxPChange), `strictDigitsMaxPChange must be in [0, 1], got ${o.strictDigitsMaxPChange}`);
  check(prob(o.minCoverage), `minCoverage must be in [0, 1], got ${o.minCoverage}`);
  check(Number.isInteger(o.minMissing) && o.minMissing >= 1, `minMissing must be an integer >= 1, got ${o.minMissing}`);
  check(Number.isInteger(o.minInjectedLinks) && o.minInjectedLinks >= 1, `minInjectedLinks must be an integer >= 1, got ${o.minInjectedLinks}`);
  check(prob(o.changedLengthRatio), `changedLengthRatio must be in [0, 1], got ${o.changedLengthRatio}`);
  for (const r of DISAGREEMENT_REASONS) check(Number.isFinite(o.weights[r]) && o.weights[r] >= 0, `weights.${r} must be >= 0`);
  return o;
}
