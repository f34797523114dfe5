// npm run bench:volunteer [-- --json] [--sites N] [--pages N] [--page-bytes B] [--cap BYTES]
//                         [--time-scale X] [--run-seconds S] [--pause-seconds S]
//
// Issue 20's benchmark: the owner in charge, measured on real processes. A
// `dht-manager serve` and three `volunteer-crawler join` processes crawl the
// local test web in compressed time:
//   cap      volunteer.toml sets a small daily transfer cap;
//   pause    paused over its control socket (`volunteer-crawler pause`) while a
//            task of its runs, resumed `--pause-seconds` later (`resume`);
//   block    volunteer.toml's never_fetch lists one site's address.
// The test web counts every request and, from /proc, which volunteer process
// opened the connection it came on (Linux only), so "no fetch after pause" and
// "no fetch of a blocked host" are counted where the requests arrive, not from
// the volunteers' own logs. Prints (targets in brackets):
//   capBytes, usedBytes, overshootBytes [≤ maxPageBytes], maxPageBytes
//   pauseToQuietMs  pause asked → last request of the paused volunteer [≤ 2000]
//   resumeToTaskMs  resume asked → its next accepted task
//   managerSawPauseMs  pause asked → the manager's /api/crawlers shows it paused (owner)
//   blockedFetches  requests to the blocked site from the block-list volunteer [0]
//   tasksIssued, tasksEndedOnce, tasksLost [0]  (the manager's counters; tasks
//            still in flight at the end are given as tasksInFlightAtEnd)
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { DEFAULT_LIMITS } from '../src/crawler/limits.js';
import { controlRequest } from '../src/node/control.js';
import { startManagerProcess, startVolunteerProcess, type ManagerProcess, type VolunteerProcess } from '../testbed/processes.js';
import { trackFetches } from '../testbed/fetch-owner.js';
import { TestWeb, type SiteSpec } from '../testbed/web/testweb.js';

const int = (v: string) => parseInt(v, 10);
const program = new Command('bench:volunteer')
  .description("the owner's controls on real processes: transfer cap overshoot, pause/resume latency, block list, tasks ended once")
  .option('--sites <n>', 'sites on the test web (one more is the blocked one)', int, 8)
  .option('--pages <n>', 'pages per site', int, 24)
  .option('--page-bytes <n>', 'approximate page size', int, 8000)
  .option('--cap <bytes>', "the cap volunteer's daily transfer cap, bytes", int, 150_000)
  .option('--time-scale <x>', "the manager's compressed time", int, 60)
  .option('--run-seconds <s>', 'crawl this long after the channels are added', int, 75)
  .option('--pause-seconds <s>', 'how long the pause volunteer stays paused', int, 10)
  .option('--keep-logs <dir>', 'write every process log here')
  .option('--json', 'print one JSON object on stdout', false)
  .parse(process.argv);
const opts = program.opts<{ sites: number; pages: number; pageBytes: number; cap: number; timeScale: number; runSeconds: number; pauseSeconds: number; keepLogs?: string; json: boolean }>();
const say = (s: string) => process.stderr.write(`${s}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const CONTACT_URL = 'https://operator.example/volcrawl-bench';
const BLOCKED_ADDR = '127.0.1.250';

// --- the volunteers' owner side, over the control socket as `volunteer-crawler status|pause|resume` talk to it ---

interface OwnerStatusLite {
  state: string;
  reasons: string[];
  tasks: { running: number; queued: number };
  today: { down: number; up: number };
}
const ownerStatus = async (dataDir: string) => (await controlRequest(dataDir, { cmd: 'status' })) as OwnerStatusLite;

interface CrawlersLite {
  online: number;
  crawlers: { id: string; owner: { state: string; reasons: string[] } | null }[];
}

interface ManagerStatus {
  tasks: { issued: number; running: number };
  counters: { tasksIssued: number; tasksSucceeded: number; tasksFailed: number; tasksOverdue: number; uploadsDuplicate: number };
}

async function main(): Promise<void> {
  const load0 = loadavg()[0]!;
  const dir = mkdtempSync(join(tmpdir(), 'volcrawl-bench-volunteer-'));
  const specs: SiteSpec[] = Array.from({ length: opts.sites }, (_, i) => ({ name: `s${i}`, bindHost: `127.0.1.${i + 2}`, pages: opts.pages, fanout: 4, pageBytes: opts.pageBytes, changesPerDay: 4 }));
  specs.push({ name: 'blocked', bindHost: BLOCKED_ADDR, pages: opts.pages, fanout: 4, pageBytes: opts.pageBytes, changesPerDay: 4 });
  const web = await TestWeb.start(specs, { seed: 1 });
  const ticker = setInterval(() => web.clock.advance(100 * opts.timeScale), 100);
  const procs: VolunteerProcess[] = [];
  let mgr: ManagerProcess | undefined;
  const fetches = trackFetches(web, () => procs.map((p) => p.proc.pid!).filter((p) => p !== undefined));
  const io = (name: string) => (opts.keepLogs !== undefined ? { logFile: join(opts.keepLogs, `${name}.log`) } : {});
  try {
    mgr = await startManagerProcess(join(dir, 'manager'), ['--contact-url', CONTACT_URL, '--time-scale', String(opts.timeScale), '--tick', '200', '--rate-cap', '1000', '--no-spot-checks', '--log-level', 'info'], io('manager'));
    const api = async <T>(path: string, init?: RequestInit): Promise<T> => (await (await fetch(`${mgr!.api}${path}`, init)).json()) as T;
    const roles = {
      cap: `[transfer]\ndaily_cap = ${opts.cap}\n`,
      pause: '',
      block: `[never_fetch]\naddress_ranges = ["${BLOCKED_ADDR}"]\n`,
    };
    const dirs: Record<string, string> = {};
    for (const [i, [role, toml]] of Object.entries(roles).entries()) {
      dirs[role] = join(dir, role);
      mkdirSync(dirs[role], { recursive: true, mode: 0o700 });
      writeFileSync(join(dirs[role], 'volunteer.toml'), toml);
      procs.push(await startVolunteerProcess(role, mgr, dirs[role], ['--threads', '2', '--queue', '2', '--coord-interval', '2000', '--seed', String(i + 1)], io(role)));
    }
    const [, pauseV, blockV] = procs as [VolunteerProcess, VolunteerProcess, VolunteerProcess];
    for (let t = 0; (await api<{ online: number }>('/api/crawlers')).online < 3; t++) {
      if (t > 900) throw new Error('the manager did not see the three volunteers within 90 s');
      await sleep(100);
    }
    say('3 volunteers online; adding the channels');
    for (const name of web.siteNames) {
      await api('/api/channels', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: web.site(name).url('/'), depth: 4, delayMs: 0, group: 0 }) });
    }
    const started = Date.now();
    const accepted: number[] = [];
    pauseV.follow((line) => {
      if (line.includes('"task accepted"')) accepted.push(Date.now());
    });

    // The pause volunteer: paused while a task of its runs, resumed later.
    let pauseAt: number | null = null;
    let resumeAt: number | null = null;
    while (Date.now() - started < 30_000) {
      const s = await ownerStatus(dirs.pause!);
      if (s.tasks.running > 0) break;
      await sleep(200);
    }
    pauseAt = Date.now();
    // The node answers once its tasks are handed on (≤ 5 s); the manager's view is watched meanwhile.
    const answered = controlRequest(dirs.pause!, { cmd: 'pause' }).then(() => say(`pause asked at ${((pauseAt! - started) / 1000).toFixed(1)} s (answered in ${Date.now() - pauseAt!} ms)`));
    // The manager's view: the paused volunteer, and why.
    let managerSawPauseMs: number | null = null;
    while (Date.now() - pauseAt < opts.pauseSeconds * 1000) {
      if (managerSawPauseMs === null) {
        const c = (await api<CrawlersLite>('/api/crawlers')).crawlers.find((x) => x.id === pauseV.peerId);
        if (c?.owner?.state === 'paused' && c.owner.reasons.includes('owner')) managerSawPauseMs = Date.now() - pauseAt;
      }
      await sleep(100);
    }
    await answered;
    const paused = await ownerStatus(dirs.pause!);
    resumeAt = Date.now();
    await controlRequest(dirs.pause!, { cmd: 'resume' });
    say(`resumed after ${opts.pauseSeconds} s (state while paused: ${paused.state} ${paused.reasons.join(',')})`);

    while (Date.now() - started < opts.runSeconds * 1000) {
      await sleep(5000);
      const c = (await api<ManagerStatus>('/api/status')).counters;
      say(`${((Date.now() - started) / 1000).toFixed(0)} s: ${c.tasksIssued} tasks issued, ${c.tasksSucceeded} succeeded, ${c.tasksFailed} failed; ${fetches.length} requests`);
    }
    const capStatus = await ownerStatus(dirs.cap!);
    const m = await api<ManagerStatus>('/api/status');
    const pid = (p: VolunteerProcess) => p.proc.pid!;
    const afterPause = fetches.filter((f) => f.pid === pid(pauseV) && f.at >= pauseAt! && f.at < resumeAt!);
    const lastAfterPause = afterPause.length > 0 ? Math.max(...afterPause.map((f) => f.at)) : pauseAt;
    const nextTask = accepted.find((t) => t >= resumeAt!);
    const used = capStatus.today.down + capStatus.today.up;
    const out = {
      capBytes: opts.cap,
      usedBytes: used,
      overshootBytes: Math.max(0, used - opts.cap),
      maxPageBytes: DEFAULT_LIMITS.maxBodyBytes,
      pauseToQuietMs: lastAfterPause - pauseAt,
      resumeToTaskMs: nextTask !== undefined ? nextTask - resumeAt : null,
      managerSawPauseMs,
      blockedFetches: fetches.filter((f) => f.site === 'blocked' && f.pid === pid(blockV)).length,
      tasksIssued: m.counters.tasksIssued,
      tasksEndedOnce: m.counters.tasksSucceeded + m.counters.tasksFailed,
      tasksLost: m.counters.tasksOverdue,
      // Yardsticks: what the figures stand on.
      tasksInFlightAtEnd: m.tasks.issued + m.tasks.running,
      duplicateUploads: m.counters.uploadsDuplicate,
      capState: `${capStatus.state}${capStatus.reasons.length > 0 ? ` (${capStatus.reasons.join(',')})` : ''}`,
      requestsPausedVolunteerWhilePaused: afterPause.length,
      blockedSiteRequestsByOthers: fetches.filter((f) => f.site === 'blocked' && f.pid !== pid(blockV)).length,
      requests: fetches.length,
      requestsWithOperatorContact: fetches.filter((f) => f.userAgent.includes(CONTACT_URL)).length,
      requestsUnattributed: fetches.filter((f) => f.pid === null).length,
      runSeconds: Math.round((Date.now() - started) / 1000),
      timeScale: opts.timeScale,
      loadAvgStart: Math.round(load0 * 100) / 100,
      loadAvgEnd: Math.round(loadavg()[0]! * 100) / 100,
    };
    if (opts.json) process.stdout.write(JSON.stringify(out) + '\n');
    else {
      const ok = (b: boolean) => (b ? 'ok' : 'SHORT');
      process.stdout.write(
        [
          `transfer cap        ${out.capBytes} B, used ${out.usedBytes} B, overshoot ${out.overshootBytes} B (≤ ${out.maxPageBytes})  ${ok(out.overshootBytes <= out.maxPageBytes)}  [cap volunteer: ${out.capState}]`,
          `pause → quiet       ${out.pauseToQuietMs} ms (${out.requestsPausedVolunteerWhilePaused} requests while paused)  ${ok(out.pauseToQuietMs <= 2000)}`,
          `resume → task       ${out.resumeToTaskMs ?? 'none'} ms; the manager showed it paused (owner) ${out.managerSawPauseMs ?? 'never'} ms after the pause`,
          `blocked fetches     ${out.blockedFetches} (the blocked site answered ${out.blockedSiteRequestsByOthers} requests from the others)  ${ok(out.blockedFetches === 0)}`,
          `tasks               ${out.tasksIssued} issued, ${out.tasksEndedOnce} ended, ${out.tasksLost} lost, ${out.tasksInFlightAtEnd} in flight at the end, ${out.duplicateUploads} duplicate uploads  ${ok(out.tasksLost === 0)}`,
          `${out.requests} requests (${out.requestsUnattributed} unattributed, ${out.requestsWithOperatorContact} with the operator's contact URL in the User-Agent), ${out.runSeconds} s at time scale ${out.timeScale}; load ${out.loadAvgStart} → ${out.loadAvgEnd}`,
        ].join('\n') + '\n',
      );
    }
  } catch (err) {
    const logs = [mgr, ...procs].filter((p) => p !== undefined).map((p) => p!.output(30)).join('\n');
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n${logs}`, { cause: err });
  } finally {
    clearInterval(ticker);
    await Promise.all(procs.map((p) => p.stop(15_000)));
    await mgr?.stop(10_000);
    await web.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
