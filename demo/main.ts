// `npm run demo`: the whole system on one machine, run as an operator and
// volunteers run it. Starts the local test web (sites whose pages change on a
// seeded Poisson schedule, in this process), `dht-manager serve --time-scale
// <speed>` (with its dashboard) and N `volunteer-crawler join` processes on
// loopback; adds the channels, follows the run and builds the final report
// through the manager's operator HTTP API only, checked against the test web's
// ground truth. See docs/demo.md.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deriveSeed } from '../src/rng.js';
import { TestWeb } from '../testbed/web/testweb.js';
import { ManagerApi } from './api.js';
import { Churn } from './churn.js';
import { parseFlags, type DemoFlags } from './flags.js';
import { spawnVolunteerProcess, startManagerProcess, type ManagerProcess, type ProcessHandle } from '../testbed/processes.js';
import { buildReport, formatReport, type DemoChannel, type DemoReport } from './report.js';
import { accumulate, channelFor, DemoClock, DEMO_EPOCH, measureTruth, siteSpecs, trueChangeInterval, type GroupTruth, type TruthSnapshot } from './world.js';

/** A volunteer leaving gracefully migrates its tasks within its --shutdown-timeout (5 s); SIGKILL after this. */
const VOLUNTEER_STOP_MS = 10_000;
/** serve's shutdown (scheduler loop, API, libp2p, database) takes well under a second; SIGKILL after this. */
const MANAGER_STOP_MS = 15_000;
/** How long an API call that failed may wait for the manager's exit to be noticed, to tell a crash from an error. */
const DEATH_NOTICE_MS = 2000;
/** Lines of manager.log shown when it died: its last steps and the error, not the whole run. */
const DIED_TAIL_LINES = 40;

/** The manager process exited while the demo still needed it; the message ends with the tail of its log. */
export class ManagerDied extends Error {
  constructor(mgr: ProcessHandle) {
    super(`the manager process exited unexpectedly (${mgr.exitStatus})\n${mgr.output(DIED_TAIL_LINES)}`);
  }
}

interface Volunteer {
  index: number;
  dir: string;
  proc: ProcessHandle | null;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

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
  const webSync = setInterval(() => clock.sync(web), 50);

  // Every child, from its spawn on: they run in their own process groups, so
  // nothing but this process stops them if it dies or is told to die at once.
  const children = new Set<ProcessHandle>();
  const track = (h: ProcessHandle) => {
    children.add(h);
    void h.exited.then(() => children.delete(h));
  };
  const killAll = () => {
    for (const c of children) if (c.running) c.proc.kill('SIGKILL');
  };
  process.on('exit', killAll);
  let interrupted = false;
  const onSignal = () => {
    if (interrupted) {
      killAll();
      process.exit(130);
    }
    interrupted = true;
    say('\ninterrupted: stopping early (again to kill everything now)');
  };
  // Installed until everything is stopped: a Ctrl-C during the shutdown must still reach the children.
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  let mgr: ManagerProcess | null = null;
  const vols: Volunteer[] = [];
  let churn: Churn | null = null;
  let managerDied = false;
  try {
    const m = await startManagerProcess(
      join(dataDir, 'manager'),
      ['--listen', '/ip4/127.0.0.1/tcp/0', '--http-port', String(flags.httpPort), '--time-scale', String(flags.speed), '--no-warc', '--tick', '250', '--log-level', 'info'],
      { logFile: join(dataDir, 'manager.log'), detached: true, onSpawn: track },
    );
    mgr = m;
    const api = new ManagerApi(m.api);
    /** Runs API calls; when they fail because the manager process died, says that instead. */
    const ask = async <T>(fn: () => Promise<T>): Promise<T> => {
      try {
        return await fn();
      } catch (err) {
        await Promise.race([m.exited, sleep(DEATH_NOTICE_MS)]);
        if (!m.running) throw new ManagerDied(m);
        throw err;
      }
    };

    const channels: DemoChannel[] = [];
    const existing = new Map((await ask(() => api.channels())).map((c) => [c.origin, c]));
    for (const s of specs) {
      const url = web.site(s.name).url('/');
      const ch = existing.get(new URL(url).origin) ?? (await ask(() => api.addChannel(channelFor(url, s))));
      channels.push({ id: ch.id, site: s.name, startGroup: ch.group, trueChangeIntervalSimMin: trueChangeInterval(s) });
    }
    const launch = (v: Volunteer) => {
      v.proc = spawnVolunteerProcess(
        `volunteer ${v.index}`,
        m,
        v.dir,
        ['--log-level', 'warn', '--threads', '3', '--queue', '6', '--coord-interval', '1000', '--shutdown-timeout', '5000', '--seed', String(deriveSeed(flags.seed, `volunteer-${v.index}`))],
        { logFile: join(v.dir, 'volunteer.out'), detached: true, onSpawn: track },
      );
    };
    for (let i = 0; i < flags.volunteers; i++) {
      const v: Volunteer = { index: i, dir: join(dataDir, `volunteer-${i}`), proc: null };
      vols.push(v);
      launch(v);
    }

    say(`volcrawl demo: ${flags.sites} sites, ${flags.volunteers} volunteers, speed ${flags.speed}× (1 real s = ${fmtSim(flags.speed * 1000)} simulated), ${flags.duration} s${flags.churn ? ', churn on' : ''}, seed ${flags.seed}`);
    say(`  dashboard  ${m.dashboard}`);
    say(`  API        ${m.api}/api/status`);
    say(`  manager    dht-manager serve, pid ${m.proc.pid}, log ${m.logFile}`);
    say(`  data dir   ${dataDir}${tempDir ? ' (temporary)' : ''}`);

    if (flags.churn) {
      const c = new Churn(flags.seed, flags.duration * 1000);
      for (const v of vols) {
        c.add({
          leave: async (signal) => v.proc?.kill(signal),
          rejoin: () => launch(v),
        });
      }
      churn = c;
    }

    const acc = new Map<number, GroupTruth>();
    let last: TruthSnapshot | null = null;
    const timeline: { realS: number; succeeded: number; failed: number; online: number }[] = [];
    const endAt = performance.now() + flags.duration * 1000;
    let lastPrint = 0;
    while (!interrupted && performance.now() < endAt) {
      await Promise.race([sleep(1000), m.exited]);
      if (!m.running) throw new ManagerDied(m);
      const simNow = clock.sync(web);
      const [status, truth] = await ask(() => Promise.all([api.status(), measureTruth(web, api, channels, simNow)]));
      last = truth;
      accumulate(acc, truth);
      const c = status.counters;
      const online = vols.filter((v) => v.proc?.running === true).length;
      const realS = clock.realElapsedMs() / 1000;
      timeline.push({ realS, succeeded: c.tasksSucceeded, failed: c.tasksFailed, online });
      const t = status.tasks;
      const stored = truth.groups.reduce((s, g) => s + g.stored, 0);
      const fresh = truth.groups.reduce((s, g) => s + g.fresh, 0);
      const line = `[${realS.toFixed(0).padStart(4)} s | sim +${fmtSim(simNow - DEMO_EPOCH)}] volunteers ${online}/${flags.volunteers} (manager sees ${status.crawlers}) | tasks issued ${c.tasksIssued} done ${c.tasksSucceeded} failed ${c.tasksFailed} | queued ${t.queued} running ${t.issued + t.running} | versions ${c.pagesStored} | fresh ${stored > 0 ? (fresh / stored).toFixed(2) : '-'}`;
      if (tty) out.write(`\r\x1b[2K${line.slice(0, (out.columns ?? 200) - 1)}`);
      else if (realS - lastPrint >= 10) {
        say(line);
        lastPrint = realS;
      }
    }
    if (tty) out.write('\n');
    churn?.stop();
    // Read while every process still runs: the report is the state at the end of the run.
    const [status, groups, views] = await ask(() => Promise.all([api.status(), api.groups(), Promise.all(channels.map((c) => api.channel(c.id).catch(() => null)))]));
    return buildReport({ flags, status, groups, acc, last, timeline, churn: churn?.stats ?? null, realSeconds: clock.realElapsedMs() / 1000, clock, channels, views });
  } catch (err) {
    managerDied = err instanceof ManagerDied;
    throw err;
  } finally {
    churn?.stop();
    // In order: every volunteer leaves (tasks migrate), then the manager shuts down (database closed, lock released).
    await Promise.all(vols.map((v) => v.proc?.stop(VOLUNTEER_STOP_MS)));
    await mgr?.stop(MANAGER_STOP_MS);
    clearInterval(webSync);
    await web.close();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('exit', killAll);
    // A crash is worth reading: keep its logs even in a temporary dir.
    if (tempDir && !managerDied) rmSync(dataDir, { recursive: true, force: true });
    else if (managerDied) say(`data dir kept: ${dataDir}`);
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
  const flags = parseFlags(process.argv.slice(2));
  let report: DemoReport;
  try {
    report = await runDemo(flags);
  } catch (err) {
    if (!(err instanceof ManagerDied)) throw err;
    process.stderr.write(`demo: ${err.message}\n`);
    process.exit(1);
  }
  if (flags.json) process.stdout.write(JSON.stringify(report) + '\n');
  else process.stdout.write(formatReport(report));
  process.exit(0);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
