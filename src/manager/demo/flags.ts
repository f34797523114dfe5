// The demo's command line: flags, their bounds and the usage text. Bad flags are
// a UsageError (main prints it with the usage and exits 2).
import { resolve } from 'node:path';

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

export const USAGE = `usage: npm run demo -- [options]

Runs the local test web, a manager with its dashboard, and volunteer processes
on loopback, with time compressed; prints a report against the ground truth.

  --volunteers N   volunteer processes (1..32, default 4)
  --speed X        simulated seconds per real second (1..100000, default 60:
                   1 real second = 1 simulated minute, 1 real minute = 1 hour)
  --duration S     real seconds to run (5..86400, default 300)
  --seed N         seed for the sites, their change schedules and the churn (default 1)
  --sites N        generated sites, one channel each (1..200, default 10)
  --churn          volunteers leave and rejoin (1/3 graceful SIGTERM, 2/3 SIGKILL)
  --data-dir DIR   keep the manager's and volunteers' data here (default: a temp dir, removed)
  --http-port N    dashboard/API port on 127.0.0.1 (default 0 = any free port)
  --json           print the final report as JSON on stdout (progress goes to stderr)
  -h, --help       this help
`;

export class UsageError extends Error {}

export function parseFlags(argv: string[]): DemoFlags | 'help' {
  const f: DemoFlags = { volunteers: 4, speed: 60, duration: 300, seed: 1, sites: 10, churn: false, dataDir: null, httpPort: 0, json: false };
  const num = (name: string, v: string | undefined, lo: number, hi: number, int: boolean): number => {
    if (v === undefined || v.startsWith('--')) throw new UsageError(`${name} needs a value`);
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n) || n < lo || n > hi || (int && !Number.isInteger(n))) throw new UsageError(`${name} must be ${int ? 'an integer' : 'a number'} in ${lo}..${hi} (got ${JSON.stringify(v)})`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const raw = argv[i]!;
    const eq = raw.indexOf('=');
    const a = raw.startsWith('--') && eq > 0 ? raw.slice(0, eq) : raw;
    const inline = raw.startsWith('--') && eq > 0 ? raw.slice(eq + 1) : undefined;
    const val = (): string | undefined => inline ?? argv[++i];
    switch (a) {
      case '-h':
      case '--help':
        return 'help';
      case '--volunteers':
        f.volunteers = num(a, val(), 1, 32, true);
        break;
      case '--speed':
        f.speed = num(a, val(), 1, 100_000, false);
        break;
      case '--duration':
        f.duration = num(a, val(), 5, 86_400, false);
        break;
      case '--seed':
        f.seed = num(a, val(), 0, 2 ** 32 - 1, true);
        break;
      case '--sites':
        f.sites = num(a, val(), 1, 200, true);
        break;
      case '--http-port':
        f.httpPort = num(a, val(), 0, 65_535, true);
        break;
      case '--churn':
        f.churn = true;
        break;
      case '--json':
        f.json = true;
        break;
      case '--data-dir': {
        const v = val();
        if (v === undefined || v === '' || v.startsWith('--')) throw new UsageError('--data-dir needs a directory');
        f.dataDir = resolve(v);
        break;
      }
      default:
        throw new UsageError(`unknown argument ${JSON.stringify(raw)}`);
    }
  }
  return f;
}
