// How to spend a recrawl budget across groups of channels to keep the stored
// copies as fresh as possible (Cho & Garcia-Molina, "Effective page refresh
// policies", TODS 2003): the arithmetic behind the CAF strategy (caf.ts) and
// the simulator's freshness bound (sim/bounds.ts). Pure.
//
// A channel changing as a Poisson process of rate λ and recrawled every I
// (frequency f = 1/I) is fresh a fraction F = (1 − e^(−r)) / r of the time on
// average, r = λ/f = λI. F is concave and increasing in f, so the best split of
// a budget Σ n_g f_g c_g = B (c_g: what one recrawl of group g costs) gives
// every group the same marginal freshness per unit of cost:
//   ∂F/∂f = (1 − e^(−r)(1 + r)) / λ = μ c_g,
// and a group whose first recrawl is worth less than μ c_g (1/λ < μ c_g: it
// changes too fast to keep fresh at that price) gets only its floor.

/** Mean freshness of a channel with change rate λ recrawled at frequency f (both per time unit). */
export function periodicFreshness(lambda: number, f: number): number {
  if (f <= 0) return 0;
  const r = lambda / f;
  if (r < 1e-9) return 1;
  return -Math.expm1(-r) / r;
}

/** ∂F/∂f at frequency f. */
function marginal(lambda: number, f: number): number {
  if (f <= 0) return 1 / lambda;
  const r = lambda / f;
  // 1 − e^(−r)(1 + r), accurate for small r too
  const g = r < 1e-4 ? (r * r) / 2 : -Math.expm1(-r) - r * Math.exp(-r);
  return g / lambda;
}

/** The frequency at which ∂F/∂f equals m (bisection on log f; ∂F/∂f falls as f grows). */
function frequencyAtMarginal(lambda: number, m: number, fMin: number, fMax: number): number {
  if (marginal(lambda, fMin) <= m) return fMin;
  if (marginal(lambda, fMax) >= m) return fMax;
  let lo = Math.log(fMin);
  let hi = Math.log(fMax);
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (marginal(lambda, Math.exp(mid)) > m) lo = mid;
    else hi = mid;
  }
  return Math.exp((lo + hi) / 2);
}

export interface AllocationGroup {
  /** Channels in the group. */
  channels: number;
  /** Their change interval (1/λ). */
  changeInterval: number;
  /** What one recrawl costs (e.g. thread-minutes), > 0. */
  cost: number;
  /** Frequency bounds (per time unit), 0 < minFrequency ≤ maxFrequency. */
  minFrequency: number;
  maxFrequency: number;
}

/** Σ n_g f_g c_g of an allocation. */
function spend(groups: readonly AllocationGroup[], f: readonly number[]): number {
  let s = 0;
  groups.forEach((g, i) => (s += g.channels * f[i]! * g.cost));
  return s;
}

/**
 * Recrawl frequencies, one per group, that maximise the channels' mean freshness
 * for a budget Σ n_g f_g c_g = budget, each within its bounds. A budget below the
 * floors' cost gives the floors; one above the ceilings' cost gives the ceilings.
 */
export function allocateFrequencies(groups: readonly AllocationGroup[], budget: number): number[] {
  for (const g of groups) {
    if (!(g.channels >= 0 && g.changeInterval > 0 && g.cost > 0 && g.minFrequency > 0 && g.maxFrequency >= g.minFrequency)) {
      throw new RangeError('allocateFrequencies: each group needs channels ≥ 0, changeInterval > 0, cost > 0, 0 < minFrequency ≤ maxFrequency');
    }
  }
  if (!(budget >= 0 && Number.isFinite(budget))) throw new RangeError(`allocateFrequencies: budget must be finite and ≥ 0 (got ${budget})`);
  const at = (mu: number) => groups.map((g) => frequencyAtMarginal(1 / g.changeInterval, mu * g.cost, g.minFrequency, g.maxFrequency));
  const floors = groups.map((g) => g.minFrequency);
  if (spend(groups, floors) >= budget) return floors;
  const ceilings = groups.map((g) => g.maxFrequency);
  if (spend(groups, ceilings) <= budget) return ceilings;
  // μ large → floors (spend too little); μ small → ceilings. Bisect on log μ.
  let lo = Math.log(1e-30);
  let hi = Math.log(1e30);
  for (let i = 0; i < 200; i++) {
    const mid = (lo + hi) / 2;
    if (spend(groups, at(Math.exp(mid))) > budget) lo = mid;
    else hi = mid;
  }
  return at(Math.exp(hi));
}

/** Mean freshness over all channels of an allocation. */
export function meanFreshness(groups: readonly AllocationGroup[], f: readonly number[]): number {
  let n = 0;
  let s = 0;
  groups.forEach((g, i) => {
    n += g.channels;
    s += g.channels * periodicFreshness(1 / g.changeInterval, f[i]!);
  });
  return n > 0 ? s / n : 0;
}
