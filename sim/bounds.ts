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
//
// Beside it, the same bound on the thread-minutes departures leave (issue 12:
// which part of the gap is unavoidable). A crawler leaves after a session whose
// length the strategy does not choose (sim/world.ts: lifetime Normal(1000, 200)
// minutes, rejoin after Normal(600, 200); the same churn stream for every
// strategy of a run), and work running on it then is lost (or restarted
// elsewhere after a notified departure). A strategy s keeps busy b_s of the W
// thread-minutes and loses a share λ_s = lost_s / b_s of them, so its completed
// thread-minutes are at most b_s · (1 − λ_s) ≤ W · (1 − λ_s). With λ the least
// such share of the run's strategies (as d is their least task cost), no
// strategy of the run completed more than C*_dep = W · (1 − λ) / d: still an
// upper bound for every strategy of the run, by construction, and tighter by
// the work departures destroy. Like d, λ is measured, not derived: placement
// that knew a crawler's remaining session (the model's lifetimes are Normal, so
// age predicts it; real volunteers' sessions are heavy-tailed and age predicts
// the opposite) could lose less. See docs/sim.md "The bound after departures".
import { allocateFrequencies, meanFreshness, type AllocationGroup } from '../src/recrawl/freshness-allocation.js';
import { groupWeights } from '../src/recrawl/quality.js';
import type { StrategyResult } from './result.js';
import type { World } from './world.js';

/** A bound's three figures, and the completions they assume. */
export interface BoundFigures {
  updateQualityWeighted: number;
  updateQuality: number;
  freshness: number;
  /** The most tasks the thread-minutes it counts could have completed. */
  completions: number;
}

export interface Bounds extends BoundFigures {
  /** W: thread-minutes online (completions is C* = W / d). */
  threadMinutes: number;
  /** d: mean download time of a completed task (minutes), the least of the run's strategies. */
  taskMinutes: number;
  /** The same bound on the thread-minutes left after departures: W · (1 − lostShare). */
  afterDepartures: BoundFigures & {
    /** λ: the least share of its busy thread-minutes any strategy of the run lost to departing crawlers. */
    lostShare: number;
  };
}

/** A strategy's scores as fractions of the bound, and of the bound after departures. */
export interface OfBound {
  updateQualityWeighted: number;
  updateQuality: number;
  freshness: number;
  afterDepartures: { updateQualityWeighted: number; updateQuality: number; freshness: number };
}

/** λ of the run: the least share of busy thread-minutes a strategy lost to departures. */
export function leastLostShare(results: readonly StrategyResult[]): number {
  let share = Infinity;
  for (const r of results) if (r.capacity.busyMinutes > 0) share = Math.min(share, r.capacity.lostMinutes / r.capacity.busyMinutes);
  return Number.isFinite(share) ? share : 0;
}

export function computeBounds(world: World, steps: number, results: readonly StrategyResult[]): Bounds | null {
  let W = 0;
  let d = Infinity;
  for (const r of results) {
    W = Math.max(W, r.capacity.threadMinutes);
    if (r.outcomes.completed > 0) d = Math.min(d, r.capacity.completedMinutes / r.outcomes.completed);
  }
  if (!(W > 0 && Number.isFinite(d) && d > 0)) return null;
  const lostShare = leastLostShare(results);
  return {
    ...boundFigures(world, steps, W, d),
    threadMinutes: W,
    taskMinutes: d,
    afterDepartures: { ...boundFigures(world, steps, W * (1 - lostShare), d), lostShare },
  };
}

/** The bound's figures for `threadMinutes` of capacity at `taskMinutes` a completed task. */
function boundFigures(world: World, steps: number, threadMinutes: number, taskMinutes: number): BoundFigures {
  const H = world.config.hosts;
  const T = steps;
  const completions = threadMinutes / taskMinutes;
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
    groups.push({ channels: sizes[g]!, changeInterval: changeSum[g]! / sizes[g]!, cost: taskMinutes, minFrequency: 1e-12, maxFrequency: 1e6 });
  }
  const f = allocateFrequencies(groups, threadMinutes / T);
  return {
    updateQualityWeighted: (bestWeighted * completions) / (H * T),
    updateQuality: (bestUnweighted * completions) / (H * T),
    freshness: Math.min(1, meanFreshness(groups, f) + headStart / H),
    completions,
  };
}

export function ofBound(r: StrategyResult, b: Bounds): OfBound {
  const a = b.afterDepartures;
  return {
    updateQualityWeighted: r.updateQualityWeighted / b.updateQualityWeighted,
    updateQuality: r.updateQuality / b.updateQuality,
    freshness: r.freshness / b.freshness,
    afterDepartures: {
      updateQualityWeighted: r.updateQualityWeighted / a.updateQualityWeighted,
      updateQuality: r.updateQuality / a.updateQuality,
      freshness: r.freshness / a.freshness,
    },
  };
}
