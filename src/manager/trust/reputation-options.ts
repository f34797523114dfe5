// The reputation rule's parameters and their defaults (docs/trust.md says why
// each is what it is).
import { mergeOptions, optionChecker } from '../../options.js';

export interface ReputationOptions {
  /** Prior pseudo-count of disagreements (Beta's first parameter for q). */
  priorDisagree: number;
  /** Prior pseudo-count of agreements. */
  priorAgree: number;
  /** A volunteer whose checks disagree more often than this is unacceptable. */
  badRate: number;
  /** Quarantine when P(q > badRate) reaches this. */
  quarantineConfidence: number;
  /** Suspect (every task re-checked) when P(q > badRate) reaches this. */
  suspectConfidence: number;
  /** A volunteer whose checks disagree less often than this is good. */
  goodRate: number;
  /** Trusted when P(q < goodRate) reaches this. */
  trustConfidence: number;
  /** Checks after a disagreement during which the volunteer stays suspect. */
  probationChecks: number;
  /** Evidence discount per outcome, in (0, 1]. */
  decay: number;
  /** Factor applied to the agreement weight on each disagreement, in [0, 1]. */
  forgetOnDisagree: number;
  /** Spot-check rate of an identity with no evidence (lowered as agreements accrue). */
  newRate: number;
  /** Spot-check rate a long-trusted volunteer tends to. */
  trustedRate: number;
  /** Spot-check rate of a suspect. */
  suspectRate: number;
  /** Disagreement weight of a task acknowledged and never delivered (churn
   * does this too, so it is weak evidence and starts no probation). */
  lostWeight: number;
  /** Weight of a coordinate or cell-announcement check (overlay ledger), either way. */
  coordinateWeight: number;
}

export const DEFAULT_REPUTATION: Readonly<ReputationOptions> = Object.freeze({
  priorDisagree: 1,
  priorAgree: 1,
  badRate: 0.25,
  quarantineConfidence: 0.95,
  suspectConfidence: 0.9,
  goodRate: 0.1,
  trustConfidence: 0.8,
  probationChecks: 3,
  decay: 0.98,
  forgetOnDisagree: 0.5,
  newRate: 0.08,
  trustedRate: 0.02,
  suspectRate: 1,
  lostWeight: 0.25,
  coordinateWeight: 1,
});

/** Defaults merged with `partial`, validated; throws RangeError naming the bad option. */
export function reputationOptions(partial: Partial<ReputationOptions> = {}): ReputationOptions {
  const o = mergeOptions<ReputationOptions>('reputationOptions', DEFAULT_REPUTATION, partial);
  const check = optionChecker('reputationOptions');
  const prob = (x: number): boolean => Number.isFinite(x) && x > 0 && x < 1;
  check(Number.isFinite(o.priorDisagree) && o.priorDisagree > 0, `priorDisagree must be > 0, got ${o.priorDisagree}`);
  check(Number.isFinite(o.priorAgree) && o.priorAgree > 0, `priorAgree must be > 0, got ${o.priorAgree}`);
  check(prob(o.badRate), `badRate must be in (0, 1), got ${o.badRate}`);
  check(prob(o.goodRate) && o.goodRate < o.badRate, `goodRate must be in (0, badRate), got ${o.goodRate}`);
  check(prob(o.quarantineConfidence), `quarantineConfidence must be in (0, 1), got ${o.quarantineConfidence}`);
  check(prob(o.suspectConfidence) && o.suspectConfidence <= o.quarantineConfidence,
    `suspectConfidence must be in (0, quarantineConfidence], got ${o.suspectConfidence}`);
  check(prob(o.trustConfidence), `trustConfidence must be in (0, 1), got ${o.trustConfidence}`);
  check(Number.isInteger(o.probationChecks) && o.probationChecks >= 0, `probationChecks must be an integer >= 0, got ${o.probationChecks}`);
  check(Number.isFinite(o.decay) && o.decay > 0 && o.decay <= 1, `decay must be in (0, 1], got ${o.decay}`);
  check(Number.isFinite(o.forgetOnDisagree) && o.forgetOnDisagree >= 0 && o.forgetOnDisagree <= 1,
    `forgetOnDisagree must be in [0, 1], got ${o.forgetOnDisagree}`);
  for (const k of ['newRate', 'trustedRate', 'suspectRate'] as const) {
    check(Number.isFinite(o[k]) && o[k] >= 0 && o[k] <= 1, `${k} must be in [0, 1], got ${o[k]}`);
  }
  check(o.trustedRate <= o.newRate, `trustedRate (${o.trustedRate}) must not exceed newRate (${o.newRate})`);
  check(Number.isFinite(o.lostWeight) && o.lostWeight >= 0, `lostWeight must be >= 0, got ${o.lostWeight}`);
  check(Number.isFinite(o.coordinateWeight) && o.coordinateWeight >= 0, `coordinateWeight must be >= 0, got ${o.coordinateWeight}`);
  return o;
}
