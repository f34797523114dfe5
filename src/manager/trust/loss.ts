// Does a volunteer lose tasks more than its peers do? A task acknowledged and
// never uploaded (a "drop") looks like a task lost to churn or an overloaded
// machine, so one lost task says nothing, and a fixed weight per lost task
// quarantined an honest volunteer on an overloaded benchmark machine. What
// tells a dropper apart is that it loses its tasks while the others, on the
// same network and the same manager, do not: a one-sided binomial test of its
// lost tasks against the others' loss rate. On a quiet network (others lose 5 %)
// three lost of three stand out (p = 1.3e-4); on an overloaded one (others lose
// 70 %) it takes about twenty lost in a row. Pure.
import { betaCdf } from './stats.js';

export interface LossOptions {
  /** Significance of the test: a loss count this unlikely under the others' rate stands out. */
  alpha: number;
  /** No verdict below this many lost tasks. */
  minLost: number;
}

export const DEFAULT_LOSS: Readonly<LossOptions> = Object.freeze({ alpha: 0.001, minLost: 3 });

export interface LossTest {
  standsOut: boolean;
  /** P(X ≥ lost) for X ~ Binomial(held, baseRate). */
  pValue: number;
  /** The others' loss rate (Laplace-smoothed). */
  baseRate: number;
}

/** Tests `lost` of the volunteer's `held` tasks against the others' `othersLost` of `othersHeld`. */
export function lossStandsOut(lost: number, held: number, othersLost: number, othersHeld: number, o: LossOptions = DEFAULT_LOSS): LossTest {
  const baseRate = (Math.max(0, othersLost) + 1) / (Math.max(0, othersHeld) + 2);
  const n = Math.max(held, lost);
  // P(X ≥ k) = I_p(k, n − k + 1) for k ≥ 1.
  const pValue = lost >= 1 ? betaCdf(baseRate, lost, n - lost + 1) : 1;
  return { standsOut: lost >= o.minLost && pValue < o.alpha, pValue, baseRate };
}
