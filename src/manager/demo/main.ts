// `npm run demo`: the whole system on one machine. Starts the local test web
// (sites whose pages change on a seeded Poisson schedule), a manager (what
// `dht-manager serve` runs, with the operator dashboard), and N volunteer
// processes (`volunteer-crawler join … --allow-private --lan`) on loopback,
// with time compressed by --speed; prints a live summary and, at the end, a
// report checked against the test web's ground truth. See docs/demo.md.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { createRng, deriveSeed, normal, uniform } from '../../rng.js';
import { startManager, type RunningManager } from '../serve.js';
import { timeScaledOptions } from '../time-scale.js';
import { TestWeb } from '../../../test/web/testweb.js';
import { accumulate, channelFor, DemoClock, DEMO_EPOCH, measureTruth, siteSpecs, type GroupTruth } from './world.js';
import { buildReport, formatReport, type DemoReport } from './report.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

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

interface Volunteer {
  index: number;
  dir: string;
  proc: ChildProcess | null;
  exited: Promise<void>;
}

export interface ChurnStats {
  graceful: number;
  silent: number;
  rejoins: number;
}

export async function runDemo(flags: DemoFlags): Promise<DemoReport> {
  const out = flags.json ? process.stderr : process.stdout;
  const tty = out.isTTY === true;
  const say = (s: string) => out.write(s + '\n');
  const tempDir = flags.dataDir === null;
  const dataDir = flags.dataDir ?? mkdtempSync(join(tmpdir(), 'volcrawl-demo-'));
  mkdirSync(dataDir, { recursive: true });
  const clock = new DemoClock(flags.speed);
  const specs = siteSpecs(flags.sites, flags.seed);
  const web = await TestWeb.start(specs, { seed: flags.seed, epoch: DEMO_EPOCH });
  const logFd = openSync(join(dataDir, 'manager.log'), 'a');
  const log = pino({ level: 'info' }, pino.destination({ fd: logFd, sync: false }));
  let mgr: RunningManager | null = null;
  const vols: Volunteer[] = [];
  const timers: ReturnType<typeof setTimeout>[] = [];
  let stopping = false;

  const killAll = () => {
    for (const v of vols) if (v.proc && v.proc.exitCode === null && v.proc.signalCode === null) v.proc.kill('SIGKILL');
  };
  process.on('exit', killAll);

  const cleanup = async () => {
    for (const t of timers) clearTimeout(t);
    // Every volunteer leaves gracefully (migration bounded by --shutdown-timeout), then SIGKILL.
    for (const v of vols) if (v.proc && v.proc.exitCode === null && v.proc.signalCode === null) v.proc.kill('SIGTERM');
    const bound = new Promise<void>((r) => setTimeout(r, 10_000).unref());
    await Promise.race([Promise.all(vols.map((v) => v.exited)), bound]);
    killAll();
    await Promise.all(vols.map((v) => v.exited));
    await mgr?.stop().catch(() => undefined);
    await web.close();
    log.flush();
    closeSync(logFd);
    process.off('exit', killAll);
    if (tempDir) rmSync(dataDir, { recursive: true, force: true });
  };

  try {
    const webSync = setInterval(() => clock.sync(web), 50);
    timers.push(webSync as unknown as ReturnType<typeof setTimeout>);
    mgr = await startManager(
      { dataDir: join(dataDir, 'manager'), listen: ['/ip4/127.0.0.1/tcp/0'], httpPort: flags.httpPort, httpHost: '127.0.0.1', strategy: 'iir', lan: true, warc: false, sync: false, tick: 250, routeConcurrency: 8, logLevel: 'info', dashboardSampleMs: 1000 },
      log,
      timeScaledOptions(flags.speed),
    );
    const m = mgr.manager;
    const channels: { id: string; site: string }[] = [];
    const known = new Set((await m.listChannels({ limit: 10_000 })).map((c) => `${c.origin}`));
    for (const s of specs) {
      const url = web.site(s.name).url('/');
      if (known.has(new URL(url).origin)) continue;
      const ch = await m.addChannel(channelFor(url, s, flags.speed));
      channels.push({ id: ch.id, site: s.name });
    }
    const boot = mgr.node
      .multiaddrs()
      .filter((a) => a.includes('/127.0.0.1/'))
      .map((a) => (a.includes('/p2p/') ? a : `${a}/p2p/${mgr!.node.peerId}`));
    const peerId = mgr.node.peerId;
    const spawnVolunteer = (v: Volunteer) => {
      mkdirSync(v.dir, { recursive: true });
      const fd = openSync(join(v.dir, 'volunteer.out'), 'a');
      const proc = spawn(
        process.execPath,
        [join(ROOT, 'bin/volunteer-crawler.js'), 'join', ...boot, '--manager', peerId, '--allow-private', '--lan', '--data-dir', v.dir, '--listen', '/ip4/127.0.0.1/tcp/0', '--no-status', '--log-level', 'warn', '--threads', '3', '--queue', '6', '--coord-interval', '1000', '--shutdown-timeout', '5000', '--seed', String(deriveSeed(flags.seed, `volunteer-${v.index}`))],
        // Own process group: a terminal's Ctrl-C reaches only the demo, which then stops them in order.
        { stdio: ['ignore', fd, fd], cwd: ROOT, detached: true },
      );
      closeSync(fd);
      v.proc = proc;
      v.exited = new Promise<void>((r) => proc.once('exit', () => r()));
    };
    for (let i = 0; i < flags.volunteers; i++) {
      const v: Volunteer = { index: i, dir: join(dataDir, `volunteer-${i}`), proc: null, exited: Promise.resolve() };
      vols.push(v);
      spawnVolunteer(v);
    }

    const dashboard = `${mgr.api.url}/dashboard`;
    say(`volcrawl demo: ${flags.sites} sites, ${flags.volunteers} volunteers, speed ${flags.speed}× (1 real s = ${fmtSim(flags.speed * 1000)} simulated), ${flags.duration} s${flags.churn ? ', churn on' : ''}, seed ${flags.seed}`);
    say(`  dashboard  ${dashboard}`);
    say(`  API        ${mgr.api.url}/api/status`);
    say(`  data dir   ${dataDir}${tempDir ? ' (temporary)' : ''}`);

    // Churn (sim/world.ts defaults, scaled to the run): lifetime ~ N(L, L/5) (the first one U(L/4, 5L/4)),
    // offline ~ N(0.6 L, 0.2 L) with L = duration / 3; a leave is graceful with p = 1/3.
    const churn: ChurnStats = { graceful: 0, silent: 0, rejoins: 0 };
    if (flags.churn) {
      const rng = createRng(deriveSeed(flags.seed, 'demo-churn'));
      const L = (flags.duration * 1000) / 3;
      const scheduleLeave = (v: Volunteer, first: boolean) => {
        // Every volunteer starts at t = 0: the first departure is spread over
        // [L/4, 5L/4) (a residual lifetime) so they do not all leave together.
        const up = first ? uniform(rng, L / 4, (5 * L) / 4) : normal(rng, L, L / 5);
        timers.push(
          setTimeout(() => {
            if (stopping || !v.proc) return;
            const graceful = rng.next() < 1 / 3;
            if (graceful) churn.graceful++;
            else churn.silent++;
            v.proc.kill(graceful ? 'SIGTERM' : 'SIGKILL');
            const back = Math.max(1000, normal(rng, 0.6 * L, 0.2 * L));
            void v.exited.then(() => {
              timers.push(
                setTimeout(() => {
                  if (stopping) return;
                  churn.rejoins++;
                  spawnVolunteer(v);
                  scheduleLeave(v, false);
                }, back),
              );
            });
          }, Math.max(2000, up)),
        );
      };
      for (const v of vols) scheduleLeave(v, true);
    }

    const acc = new Map<number, GroupTruth>();
    let last: Awaited<ReturnType<typeof measureTruth>> | null = null;
    const timeline: { realS: number; succeeded: number; failed: number; online: number }[] = [];
    const endAt = performance.now() + flags.duration * 1000;
    let lastPrint = 0;
    let interrupted = false;
    const onSigint = () => {
      if (interrupted) {
        killAll();
        process.exit(130);
      }
      interrupted = true;
      say('\ninterrupted: stopping early (again to kill everything now)');
    };
    process.on('SIGINT', onSigint);
    process.on('SIGTERM', onSigint);
    try {
      while (!interrupted && performance.now() < endAt) {
        await new Promise((r) => setTimeout(r, 1000));
        const simNow = clock.sync(web);
        last = await measureTruth(web, m, mgr.storage, channels, simNow);
        accumulate(acc, last);
        const c = m.counters;
        const online = vols.filter((v) => v.proc && v.proc.exitCode === null && v.proc.signalCode === null).length;
        const realS = clock.realElapsedMs() / 1000;
        timeline.push({ realS, succeeded: c.tasksSucceeded, failed: c.tasksFailed, online });
        const t = m.taskSummary();
        const stored = last.groups.reduce((s, g) => s + g.stored, 0);
        const fresh = last.groups.reduce((s, g) => s + g.fresh, 0);
        const line = `[${realS.toFixed(0).padStart(4)} s | sim +${fmtSim(simNow - DEMO_EPOCH)}] volunteers ${online}/${flags.volunteers} (manager sees ${mgr.node.crawlers().length}) | tasks issued ${c.tasksIssued} done ${c.tasksSucceeded} failed ${c.tasksFailed} | queued ${t.queued} running ${t.issued + t.running} | versions ${c.pagesStored} | fresh ${stored > 0 ? (fresh / stored).toFixed(2) : '-'}`;
        if (tty) out.write(`\r\x1b[2K${line.slice(0, (out.columns ?? 200) - 1)}`);
        else if (realS - lastPrint >= 10) {
          say(line);
          lastPrint = realS;
        }
      }
    } finally {
      process.off('SIGINT', onSigint);
      process.off('SIGTERM', onSigint);
    }
    if (tty) out.write('\n');
    stopping = true;
    const report = buildReport({ flags, manager: m, acc, last, timeline, churn: flags.churn ? churn : null, realSeconds: clock.realElapsedMs() / 1000 });
    return report;
  } finally {
    stopping = true;
    await cleanup();
  }
}

export function fmtSim(ms: number): string {
  const min = ms / 60_000;
  if (min < 1) return `${(ms / 1000).toFixed(0)} s`;
  if (min < 120) return `${min.toFixed(0)} min`;
  if (min < 48 * 60) return `${(min / 60).toFixed(1)} h`;
  return `${(min / 1440).toFixed(1)} d`;
}

async function main(): Promise<void> {
  let flags: DemoFlags | 'help';
  try {
    flags = parseFlags(process.argv.slice(2));
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`demo: ${err.message}\n\n${USAGE}`);
      process.exit(2);
    }
    throw err;
  }
  if (flags === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  const report = await runDemo(flags);
  if (flags.json) process.stdout.write(JSON.stringify(report) + '\n');
  else process.stdout.write(formatReport(report));
  process.exit(0);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
