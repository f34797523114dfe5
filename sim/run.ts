// Runs one scenario: builds the world once and simulates each requested strategy on it.
import type { LatencyMatrix } from '../src/coords/index.js';
import { loadDefaultLatency, loadLatencyFile } from '../src/coords/index.js';
import type { IcrEncourage, RecrawlOptions, StrategyName } from '../src/recrawl/index.js';
import { STRATEGIES, recrawlOptions } from '../src/recrawl/index.js';
import type { Bounds } from './bounds.js';
import { computeBounds } from './bounds.js';
import type { Routing, StrategyResult } from './engine.js';
import { simulate } from './engine.js';
import type { SimModel } from './model.js';
import { DEFAULT_ICR_ENCOURAGE, DEFAULT_MODEL } from './model.js';
import type { ScenarioConfig, ScenarioName, World } from './world.js';
import { buildWorld, scenarioConfig } from './world.js';

export interface RunParams {
  scenario: ScenarioName;
  strategies: StrategyName[];
  routing: Routing;
  seed: number;
  steps?: number;
  quick?: boolean;
  /** Multiply hosts and crawlers (default 1: the paper's scale). */
  scale?: number;
  latencyPath?: string;
  recrawl?: Partial<RecrawlOptions>;
  /** The model's readings (sim/model.ts; default DEFAULT_MODEL, the paper's, as the CLI's). */
  model?: Partial<SimModel>;
  config?: Partial<ScenarioConfig>;
  onProgress?: (strategy: StrategyName, fraction: number) => void;
}

export interface ScenarioReport {
  scenario: ScenarioName;
  routing: Routing;
  seed: number;
  steps: number;
  quick: boolean;
  scale: number;
  latencySource: string;
  world: {
    baseNodes: number;
    hostOrigins: number;
    crawlerOrigins: number;
    hosts: number;
    crawlers: number;
    groupSizes: number[];
    meanPages: number;
    meanPageKb: number;
    bandwidthShares: number[];
    buildSeconds: number;
  };
  model: SimModel;
  /** ICR's encourage scope of the run (a recrawl reading, beside the model's). */
  icrEncourage: IcrEncourage;
  /** Every recrawl option every strategy of the run ran with (CAF's included), defaults filled in. */
  recrawl: RecrawlSettings;
  strategies: Partial<Record<StrategyName, StrategyResult>>;
  /** What the run's measured capacity could deliver at best (sim/bounds.ts); null when nothing completed. */
  bounds: Bounds | null;
  wallSeconds: number;
  events: number;
  eventsPerSec: number;
}

/** The recrawl options that shape a run: all of them but the strategy's name. */
export type RecrawlSettings = Omit<RecrawlOptions, 'strategy'>;

/** The options the engine runs each strategy with (sim/engine.ts fills in ICR's
 * encourage scope the same way), for the report: a run's JSON says what shaped it. */
export function recrawlSettings(partial: Partial<RecrawlOptions> = {}): RecrawlSettings {
  const { strategy: _strategy, ...settings } = recrawlOptions({ ...partial, icrEncourage: partial.icrEncourage ?? DEFAULT_ICR_ENCOURAGE });
  return settings;
}

export function loadLatency(path?: string): LatencyMatrix {
  if (path === undefined) return loadDefaultLatency();
  try {
    return loadLatencyFile(path);
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    throw new Error(`cannot use latency file ${path}: ${msg}`, { cause: err });
  }
}

export function summariseWorld(w: World, buildSeconds: number): ScenarioReport['world'] {
  const K = w.config.changeIntervals.length;
  const groupSizes = new Array<number>(K).fill(0);
  let pages = 0;
  let bytes = 0;
  for (let h = 0; h < w.config.hosts; h++) {
    groupSizes[w.group[h]!]! += 1;
    pages += w.pages[h]!;
    bytes += w.bytes[h]!;
  }
  const levels = new Array<number>(w.config.bandwidthsKbps.length).fill(0);
  for (let c = 0; c < w.config.crawlers; c++) levels[w.bandwidthLevel[c]!]! += 1 / w.config.crawlers;
  return {
    baseNodes: w.latency.n,
    hostOrigins: w.hostOrigins.length,
    crawlerOrigins: w.crawlerOrigins.length,
    hosts: w.config.hosts,
    crawlers: w.config.crawlers,
    groupSizes,
    meanPages: pages / w.config.hosts,
    meanPageKb: bytes / pages / 1024,
    bandwidthShares: levels,
    buildSeconds,
  };
}

/** A scenario's world, built once for every strategy run on it. */
export interface PreparedScenario {
  started: number;
  latency: LatencyMatrix;
  cfg: ScenarioConfig;
  world: World;
  buildSeconds: number;
}

export function prepareScenario(p: RunParams): PreparedScenario {
  const started = performance.now();
  const latency = loadLatency(p.latencyPath);
  const cfg = { ...scenarioConfig(p.scenario, p.quick ?? false, p.scale ?? 1), ...p.config };
  if (p.steps !== undefined) cfg.steps = p.steps;
  const world = buildWorld(latency, cfg, p.seed);
  return { started, latency, cfg, world, buildSeconds: (performance.now() - started) / 1000 };
}

/** One strategy on the prepared world. */
export function runStrategy(prep: PreparedScenario, p: RunParams, s: StrategyName, onProgress?: (fraction: number) => void): StrategyResult {
  return simulate(prep.world, { strategy: s, routing: p.routing, steps: prep.cfg.steps, recrawl: p.recrawl, model: p.model, onProgress });
}

/** The requested strategies in the report's order (STRATEGIES'). */
export function requested(p: RunParams): StrategyName[] {
  return STRATEGIES.filter((s) => p.strategies.includes(s));
}

/** The report of a scenario from its strategies' results (in STRATEGIES' order). */
export function scenarioReport(p: RunParams, prep: PreparedScenario, results: StrategyResult[]): ScenarioReport {
  const strategies: Partial<Record<StrategyName, StrategyResult>> = {};
  let events = 0;
  let simSeconds = 0;
  for (const r of results) {
    strategies[r.strategy] = r;
    events += r.events;
    simSeconds += r.wallSeconds;
  }
  return {
    scenario: p.scenario,
    routing: p.routing,
    seed: p.seed,
    steps: prep.cfg.steps,
    quick: p.quick ?? false,
    scale: p.scale ?? 1,
    latencySource: prep.latency.source,
    world: summariseWorld(prep.world, prep.buildSeconds),
    model: { ...DEFAULT_MODEL, ...p.model },
    icrEncourage: p.recrawl?.icrEncourage ?? DEFAULT_ICR_ENCOURAGE,
    recrawl: recrawlSettings(p.recrawl),
    strategies,
    bounds: computeBounds(prep.world, prep.cfg.steps, results),
    wallSeconds: (performance.now() - prep.started) / 1000,
    events,
    eventsPerSec: simSeconds > 0 ? events / simSeconds : 0,
  };
}

/** Builds the world once and simulates each requested strategy on it, one after another
 * (sim/run-parallel.ts runs them on worker threads). */
export function runScenario(p: RunParams): ScenarioReport {
  const prep = prepareScenario(p);
  const results = requested(p).map((s) => runStrategy(prep, p, s, p.onProgress ? (f) => p.onProgress!(s, f) : undefined));
  return scenarioReport(p, prep, results);
}
