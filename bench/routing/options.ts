// bench:routing's command line: the options, their checks, and where progress
// lines go (stdout, or stderr under --json so stdout holds one JSON object).
// Apart from the run so that bench/routing.ts reads as the steps of the
// measurement, not as argument handling.
import { Command } from 'commander';
import { appCoordOptions, type AppCoordOptions } from '../../src/coords/index.js';

export interface RoutingBenchOptions {
  appCoord: boolean;
  appWindow?: number;
  appThreshold?: number;
  confirmTop?: number;
  abUnconfirmed: boolean;
  nodes: number;
  tasks: number;
  hashTasks: number;
  concurrency: number;
  settle: number;
  coordInterval: number;
  perProcess: number;
  startConcurrency: number;
  seed: number;
  json: boolean;
}

/** A progress line for the reader (never part of the --json result). */
export type Say = (s: string) => void;

/** The options, checked, and the published-coordinate options they make; a bad one ends the process with a message and exit code 2. */
export function parseOptions(argv: string[]): { opts: RoutingBenchOptions; appCoord: AppCoordOptions; say: Say } {
  const program = new Command('bench:routing')
    .option('--nodes <n>', 'crawlers on the local network', (v) => parseInt(v, 10), 100)
    .option('--tasks <n>', 'tasks routed by coordinate', (v) => parseInt(v, 10), 2_000)
    .option('--hash-tasks <n>', 'tasks routed by host-name hash', (v) => parseInt(v, 10), 200)
    .option('--concurrency <n>', 'orders in flight at once', (v) => parseInt(v, 10), 4)
    .option('--settle <s>', 'longest wait for coordinates to converge, seconds', (v) => parseInt(v, 10), 300)
    .option('--coord-interval <ms>', 'shortest coordinate probing interval (while coordinates settle)', (v) => parseInt(v, 10), 1000)
    .option('--per-process <k>', 'crawlers per child process (0: all in this process)', (v) => parseInt(v, 10), 10)
    .option('--start-concurrency <n>', 'child processes starting their nodes at once', (v) => parseInt(v, 10), 4)
    .option('--seed <n>', 'seed', (v) => parseInt(v, 10), 1)
    .option('--confirm-top <n>', "the manager's router confirms this many top candidates' coordinates before committing (default: the Router's)", (v) => parseInt(v, 10))
    .option('--ab-unconfirmed', "route a twin of every coordinate order, at the same time, through a second router that ranks on its copies as they are (confirmTop 0: the router before session 10) and report its figures beside ours (key unconfirmed)", false)
    .option('--app-coord', "crawlers publish an application-level coordinate (src/coords/app-coord.ts; off by default, as in the node: they publish their Vivaldi coordinate as it is)", false)
    .option('--app-window <n>', "samples per window of the published coordinate's change test (default: app-coord.ts's)", (v) => parseInt(v, 10))
    .option('--app-threshold <ms>', "energy distance that counts as a move of the published coordinate, ms (default: app-coord.ts's)", (v) => parseFloat(v))
    .option('--json', 'print one JSON object', false)
    .parse(argv);
  const opts = program.opts<RoutingBenchOptions>();
  for (const [k, v] of Object.entries({ nodes: opts.nodes, tasks: opts.tasks, 'hash-tasks': opts.hashTasks, concurrency: opts.concurrency, settle: opts.settle, 'coord-interval': opts.coordInterval, 'per-process': opts.perProcess, 'start-concurrency': opts.startConcurrency })) {
    const min = k === 'per-process' || k === 'tasks' || k === 'hash-tasks' ? 0 : 1;
    if (!Number.isInteger(v) || v < min) {
      console.error(`bench:routing: --${k} must be an integer ≥ ${min}`);
      process.exit(2);
    }
  }
  if (opts.confirmTop !== undefined && !(Number.isInteger(opts.confirmTop) && opts.confirmTop >= 0)) {
    console.error('bench:routing: --confirm-top must be an integer ≥ 0');
    process.exit(2);
  }
  let appCoord: AppCoordOptions;
  try {
    appCoord = appCoordOptions({ enabled: opts.appCoord, ...(opts.appWindow !== undefined ? { windowSize: opts.appWindow } : {}), ...(opts.appThreshold !== undefined ? { thresholdMs: opts.appThreshold } : {}) });
  } catch (err) {
    console.error(`bench:routing: ${(err as Error).message}`);
    process.exit(2);
  }
  if (opts.nodes < 2) {
    console.error('bench:routing: --nodes must be at least 2');
    process.exit(2);
  }
  const say: Say = (s) => {
    if (!opts.json) console.log(s);
    else process.stderr.write(`${s}\n`);
  };
  return { opts, appCoord, say };
}
