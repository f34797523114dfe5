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

/** What the loss test reads of a reputation record. */
export interface LossRecord {
  id: string;
  /** Primary tasks held (finished or lost). */
  tasks?: number;
  /** Primary tasks lost; absent in records from before session 13. */
  lostTasks?: number;
  /** Check crawls accepted; absent in records from before session 13. */
  checkCrawls?: number;
  /** Every lost crawl: primary tasks and check crawls. */
  totals: { lost: number };
}

/** Lost primary tasks. A record from before `lostTasks` was kept has at most its lost
 * crawls of any kind, and no more than its tasks. */
export function lostTasksOf(r: LossRecord): number {
  return r.lostTasks ?? Math.min(r.totals.lost, r.tasks ?? 0);
}

/** Lost crawls and crawls held, on one basis: primary tasks and check crawls both when the
 * record counts its check crawls, else primary tasks alone (counting every lost crawl
 * against primary tasks made "lost 5 of 1", and quarantined a volunteer that had lost
 * four check crawls by its first lost task). */
export function lossCounts(r: LossRecord): { lost: number; held: number } {
  if (r.checkCrawls === undefined) return { lost: lostTasksOf(r), held: r.tasks ?? 0 };
  const held = (r.tasks ?? 0) + r.checkCrawls;
  return { lost: Math.min(r.totals.lost, held), held };
}

/** `held`'s lost crawls against everyone else's in `all`, and the reason a verdict would give. */
export function lossAgainstOthers(held: LossRecord, all: Iterable<LossRecord>, o: LossOptions = DEFAULT_LOSS): LossTest & { reason: string } {
  let othersLost = 0;
  let othersHeld = 0;
  for (const r of all) {
    if (r.id === held.id) continue;
    const c = lossCounts(r);
    othersLost += c.lost;
    othersHeld += c.held;
  }
  const { lost, held: n } = lossCounts(held);
  const what = held.checkCrawls === undefined ? 'tasks' : 'tasks and check crawls';
  const test = lossStandsOut(lost, n, othersLost, othersHeld, o);
  return { ...test, reason: `lost ${lost} of ${n} ${what} while the others lose ${(test.baseRate * 100).toFixed(1)} % (p = ${test.pValue.toExponential(1)})` };
}
