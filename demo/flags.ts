// The demo's command line, on the same commander shape as the executables
// (src/cli.ts): --help, and a bad flag prints the reason and the help and exits 2.
import { resolve } from 'node:path';
import { createProgram, intArg, numberArg } from '../src/cli.js';

export interface DemoFlags {
  volunteers: number;
  speed: number;
  duration: number;
  seed: number;
  sites: number;
  churn: boolean;
  dataDir: string | null;
  httpPort: number;
  json: boolean;
}

function demoProgram() {
  return createProgram('demo', 'Runs the local test web, a manager with its dashboard, and volunteer processes on loopback, with time compressed; prints a report against the ground truth.')
    .usage('[options]   (run it as: npm run demo -- [options])')
    .configureOutput({ outputError: (s, write) => write(`demo: ${s.replace(/^error: /, '')}`) })
    .option('--volunteers <n>', 'volunteer processes', intArg('--volunteers', 1, 32), 4)
    .option('--speed <x>', 'simulated seconds per real second (600: 1 real second = 10 simulated minutes)', numberArg('--speed', 1, 100_000), 600)
    .option('--duration <s>', 'real seconds to run', numberArg('--duration', 5, 86_400), 300)
    .option('--seed <n>', 'seed for the sites, their change schedules and the churn', intArg('--seed', 0, 2 ** 32 - 1), 1)
    .option('--sites <n>', 'generated sites, one channel each', intArg('--sites', 1, 200), 10)
    .option('--churn', 'volunteers leave and rejoin (1/3 graceful SIGTERM, 2/3 SIGKILL)', false)
    .option('--data-dir <dir>', "keep the manager's and volunteers' data here (default: a temp dir, removed)")
    .option('--http-port <n>', 'dashboard/API port on 127.0.0.1 (0 = any free port)', intArg('--http-port', 0, 65_535), 0)
    .option('--json', 'print the final report as JSON on stdout (progress goes to stderr)', false);
}

/** Parses the demo's arguments; exits 0 after --help and 2 on a bad flag. */
export function parseFlags(argv: string[]): DemoFlags {
  const o = demoProgram().parse(argv, { from: 'user' }).opts<Omit<DemoFlags, 'dataDir'> & { dataDir?: string }>();
  return { ...o, dataDir: o.dataDir === undefined ? null : resolve(o.dataDir) };
}
