// `sim run --jobs N`: the strategies of one scenario on N worker threads. Each
// worker builds the world from the same seed (what a world holds is plain data
// derived from it, so every worker's is the one the main thread builds for the
// report and the bound) and takes the next strategy when it is free, the
// costliest first (DISPATCH_ORDER); the report is put together in STRATEGIES'
// order, so it is the one runScenario gives, wall times aside
// (test/sim/identity.test.ts runs it on two workers). It saves wall time only:
// CPU time grows by one world build per worker, and memory by one world and one
// simulation per worker.
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { siblingModule, startModuleWorker } from '../src/worker-thread.js';
import type { StrategyName } from '../src/recrawl/index.js';
import type { StrategyResult } from './result.js';
import type { RunParams, ScenarioReport } from './run.js';
import type { ScenarioName } from './world.js';
import { prepareScenario, requested, runScenario, scenarioReport } from './run.js';
import type { StrategyJob, StrategyReply } from './strategy-worker.js';

/** Below this many steps a run is seconds long, and starting workers (each loads the
 * modules and the latency data and builds its world) costs more than it saves. */
export const PARALLEL_MIN_STEPS = 10_000;

/** Worker threads by default: one per core and at most one per strategy, for full-size
 * worlds run for at least PARALLEL_MIN_STEPS steps (`--quick`'s small world and shorter
 * runs on this thread). */
export function defaultJobs(strategies: number, steps: number, quick = false): number {
  if (quick || steps < PARALLEL_MIN_STEPS) return 1;
  return Math.max(1, Math.min(strategies, availableParallelism()));
}

/** Each scenario's strategies in order of dispatch to the workers, the
 * costliest first: a worker that frees up takes a short one last, so the
 * longer worker's share is the least a greedy dispatch gives. ruc at paper
 * scale, 5 000 steps, CPU of each strategy alone less the start-up (one run
 * each, load 7–9): CAF 7.0 s, IIR 5.5, ICR 5.1, FIXED 3.8 — on two workers
 * STRATEGIES' order (FIXED + ICR | IIR + CAF) ends after 12.5 s of strategy
 * time, this one (CAF + FIXED | IIR + ICR) after 10.8 (0.86×). rec by tasks
 * (README, 90 000 steps): FIXED 7.15 M, ICR 5.60 M, CAF 5.27 M, IIR 5.23 M.
 * The report keeps STRATEGIES' order. */
export const DISPATCH_ORDER: Readonly<Record<ScenarioName, readonly StrategyName[]>> = {
  ruc: ['caf', 'iir', 'icr', 'fixed'],
  rec: ['fixed', 'icr', 'caf', 'iir'],
};

/** `todo` in the scenario's DISPATCH_ORDER (a strategy not listed there goes last, in todo's order). */
export function dispatchOrder(scenario: ScenarioName, todo: readonly StrategyName[]): StrategyName[] {
  const order = DISPATCH_ORDER[scenario];
  const rank = (s: StrategyName): number => {
    const i = order.indexOf(s);
    return i < 0 ? order.length : i;
  };
  return [...todo].sort((x, y) => rank(x) - rank(y));
}

/** Runs the scenario's strategies on up to `jobs` worker threads (1: on this thread, runScenario). */
export async function runScenarioParallel(p: RunParams, jobs: number): Promise<ScenarioReport> {
  const todo = requested(p);
  const n = Math.min(jobs, todo.length);
  if (n <= 1) return runScenario(p);
  const queue = dispatchOrder(p.scenario, todo);
  const { onProgress, ...params } = p;
  const workers: Worker[] = [];
  const results = new Map<StrategyName, StrategyResult>();
  const done = new Promise<void>((resolve, reject) => {
    let next = 0;
    const give = (w: Worker): void => {
      const job: StrategyJob = next < queue.length ? { strategy: queue[next++]! } : null;
      w.postMessage(job);
    };
    for (let i = 0; i < n; i++) {
      const w = startModuleWorker(siblingModule(import.meta.url, 'strategy-worker'), { workerData: params });
      workers.push(w);
      w.on('message', (m: StrategyReply) => {
        if (m.kind === 'progress') {
          onProgress?.(m.strategy, m.fraction);
          return;
        }
        results.set(m.result.strategy, m.result);
        if (results.size === todo.length) resolve();
        else give(w);
      });
      w.on('error', reject);
      w.on('exit', (code) => {
        if (code !== 0) reject(new Error(`sim: a strategy worker exited with code ${code}`));
      });
      give(w);
    }
  });
  done.catch(() => undefined); // rejections are seen by the await below, or not wanted after a failed build
  try {
    // The main thread's own world (for the report and the bound) is built while the workers run.
    const prep = prepareScenario(p);
    await done;
    return scenarioReport(p, prep, todo.map((s) => results.get(s)!));
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}
