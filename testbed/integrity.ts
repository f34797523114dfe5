// Honest and misbehaving volunteers against one manager, all real processes on
// the local test web, in compressed time: the integrity benchmark
// (bench/integrity.ts) and the end-to-end trust test run this. Misbehaving
// volunteers are the real `volunteer-crawler join` with the test plugin
// (testbed/misbehave.ts). The web's clock runs `timeScale` times faster than
// the real one, so its pages change while the volunteers crawl them; whatever
// the manager decides is read back through its operator API.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { FORGED_MARKER, type Misbehaviour } from './misbehave.js';
import { startManagerProcess, startVolunteerProcess, type ManagerProcess, type VolunteerProcess } from './processes.js';
import { TestWeb, type SiteSpec } from './web/testweb.js';

export interface IntegrityOptions {
  honest: number;
  /** One entry per misbehaving volunteer. */
  malicious: Misbehaviour[];
  /** Sites on the test web (each one channel). */
  sites: number;
  pagesPerSite: number;
  /** Compressed time: manager durations and the web's clock. */
  timeScale: number;
  /** Give up waiting for the quarantines after this long (real ms). */
  maxRunMs: number;
  /** After the last quarantine, wait at most this long for forged pages to be replaced. */
  settleMs: number;
  /** The fixed horizon: after the point where the run used to stop (every misbehaving
   * volunteer caught, forged pages replaced), run on until this many more tasks finished
   * (0: stop there, as before). The figures are taken at the stop point; the
   * run-on gives the steady-state overhead (`horizon`). Bounded by maxRunMs again. */
  runOnTasks?: number;
  seed: number;
  /** Each volunteer's log (else piped and dropped). */
  logDir?: string;
  onProgress?: (s: string) => void;
  /** Stops the run early (the processes are still stopped and the figures so far returned). */
  signal?: AbortSignal;
  /** Each honest volunteer's capacity (default 2 threads, queue 2). */
  honestCapacity?: { threads: number; queue: number };
  /** Each misbehaving volunteer's capacity (default 2 threads, queue 2). */
  maliciousCapacity?: { threads: number; queue: number };
  /** Newcomers joining a running network: the misbehaving volunteers and the last `lateHonest`
   * honest ones start this long (real ms) after the channels were added (default 0: all at once). */
  joinAfterMs?: number;
  lateHonest?: number;
  /** More `dht-manager serve` flags (e.g. --spot-check-min-rate). */
  managerArgs?: string[];
  /** Called after the run, before the processes stop (tests use the running manager). */
  beforeStop?: (h: { api: string; dataDir: string; honest: string[]; malicious: string[] }) => Promise<void>;
}

export interface IntegrityResult {
  honest: number;
  malicious: number;
  detected: number;
  falselyQuarantined: number;
  forgedCurrentAtEnd: number;
  tasksToDetectMedian: number | null;
  verificationOverhead: number;
  /** Yardsticks. The overhead spent on honest volunteers' tasks alone (the rest is the cost of the attack). */
  honestOverhead: number;
  /** Overlay verdicts (coordinate claims, cells) on honest volunteers: bad ones would be false accusations. */
  honestOverlayVerdicts: { ok: number; bad: number };
  tasksToDetect: (number | null)[];
  /** Each misbehaving volunteer's finished tasks at the end. */
  maliciousTasks: number[];
  realSecondsToDetect: (number | null)[];
  tasks: number;
  checks: number;
  tieBreaks: number;
  recrawls: number;
  /** (checks + third crawls + re-crawls after quarantines) ÷ tasks: the overhead if re-crawls counted. */
  overheadWithRecrawls: number;
  checksDropped: number;
  checksDeferred: number;
  /** Checks and third crawls not sent because a side was quarantined meanwhile. */
  checksCancelled: number;
  /** Third crawls that outvoted nobody, third crawls that outvoted a crawl on coverage alone,
   * and coverage disputes settled by a stored crawl instead of a third crawl. */
  noMajority: number;
  coverageOutvotes: number;
  storedTieBreaks: number;
  /** ... of which settled by an earlier check crawl of the channel (a coverage witness, witnesses.ts). */
  witnessTieBreaks: number;
  /** Crawls spared by stored text of the same page bodies (text-refs.ts): intro checks passed
   * with no second crawl, contradictions settled with no third crawl. */
  storedIntroPasses: number;
  textTieBreaks: number;
  /** Where the extra crawls went: second and third crawls spent checking each volunteer's tasks
   * (`honest-<i>`, `malicious-<i>-<mode>`), the misbehaving volunteers' summed apart. */
  checkedHonest: number;
  checkedMalicious: number;
  checkedBy: Record<string, number>;
  /** Each volunteer's tasks that stored page text (what its intro check counts). */
  textTasksBy: Record<string, number>;
  /** Second crawls by why they were issued (intro, sampled, anomaly-empty, anomaly-changes, failure-claim). */
  checksByReason: Record<string, number>;
  forgedCurrentPeak: number;
  runSeconds: number;
  timeScale: number;
  /** With runOnTasks: the run continued past the stop point for a fixed number of tasks.
   * `afterDetection` is the steady-state overhead (extra crawls ÷ tasks over the run-on
   * alone, everyone misbehaving already caught); `wholeRun` the same over the whole run.
   * The figure (verificationOverhead) stays the one at the stop point. The
   * quarantine and forged-page counts above are taken at the end of the whole run. */
  /** The extra crawls over the run's first 50, 100, 150, ... tasks (each as soon as the
   * run got there, with how many misbehaving volunteers were caught by then): a yardstick
   * that does not move with how early the run stopped. */
  atTasks: (HorizonPart & { caught: number })[];
  horizon?: {
    runOnTasks: number;
    afterDetection: HorizonPart;
    wholeRun: HorizonPart;
    seconds: number;
  };
}

/** Extra crawls over a span of a run. */
export interface HorizonPart {
  tasks: number;
  checks: number;
  tieBreaks: number;
  overhead: number;
  byReason: Record<string, number>;
}

interface VolunteerSummary {
  id: string;
  status: string;
  tasks: number;
  checked: number;
  /** Absent from a manager before session 10. */
  textTasks?: number;
  tasksAtHold: number | null;
  quarantine: { since: number } | null;
  totals: { coordinate: number; coordinateOk: number };
}
interface VolunteersView {
  counters: { primary: number; spotChecks: number; tieBreaks: number; recrawls: number; checksDropped: number; checksDeferred?: number; checksCancelled?: number; noMajority?: number; coverageOutvotes?: number; storedTieBreaks?: number; witnessTieBreaks?: number; storedIntroPasses?: number; textTieBreaks?: number; byReason?: Record<string, number> };
  verificationOverhead: number;
  volunteers: VolunteerSummary[];
}

/** The plugin as the volunteer process loads it: compiled, since bin/ runs the build (dist/testbed). */
const MISBEHAVE_PLUGIN = resolve(import.meta.dirname, import.meta.filename.endsWith('.ts') ? '../dist/testbed/misbehave.js' : 'misbehave.js');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The extra crawls between two readings of the manager's counters. */
function span(from: VolunteersView['counters'] | null, to: VolunteersView['counters']): HorizonPart {
  const tasks = to.primary - (from?.primary ?? 0);
  const checks = to.spotChecks - (from?.spotChecks ?? 0);
  const tieBreaks = to.tieBreaks - (from?.tieBreaks ?? 0);
  const byReason: Record<string, number> = {};
  for (const [k, n] of Object.entries(to.byReason ?? {})) {
    const d = n - (from?.byReason?.[k] ?? 0);
    if (d > 0) byReason[k] = d;
  }
  return { tasks, checks, tieBreaks, overhead: tasks > 0 ? Math.round(((checks + tieBreaks) / tasks) * 1e4) / 1e4 : 0, byReason };
}

function median(xs: number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export async function runIntegrity(o: IntegrityOptions): Promise<IntegrityResult> {
  const say = o.onProgress ?? (() => undefined);
  const dir = mkdtempSync(join(tmpdir(), 'volcrawl-integrity-'));
  // One loopback address per site (the manager sends one task per host at a time);
  // change rates from static to a few a day, so pages change during the run.
  const specs: SiteSpec[] = Array.from({ length: o.sites }, (_, i) => ({ name: `s${i}`, bindHost: `127.0.${1 + (i >> 8)}.${(i % 250) + 2}`, pages: o.pagesPerSite, fanout: 4, pageBytes: 1500, changesPerDay: [0, 0.25, 1, 2][i % 4]! }));
  const web = await TestWeb.start(specs, { seed: o.seed });
  let mgr: ManagerProcess | undefined;
  const procs: VolunteerProcess[] = [];
  const started = Date.now();
  const ticker = setInterval(() => web.clock.advance(100 * o.timeScale), 100);
  try {
    mgr = await startManagerProcess(join(dir, 'manager'), ['--time-scale', String(o.timeScale), '--tick', '200', '--log-level', 'info', ...(o.managerArgs ?? [])], o.logDir !== undefined ? { logFile: join(o.logDir, 'manager.log') } : {});
    // Retried: under load a keep-alive socket the server has just closed resets now and then
    // (session 8: one run of seed 1 died on "fetch failed: ECONNRESET" after 420 s).
    const api = async <T>(path: string): Promise<T> => {
      for (let attempt = 1; ; attempt++) {
        try {
          return (await (await fetch(`${mgr!.api}${path}`)).json()) as T;
        } catch (err) {
          if (attempt >= 3) throw err;
          await sleep(500);
        }
      }
    };
    const io = (name: string, env?: Record<string, string>) => ({ ...(o.logDir !== undefined ? { logFile: join(o.logDir, `${name}.log`) } : {}), ...(env !== undefined ? { env } : {}) });
    const defaultCapacity = { threads: 2, queue: 2 };
    const args = (i: number, c: { threads: number; queue: number }) => ['--threads', String(c.threads), '--queue', String(c.queue), '--coord-interval', '5000', '--seed', String(o.seed * 100 + i)];
    const names = new Map<string, string>();
    const bad: VolunteerProcess[] = [];
    const badIds = new Set<string>();
    const joinAfter = o.joinAfterMs ?? 0;
    const early = joinAfter > 0 ? Math.max(0, o.honest - (o.lateHonest ?? 0)) : o.honest;
    const waitOnline = async (n: number): Promise<void> => {
      for (let t = 0; (await api<{ online: number }>('/api/crawlers')).online < n; t++) {
        if (t > 900 || o.signal?.aborted === true) throw new Error('the manager did not see every volunteer within 90 s');
        await sleep(100);
      }
    };
    // Honest volunteers [from, to), then (with `withBad`) every misbehaving one.
    const startVolunteers = async (from: number, to: number, withBad: boolean): Promise<void> => {
      for (let i = from; i < to; i++) {
        const p = await startVolunteerProcess(`honest-${i}`, mgr!, join(dir, `h${i}`), args(i, o.honestCapacity ?? defaultCapacity), io(`honest-${i}`));
        procs.push(p);
        names.set(p.peerId, `honest-${i}`);
      }
      if (!withBad) return;
      for (const [i, mode] of o.malicious.entries()) {
        const p = await startVolunteerProcess(`malicious-${i}-${mode}`, mgr!, join(dir, `m${i}`), args(100 + i, o.maliciousCapacity ?? defaultCapacity), io(`malicious-${i}-${mode}`, { VOLCRAWL_TEST_PLUGIN: MISBEHAVE_PLUGIN, VOLCRAWL_MISBEHAVE: mode }));
        procs.push(p);
        bad.push(p);
        badIds.add(p.peerId);
        names.set(p.peerId, `malicious-${i}-${mode}`);
      }
    };
    await startVolunteers(0, early, joinAfter === 0);
    const total = o.honest + o.malicious.length;
    await waitOnline(procs.length);
    say(`${procs.length} volunteers online; adding ${o.sites} channels`);
    const channels: string[] = [];
    for (const name of web.siteNames) {
      const res = await fetch(`${mgr.api}/api/channels`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: web.site(name).url('/'), depth: 3, delayMs: 0, group: 0 }) });
      channels.push(((await res.json()) as { id: string }).id);
    }
    if (joinAfter > 0) {
      await sleep(joinAfter);
      await startVolunteers(early, o.honest, true);
      await waitOnline(total);
      say(`${total - early} newcomers joined after ${Math.round(joinAfter / 1000)} s`);
    }
    const forgedNow = async (): Promise<number> => {
      let n = 0;
      for (const id of channels) {
        const pages = (await api<{ pages: { text: string }[] }>(`/api/channels/${id}/content?limit=1000`)).pages;
        n += pages.filter((p) => p.text.includes(FORGED_MARKER)).length;
      }
      return n;
    };
    let peak = 0;
    const detectedAt = new Map<string, number>();
    const atTasks: IntegrityResult['atTasks'] = [];
    const milestone = (view: VolunteersView): void => {
      const next = (atTasks.length + 1) * 50;
      if (view.counters.primary >= next) atTasks.push({ ...span(null, view.counters), caught: view.volunteers.filter((s) => badIds.has(s.id) && s.quarantine !== null).length });
    };
    let v: VolunteersView = await api<VolunteersView>('/api/volunteers');
    let settleFrom: number | null = null;
    for (;;) {
      await sleep(1000);
      v = await api<VolunteersView>('/api/volunteers');
      for (const s of v.volunteers) if (badIds.has(s.id) && s.quarantine !== null && !detectedAt.has(s.id)) detectedAt.set(s.id, Date.now() - started);
      milestone(v);
      const forged = await forgedNow();
      peak = Math.max(peak, forged);
      const elapsed = Date.now() - started;
      say(`${(elapsed / 1000).toFixed(0)} s: ${v.counters.primary} tasks, ${v.counters.spotChecks} checks, ${v.counters.tieBreaks} third crawls, ${detectedAt.size}/${bad.length} quarantined, ${forged} forged pages current`);
      if (detectedAt.size === bad.length && settleFrom === null) settleFrom = Date.now();
      if (settleFrom !== null && (forged === 0 || Date.now() - settleFrom > o.settleMs)) break;
      if (elapsed > o.maxRunMs || o.signal?.aborted === true) break;
    }
    // The figures are taken here, where the run used to end.
    const atStop = v;
    let horizon: IntegrityResult['horizon'];
    const runOn = o.runOnTasks ?? 0;
    const aborted = (): boolean => o.signal?.aborted === true;
    if (runOn > 0 && settleFrom !== null && !aborted()) {
      const from = Date.now();
      say(`every misbehaving volunteer caught: running on for ${runOn} tasks`);
      while (v.counters.primary < atStop.counters.primary + runOn && Date.now() - from < o.maxRunMs && !aborted()) {
        await sleep(1000);
        v = await api<VolunteersView>('/api/volunteers');
        milestone(v);
        say(`run-on ${((Date.now() - from) / 1000).toFixed(0)} s: ${v.counters.primary - atStop.counters.primary}/${runOn} tasks, ${v.counters.spotChecks - atStop.counters.spotChecks} checks, ${v.counters.tieBreaks - atStop.counters.tieBreaks} third crawls`);
      }
      horizon = { runOnTasks: runOn, afterDetection: span(atStop.counters, v.counters), wholeRun: span(null, v.counters), seconds: Math.round((Date.now() - from) / 1000) };
    }
    const forgedEnd = await forgedNow();
    await o.beforeStop?.({ api: mgr.api, dataDir: join(dir, 'manager'), honest: procs.filter((p) => !badIds.has(p.peerId)).map((p) => p.peerId), malicious: bad.map((b) => b.peerId) });
    const byId = new Map(v.volunteers.map((s) => [s.id, s]));
    const stopById = new Map(atStop.volunteers.map((s) => [s.id, s]));
    const honestSummaries = atStop.volunteers.filter((s) => !badIds.has(s.id));
    const honestTasks = honestSummaries.reduce((n, s) => n + s.tasks, 0);
    const honestChecked = honestSummaries.reduce((n, s) => n + s.checked, 0);
    const checkedBy = Object.fromEntries(atStop.volunteers.filter((s) => names.has(s.id)).map((s) => [names.get(s.id)!, s.checked]).sort());
    const textTasksBy = Object.fromEntries(atStop.volunteers.filter((s) => names.has(s.id)).map((s) => [names.get(s.id)!, s.textTasks ?? 0]).sort());
    const checkedMalicious = atStop.volunteers.filter((s) => badIds.has(s.id)).reduce((n, s) => n + s.checked, 0);
    const tasksToDetect = bad.map((b) => stopById.get(b.peerId)?.tasksAtHold ?? null);
    const c = atStop.counters;
    return {
      honest: o.honest,
      malicious: bad.length,
      detected: bad.filter((b) => byId.get(b.peerId)?.quarantine != null).length,
      falselyQuarantined: procs.filter((p) => !badIds.has(p.peerId) && byId.get(p.peerId)?.quarantine != null).length,
      forgedCurrentAtEnd: forgedEnd,
      tasksToDetectMedian: median(tasksToDetect.filter((x): x is number => x !== null)),
      verificationOverhead: Math.round(atStop.verificationOverhead * 1e4) / 1e4,
      honestOverhead: honestTasks > 0 ? Math.round((honestChecked / honestTasks) * 1e4) / 1e4 : 0,
      honestOverlayVerdicts: { ok: honestSummaries.reduce((n, s) => n + s.totals.coordinateOk, 0), bad: honestSummaries.reduce((n, s) => n + s.totals.coordinate, 0) },
      tasksToDetect,
      maliciousTasks: bad.map((b) => stopById.get(b.peerId)?.tasks ?? 0),
      realSecondsToDetect: bad.map((b) => (detectedAt.has(b.peerId) ? Math.round(detectedAt.get(b.peerId)! / 100) / 10 : null)),
      tasks: c.primary,
      checks: c.spotChecks,
      tieBreaks: c.tieBreaks,
      recrawls: c.recrawls,
      overheadWithRecrawls: c.primary > 0 ? Math.round(((c.spotChecks + c.tieBreaks + c.recrawls) / c.primary) * 1e4) / 1e4 : 0,
      checksDropped: c.checksDropped,
      checksDeferred: c.checksDeferred ?? 0,
      checksCancelled: c.checksCancelled ?? 0,
      noMajority: c.noMajority ?? 0,
      coverageOutvotes: c.coverageOutvotes ?? 0,
      storedTieBreaks: c.storedTieBreaks ?? 0,
      witnessTieBreaks: c.witnessTieBreaks ?? 0,
      storedIntroPasses: c.storedIntroPasses ?? 0,
      textTieBreaks: c.textTieBreaks ?? 0,
      checkedHonest: honestChecked,
      checkedMalicious,
      checkedBy,
      textTasksBy,
      checksByReason: c.byReason ?? {},
      forgedCurrentPeak: peak,
      runSeconds: Math.round((Date.now() - started) / 1000),
      timeScale: o.timeScale,
      atTasks,
      ...(horizon !== undefined ? { horizon } : {}),
    };
  } catch (err) {
    const logs = [mgr, ...procs].filter((p) => p !== undefined).map((p) => p!.output(40)).join('\n');
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n${logs}`, { cause: err });
  } finally {
    clearInterval(ticker);
    await Promise.all(procs.map((p) => p.kill()));
    await mgr?.stop(10_000);
    await web.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
