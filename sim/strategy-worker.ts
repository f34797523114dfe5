// A worker thread of sim/run-parallel.ts: builds the scenario's world once (the
// same seed gives the same world as the main thread's) and simulates the
// strategies it is sent, one at a time, posting progress and each result.
import { parentPort, workerData } from 'node:worker_threads';
import type { StrategyName } from '../src/recrawl/index.js';
import type { RunParams } from './run.js';
import { prepareScenario, runStrategy } from './run.js';
import type { StrategyResult } from './result.js';

/** Main thread → worker: simulate this strategy (null: no more work, exit). */
export type StrategyJob = { strategy: StrategyName } | null;
/** Worker → main thread. */
export type StrategyReply = { kind: 'progress'; strategy: StrategyName; fraction: number } | { kind: 'result'; result: StrategyResult };

const port = parentPort;
if (port === null) throw new Error('sim/strategy-worker.ts runs only as a worker thread');
const params = workerData as RunParams;
const prep = prepareScenario(params);
const post = (m: StrategyReply): void => port.postMessage(m);
port.on('message', (job: StrategyJob) => {
  if (job === null) {
    port.close();
    return;
  }
  const s = job.strategy;
  post({ kind: 'result', result: runStrategy(prep, params, s, (fraction) => post({ kind: 'progress', strategy: s, fraction })) });
});
