// The scale-adaptation curve (issue 12, item 4): the same channels crawled by
// ever more crawlers, every strategy at each size, each judged against the
// capacity bound of its point. The paper's claim is about this curve; its two
// scenarios (rec: 1400 crawlers, ruc: 2800) are two points on it.
import type { RecrawlOptions, StrategyName } from '../src/recrawl/index.js';
import type { Bounds, OfBound } from './bounds.js';
import { ofBound } from './bounds.js';
import type { SimModel } from './model.js';
import type { Routing } from './routing.js';
import { runScenarioParallel } from './run-parallel.js';
import { recrawlSettings, type RecrawlSettings } from './run.js';
import { threadUse, threadUseShares, type ThreadUse } from './thread-use.js';

export const DEFAULT_SWEEP_CRAWLERS: readonly number[] = [700, 1400, 2100, 2800, 4200, 5600];
/** The shorter horizon of `sim sweep --quick-steps`. */
export const QUICK_SWEEP_STEPS = 10_000;

export interface SweepParams {
  crawlers: readonly number[];
  strategies: StrategyName[];
  steps: number;
  seed: number;
  routing: Routing;
  latencyPath?: string;
  recrawl?: Partial<RecrawlOptions>;
  model?: Partial<SimModel>;
  /** Strategies simulated at once at each point, on worker threads (default 1: one after another). */
  jobs?: number;
  /** Called as each strategy of each point starts and progresses. */
  onProgress?: (crawlers: number, strategy: StrategyName, fraction: number) => void;
}

export interface SweepRow {
  crawlers: number;
  strategy: StrategyName;
  tasks: number;
  completed: number;
  updateQualityWeighted: number;
  updateQuality: number;
  freshness: number;
  meanAgeMinutes: number;
  successRate: number;
  /** Busy thread-minutes ÷ online thread-minutes. */
  utilisation: number;
  /** Where the online thread-minutes went, as shares (sim/thread-use.ts). */
  threadUse: ThreadUse;
  meanOnline: number;
  ofBound: OfBound | null;
}

export interface SweepPoint {
  crawlers: number;
  meanOnline: number;
  bounds: Bounds | null;
  wallSeconds: number;
}

export interface SweepReport {
  steps: number;
  seed: number;
  routing: Routing;
  hosts: number;
  model: SimModel;
  /** Every recrawl option the sweep's runs had (CAF's included). */
  recrawl: RecrawlSettings;
  points: SweepPoint[];
  rows: SweepRow[];
  wallSeconds: number;
}

export async function runSweep(p: SweepParams): Promise<SweepReport> {
  const t0 = performance.now();
  const points: SweepPoint[] = [];
  const rows: SweepRow[] = [];
  let hosts = 0;
  let model: SimModel | null = null;
  for (const n of p.crawlers) {
    // rec's world (16000 channels, the same seed) with n crawlers.
    const r = await runScenarioParallel(
      {
      scenario: 'rec',
      strategies: p.strategies,
      routing: p.routing,
      seed: p.seed,
      steps: p.steps,
      latencyPath: p.latencyPath,
      recrawl: p.recrawl,
      model: p.model,
      config: { crawlers: n },
      onProgress: p.onProgress ? (s, f) => p.onProgress!(n, s, f) : undefined,
      },
      p.jobs ?? 1,
    );
    hosts = r.world.hosts;
    model = r.model;
    let online = 0;
    for (const s of p.strategies) {
      const x = r.strategies[s];
      if (x === undefined) continue;
      online = x.meanOnline;
      rows.push({
        crawlers: n,
        strategy: s,
        tasks: x.tasksTotal,
        completed: x.outcomes.completed,
        updateQualityWeighted: x.updateQualityWeighted,
        updateQuality: x.updateQuality,
        freshness: x.freshness,
        meanAgeMinutes: x.meanAgeMinutes,
        successRate: x.successRate,
        utilisation: x.capacity.threadMinutes > 0 ? x.capacity.busyMinutes / x.capacity.threadMinutes : 0,
        threadUse: threadUseShares(threadUse(x.capacity), x.capacity.threadMinutes),
        meanOnline: x.meanOnline,
        ofBound: r.bounds !== null ? ofBound(x, r.bounds) : null,
      });
    }
    points.push({ crawlers: n, meanOnline: online, bounds: r.bounds, wallSeconds: r.wallSeconds });
  }
  return { steps: p.steps, seed: p.seed, routing: p.routing, hosts, model: model!, recrawl: recrawlSettings(p.recrawl), points, rows, wallSeconds: (performance.now() - t0) / 1000 };
}
