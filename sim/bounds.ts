// The capacity bound of a run (issue 12, item 3): the best formula-(5) scores
// and the best true freshness the run's measured crawler capacity could
// deliver, whatever the strategy.
//
// Capacity: W thread-minutes online (online crawlers × threads, integrated over
// the run; the churn is the same for every strategy of a run, so W is too).
// Cost: d, the mean download time of a completed task — the least any strategy
// of the run achieved. A strategy s completed C_s tasks at mean cost d_s with
// C_s · d_s ≤ W (each completion occupied a thread that long), so no strategy of
// the run completed more than C* = W / d.
// * Formula (5) credits a completion of a channel of group g with R_g · θ_g / (N·T)
//   (θ_g its change interval): the bound gives all C* completions the largest
//   credit. With the paper's weights and intervals R_g · θ_g = 960 for every group,
//   so the weighted bound is 960 · C* / (N·T), and the weighted score of a strategy
//   over it is the share of all thread-minutes that went into completed tasks.
//   Unweighted, the largest credit is the slowest group's θ (also 960 here).
// * Freshness: the split of C* recrawls across the groups that maximises the
//   expected freshness of Poisson-changing channels recrawled periodically
//   (src/recrawl/freshness-allocation.ts), plus the head start every copy has at
//   t = 0 (fresh until its channel first changes). An expected value: one run's
//   change process can land a little above it, by chance, never by much.
import { allocateFrequencies, meanFreshness, type AllocationGroup } from '../src/recrawl/freshness-allocation.js';
import { groupWeights } from '../src/recrawl/quality.js';
import type { StrategyResult } from './result.js';
import type { World } from './world.js';

export interface Bounds {
  updateQualityWeighted: number;
  updateQuality: number;
  freshness: number;
  /** C*: the most tasks the capacity could have completed. */
  completions: number;
  /** W: thread-minutes online. */
  threadMinutes: number;
  /** d: mean download time of a completed task (minutes), the least of the run's strategies. */
  taskMinutes: number;
}

/** A strategy's scores as fractions of the bound. */
export interface OfBound {
  updateQualityWeighted: number;
  updateQuality: number;
  freshness: number;
}

export function computeBounds(world: World, steps: number, results: readonly StrategyResult[]): Bounds | null {
  let W = 0;
  let d = Infinity;
  for (const r of results) {
    W = Math.max(W, r.capacity.threadMinutes);
    if (r.outcomes.completed > 0) d = Math.min(d, r.capacity.completedMinutes / r.outcomes.completed);
  }
  if (!(W > 0 && Number.isFinite(d) && d > 0)) return null;
  const H = world.config.hosts;
  const T = steps;
  const completions = W / d;
  const K = world.config.changeIntervals.length;
  const weights = groupWeights(K);
  const sizes = new Array<number>(K).fill(0);
  const changeSum = new Array<number>(K).fill(0);
  let bestWeighted = 0;
  let bestUnweighted = 0;
  let headStart = 0;
  for (let h = 0; h < H; h++) {
    const g = world.group[h]!;
    const theta = world.changeInterval[h]!;
    sizes[g]! += 1;
    changeSum[g]! += theta;
    bestWeighted = Math.max(bestWeighted, weights[g]! * theta);
    bestUnweighted = Math.max(bestUnweighted, theta);
    // E[min(first change, T)] / T: fresh from t = 0 until the first change.
    headStart += (theta * -Math.expm1(-T / theta)) / T;
  }
  const groups: AllocationGroup[] = [];
  for (let g = 0; g < K; g++) {
    if (sizes[g] === 0) continue;
    groups.push({ channels: sizes[g]!, changeInterval: changeSum[g]! / sizes[g]!, cost: d, minFrequency: 1e-12, maxFrequency: 1e6 });
  }
  const f = allocateFrequencies(groups, W / T);
  const freshness = Math.min(1, meanFreshness(groups, f) + headStart / H);
  return {
    updateQualityWeighted: (bestWeighted * completions) / (H * T),
    updateQuality: (bestUnweighted * completions) / (H * T),
    freshness,
    completions,
    threadMinutes: W,
    taskMinutes: d,
  };
}

export function ofBound(r: StrategyResult, b: Bounds): OfBound {
  return {
    updateQualityWeighted: r.updateQualityWeighted / b.updateQualityWeighted,
    updateQuality: r.updateQuality / b.updateQuality,
    freshness: r.freshness / b.freshness,
  };
}
