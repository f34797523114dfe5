// What one simulated strategy run measured, and how the raw counters of the
// engine become it: formula (5) (src/recrawl/quality.ts), freshness and age
// per rank, queues, throughput, load balance, and the capacity the crawlers
// offered (the input of the bound, sim/bounds.ts).
import type { StrategyName } from '../src/recrawl/index.js';
import { UpdateQualitySum } from '../src/recrawl/quality.js';
import type { Routing, RoutingStats } from './routing.js';
import type { SimModel } from './model.js';
import type { World } from './world.js';

export interface Sample {
  t: number;
  online: number;
  queued: number;
  running: number;
  /** System download rate over the last window (Mbit/s), bytes of completed tasks. */
  throughputMbps: number;
  completed: number;
  intervals: number[];
}

/** The crawlers' capacity over the run and how the strategy used it (thread-minutes). */
export interface CapacityUse {
  /** Σ over time of online crawlers × threads: identical for every strategy of a run (same churn). */
  threadMinutes: number;
  /** Thread-minutes spent on tasks that completed (Σ of their download times). */
  completedMinutes: number;
  /** Thread-minutes spent on any task, including work lost to departures and restarted after migration. */
  busyMinutes: number;
  /** Of busyMinutes: work on tasks whose crawler left (lost, or migrated and restarted). */
  lostMinutes: number;
  /** Of busyMinutes: work on tasks still running at the end. */
  inProgressMinutes: number;
  /** Online thread-minutes without a task (threadMinutes − busyMinutes, integrated on its own). */
  idleMinutes: number;
  /** Of idleMinutes: idle while tasks waited in other crawlers' queues (min(idle threads, waiting tasks)). */
  idleWaitingMinutes: number;
}

export interface StrategyResult {
  strategy: StrategyName;
  routing: Routing;
  model: SimModel;
  steps: number;
  groupSizes: number[];
  tasksTotal: number;
  tasksByRank: number[];
  completedByRank: number[];
  intervalByRank: number[];
  finalIntervalByRank: number[];
  updateQualityWeighted: number;
  updateQuality: number;
  /** Formula (5) per group (null for a group with no channels). */
  updateQualityByRank: (number | null)[];
  successRate: number;
  outcomes: { completed: number; failed: number; cancelled: number; lost: number; pendingAtEnd: number };
  migrations: number;
  forwards: number;
  /** Mean number of hops of a forwarded task (1 = the first crawler forwarded it once). */
  meanForwardHops: number;
  /** Tasks no crawler had room for, held beyond a queue's slots (model.fullSystem 'hold'). */
  held: number;
  /** Routing quality and what the overlay costs (sim/routing.ts). */
  routingStats: RoutingStats;
  meanQueuedPerCrawler: number;
  meanOnline: number;
  meanThroughput: number;
  meanTaskRttMs: number;
  meanDownloadMinutes: number;
  loadImbalance: number;
  /** The same within each bandwidth level, the largest: what placement adds to the
   * spread that bandwidth alone makes (a 2048 kbit/s crawler fetches ~1.5× the pages
   * of a 1024 one in the same busy time). */
  loadImbalanceSameBandwidth: number;
  /** Busy threads ÷ online threads, averaged over the samples. */
  threadUtilisation: number;
  freshnessByRank: number[];
  ageByRank: number[];
  freshness: number;
  meanAgeMinutes: number;
  capacity: CapacityUse;
  reassignments: number;
  maxRunningSeen: number;
  maxQueueSeen: number;
  events: number;
  wallSeconds: number;
  samples: Sample[];
}

/** The engine's raw counters at the end of a run. */
export interface RunCounters {
  submittedBy: Float64Array;
  completedBy: Float64Array;
  /** Successful updates per channel. */
  successes: Float64Array;
  outcomes: StrategyResult['outcomes'];
  migrations: number;
  held: number;
  rttSum: number;
  bytesTotal: number;
  pagesByCrawler: Float64Array;
  capacity: CapacityUse;
  intervalByRank: number[];
  finalIntervalByRank: number[];
  freshness: Float64Array;
  age: Float64Array;
  samples: Sample[];
  reassignments: number;
  maxRunningSeen: number;
  maxQueueSeen: number;
  events: number;
  wallSeconds: number;
  forwards: { count: number; hops: number };
  routingStats: RoutingStats;
}

export function summariseRun(world: World, strategy: StrategyName, routing: Routing, model: SimModel, T: number, r: RunCounters): StrategyResult {
  const H = world.config.hosts;
  const K = world.config.changeIntervals.length;
  const groupSizes = new Array<number>(K).fill(0);
  const freshBy = new Array<number>(K).fill(0);
  const ageBy = new Array<number>(K).fill(0);
  let freshAll = 0;
  let ageAll = 0;
  // Formula (5): every channel counts, one never updated with λ^actual = 0.
  const quality = new UpdateQualitySum(K);
  for (let h = 0; h < H; h++) {
    const g = world.group[h]!;
    groupSizes[g]! += 1;
    quality.add(g, r.successes[h]! / T, world.changeInterval[h]!);
    freshBy[g]! += r.freshness[h]!;
    ageBy[g]! += r.age[h]!;
    freshAll += r.freshness[h]!;
    ageAll += r.age[h]!;
  }
  for (let g = 0; g < K; g++) {
    const n = groupSizes[g]! || 1;
    freshBy[g] = freshBy[g]! / n;
    ageBy[g] = ageBy[g]! / n;
  }
  const q = quality.result();
  let pagesSum = 0;
  let pagesMax = 0;
  for (const p of r.pagesByCrawler) {
    pagesSum += p;
    if (p > pagesMax) pagesMax = p;
  }
  const pagesMean = pagesSum / r.pagesByCrawler.length;
  const levelsN = world.config.bandwidthsKbps.length;
  const lvSum = new Float64Array(levelsN);
  const lvMax = new Float64Array(levelsN);
  const lvN = new Float64Array(levelsN);
  r.pagesByCrawler.forEach((p, c) => {
    const l = world.bandwidthLevel[c]!;
    lvSum[l]! += p;
    lvN[l]! += 1;
    if (p > lvMax[l]!) lvMax[l] = p;
  });
  let sameBandwidth = 0;
  for (let l = 0; l < levelsN; l++) {
    const mean = lvN[l]! > 0 ? lvSum[l]! / lvN[l]! : 0;
    if (mean > 0) sameBandwidth = Math.max(sameBandwidth, (lvMax[l]! - mean) / mean);
  }
  let qpc = 0;
  let onl = 0;
  let qpcN = 0;
  let runSum = 0;
  let slotSum = 0;
  for (const s of r.samples) {
    runSum += s.running;
    slotSum += s.online * world.config.threads;
    onl += s.online;
    if (s.online > 0) {
      qpc += s.queued / s.online;
      qpcN++;
    }
  }
  const tasksTotal = r.submittedBy.reduce((a, b) => a + b, 0);
  const completed = r.outcomes.completed;
  return {
    strategy,
    routing,
    model,
    steps: T,
    groupSizes,
    tasksTotal,
    tasksByRank: Array.from(r.submittedBy),
    completedByRank: Array.from(r.completedBy),
    intervalByRank: r.intervalByRank,
    finalIntervalByRank: r.finalIntervalByRank,
    updateQualityWeighted: q.weighted ?? 0,
    updateQuality: q.unweighted ?? 0,
    updateQualityByRank: q.groups.map((g) => g.quality),
    successRate: tasksTotal > 0 ? completed / tasksTotal : 0,
    outcomes: r.outcomes,
    migrations: r.migrations,
    forwards: r.forwards.count,
    meanForwardHops: r.forwards.count > 0 ? r.forwards.hops / r.forwards.count : 0,
    held: r.held,
    routingStats: r.routingStats,
    meanQueuedPerCrawler: qpcN > 0 ? qpc / qpcN : 0,
    meanOnline: r.samples.length > 0 ? onl / r.samples.length : 0,
    meanThroughput: (r.bytesTotal * 8) / 1e6 / (T * 60),
    meanTaskRttMs: completed > 0 ? r.rttSum / completed : 0,
    meanDownloadMinutes: completed > 0 ? r.capacity.completedMinutes / completed : 0,
    loadImbalance: pagesMean > 0 ? (pagesMax - pagesMean) / pagesMean : 0,
    loadImbalanceSameBandwidth: sameBandwidth,
    threadUtilisation: slotSum > 0 ? runSum / slotSum : 0,
    freshnessByRank: freshBy,
    ageByRank: ageBy,
    freshness: freshAll / H,
    meanAgeMinutes: ageAll / H,
    capacity: r.capacity,
    reassignments: r.reassignments,
    maxRunningSeen: r.maxRunningSeen,
    maxQueueSeen: r.maxQueueSeen,
    events: r.events,
    wallSeconds: r.wallSeconds,
    samples: r.samples,
  };
}
