// npm run bench:manager [-- --channels N] [--json] [--data-dir DIR] [--populate-only] [--keep] [--ingest-seconds S] [--no-warc] [--archive-seconds S] [--no-archive] [--smaps] [--threads] [--malloc-arena-max N|default]
//
// glibc's malloc arenas as the installed `dht-manager` has them (src/manager/dht-manager.sh
// sets MALLOC_ARENA_MAX=2 unless the caller set a value): glibc reads the variable only
// when a process starts, so on Linux the benchmark starts itself again with it when its
// environment differs (the parent only waits; getrusage's peak is the child's own).
// `--malloc-arena-max default` measures glibc's own limit (8 per core).
//
// The manager without the network, on a real LevelDB:
//   1. populate: N channels through the channel service's addMany (validated, batched);
//   2. restart: close and reopen (scheduler state rebuilt from the database);
//   3. scheduler throughput: every channel is due; issueDue streams them from the due
//      index and builds tasks (seeds, filters, known digests/validators, deadline) and
//      persists task records, up to the in-flight cap;
//   4. ingest: final upload parts of 10 pages × 20 KB text through the ingest
//      service (validation, versions, validators, estimator, WARC), with the
//      WARC export off and on in alternating slices (off on on off off on on
//      off, so the growing database weighs on both alike); the WARC worker
//      thread starts before (its start-up is reported apart), each run of on
//      slices waits for its pages to be written, and the WARC file is closed
//      inside the on slices' time;
//   4b. --archive full ingest (bench/manager-archive.ts): WARC batches of 10 pages of
//      20 KB as volunteers upload them, checked and written (skip with --no-archive);
//   5. peak RSS (getrusage maxrss) and a second restart with the issued tasks in flight.
// At each phase's peak: V8's heap (committed, used), external and array-buffer memory;
// with --smaps (Linux) also glibc's arenas, the main malloc heap, other anonymous memory
// (the worker threads' isolates among it) and mapped files (bench/native-memory.ts; read
// when a phase's peak has risen by 4 MB, a few ms each, so off by default); run with
// With --threads (Linux) the JSON says which threads the scheduling pass, the ingest's
// WARC-on and WARC-off slices and the archive phase spent their CPU in (bench/thread-cpu.ts).
// `node --expose-gc bin/run-ts.js bench/manager.ts …` and each phase also ends with a
// full collection and reports the live heap (an experiment: it changes the next phase).
// No heap flags: the manager keeps no channel in memory (the due index, the channel
// records and the page store are on disk; tasks in flight are capped, 100 000 by
// default), so its memory should not grow with N.
// Targets (issue 15): ≥ 20 000 tasks/s, ≥ 3 000 pages/s, peak RSS ≤ 400 MB at 3 M channels
// and within 100 MB of the RSS at 300 000, restart ≤ 5 s.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgsOrExit } from './parse-args.js';
import { getHeapStatistics } from 'node:v8';
import { sha1_32 } from '../src/crawler/hash.js';
import type { TaskResult } from '../src/crawler/task.js';
import { Manager } from '../src/manager/manager.js';
import { IngestService } from '../src/manager/services/ingest.js';
import { DEFAULT_GROUPING } from '../src/manager/domain/estimator.js';
import { WarcExporter } from '../src/manager/warc.js';
import { createRng } from '../src/rng.js';
import { benchArchiveIngest, type ArchiveBenchResult, type SampledTask } from './manager-archive.js';
import { nativeMemory, type NativeMemory } from './native-memory.js';
import { addThreadCpu, busiest, threadCpu } from './thread-cpu.js';

const { values } = parseArgsOrExit({
  options: {
    channels: { type: 'string', default: '1000000' },
    json: { type: 'boolean', default: false },
    'data-dir': { type: 'string' },
    'ingest-seconds': { type: 'string', default: '20' },
    'issue-seconds': { type: 'string', default: '60' },
    'no-warc': { type: 'boolean', default: false },
    'archive-seconds': { type: 'string', default: '10' },
    'no-archive': { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    'populate-only': { type: 'boolean', default: false },
    smaps: { type: 'boolean', default: false },
    threads: { type: 'boolean', default: false },
    'malloc-arena-max': { type: 'string' },
  },
});
/** As src/manager/dht-manager.sh: the caller's MALLOC_ARENA_MAX (an empty one counts as unset), else 2. */
const arenas = values['malloc-arena-max'] ?? (process.env.MALLOC_ARENA_MAX || '2');
if (!/^([1-9]\d{0,3}|default)$/.test(arenas)) {
  console.error('--malloc-arena-max must be a positive integer or "default"');
  process.exit(2);
}
if (process.platform === 'linux' && (process.env.MALLOC_ARENA_MAX ?? 'default') !== arenas) {
  const env = { ...process.env };
  if (arenas === 'default') delete env.MALLOC_ARENA_MAX;
  else env.MALLOC_ARENA_MAX = arenas;
  const child = spawnSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit', env });
  process.exit(child.status ?? 1);
}
const N = Number(values.channels);
if (!Number.isInteger(N) || N < 100) {
  console.error('--channels must be an integer ≥ 100');
  process.exit(2);
}
const dir = values['data-dir'] ?? mkdtempSync(join(tmpdir(), 'volcrawl-bench-mgr-'));
const say = (s: string) => {
  if (!values.json) process.stderr.write(s + '\n');
};
/** CPU seconds (user + system) this process used since `c`. */
const cpuSince = (c: NodeJS.CpuUsage) => {
  const d = process.cpuUsage(c);
  return (d.user + d.system) / 1e6;
};
const peakRssMb = () => process.resourceUsage().maxRSS / 1024;
const clock = { t: Date.UTC(2026, 0, 1) };
const now = () => clock.t;

// Peak RSS per phase (sampled every 50 ms), to see where memory goes: at each phase's
// peak, how much of it was V8's heap (committed, and used) and external memory.
const phasePeak: Record<string, number> = {};
const phasePeakDetail: Record<string, { heapTotal: number; heapUsed: number; external: number; arrayBuffers: number; native?: NativeMemory }> = {};
const nativeAt: Record<string, number> = {};
const liveHeap: Record<string, number> = {};
let phase = 'start';
const mb = (x: number) => Math.round(x / 2 ** 20);
const sampler = setInterval(() => {
  const r = mb(process.memoryUsage.rss());
  if (r <= (phasePeak[phase] ?? 0)) return;
  phasePeak[phase] = r;
  const u = process.memoryUsage();
  let native = phasePeakDetail[phase]?.native;
  if (values.smaps && r >= (nativeAt[phase] ?? 0) + 4) {
    nativeAt[phase] = r;
    native = nativeMemory() ?? undefined;
  }
  phasePeakDetail[phase] = { heapTotal: mb(u.heapTotal), heapUsed: mb(u.heapUsed), external: mb(u.external), arrayBuffers: mb(u.arrayBuffers), ...(native !== undefined ? { native } : {}) };
}, 50);
sampler.unref();
// --threads: CPU ms per thread, per phase (the ingest's WARC-on and -off slices apart).
const threadMs: Record<string, Map<string, number>> = {};
// A thread that ends inside a span (the WARC worker, on close) is counted as last seen.
const lastSeen = new Map<string, number>();
if (values.threads) setInterval(() => threadCpu().forEach((v, k) => lastSeen.set(k, v)), 200).unref();
const threadSpan = <T>(name: string, run: () => Promise<T>): Promise<T> => {
  if (!values.threads) return run();
  const before = new Map([...lastSeen, ...threadCpu()]);
  return run().finally(() => addThreadCpu((threadMs[name] ??= new Map()), before, new Map([...lastSeen, ...threadCpu()])));
};
const gc = (globalThis as { gc?: () => void }).gc;
const enter = (p: string) => {
  if (gc !== undefined && phase !== 'start') {
    gc();
    liveHeap[phase] = mb(process.memoryUsage().heapUsed);
  }
  phase = p;
};

async function main() {
  // 1. populate
  enter('populate');
  let m = await Manager.open({ dataDir: dir, clock: now });
  let t0 = performance.now();
  const existing = m.sched.size;
  for (let i = existing; i < N; i += 10_000) {
    const batch: unknown[] = [];
    for (let j = i; j < Math.min(N, i + 10_000); j++) batch.push({ url: `http://h${j}.bench.test/`, group: j % 5 });
    await m.channels.addMany(batch);
    if (((i / 10_000) | 0) % 10 === 0) say(`populate: ${Math.min(N, i + 10_000)} / ${N} channels, rss ${(process.memoryUsage.rss() / 2 ** 20).toFixed(0)} MB`);
  }
  const populateSeconds = (performance.now() - t0) / 1000;
  say(`populate: ${N} channels in ${populateSeconds.toFixed(1)} s`);
  if (values['populate-only']) {
    // A database to copy for several runs (--data-dir <copy>): populating millions of channels is slow.
    await m.close();
    return;
  }

  enter('restart');
  // 2. restart (the old instance is dropped first, as a restarted process would)
  await m.close();
  // eslint-disable-next-line no-useless-assignment -- drop the reference before reopening, as a restarted process would
  m = null as unknown as Manager;
  t0 = performance.now();
  m = await Manager.open({ dataDir: dir, clock: now });
  const restartSeconds = (performance.now() - t0) / 1000;
  say(`restart: ${m.sched.size} channels restored in ${restartSeconds.toFixed(2)} s`);

  // 3. scheduler throughput (all channels due)
  enter('issue');
  clock.t += 1;
  let issued = 0;
  let c0 = process.cpuUsage();
  const budget = Number(values['issue-seconds']) * 1000;
  t0 = performance.now();
  // Only what the ingest phases need of the tasks they upload for: keeping whole tasks
  // (channel records, known pages) would charge the benchmark's own memory, and the
  // garbage collector's marking of it, to the scheduler.
  const sample: SampledTask[] = [];
  const keepSample = Number(values['ingest-seconds']) > 0 ? 20_000 : 0;
  const taskService = m.tasks; // (a closure over `m` itself would hide its reassignments from the linter)
  while (issued < N && performance.now() - t0 < budget) {
    const got = await threadSpan('issue', () => taskService.issueDue(5000));
    if (got.length === 0) break;
    for (const it of got.slice(0, Math.max(0, keepSample - sample.length))) sample.push({ task: { id: it.task.id, scope: it.task.scope }, channel: { host: it.channel.host } });
    issued += got.length;
  }
  const issueSeconds = (performance.now() - t0) / 1000;
  const issueCpu = cpuSince(c0);
  const scheduledPerSec = issued / issueSeconds;
  say(`scheduler: ${issued} tasks issued and persisted in ${issueSeconds.toFixed(2)} s = ${scheduledPerSec.toFixed(0)} tasks/s (${(issued / issueCpu).toFixed(0)} per CPU-second of this process)`);

  // 4. ingest 20 KB pages
  enter('ingest');
  let warc: WarcExporter | null = null;
  // Ingest services of their own: one exporting to the WARC writer, one not.
  let ingest: IngestService | null = null;
  const rng = createRng(42);
  const words = Array.from({ length: 2000 }, () => Math.floor(rng.next() * 2 ** 32).toString(36));
  const text = (k: number) => {
    let s = '';
    let i = k;
    while (s.length < 20_000) s += words[(i = (i * 7919 + 13) % words.length)]! + ' ';
    return s.slice(0, 20_000);
  };
  // Page texts and digests are prepared before the clock starts: the crawler makes them, not the manager.
  const texts = Array.from({ length: 200 }, (_, i) => text(i));
  const digests = texts.map((x) => sha1_32(x));
  let pages = 0;
  let bytes = 0;
  const ingestBudget = Number(values['ingest-seconds']) * 1000;
  let k = 0;
  c0 = process.cpuUsage();
  const concurrency = 8;
  const one = async (it: SampledTask) => {
    const ps = Array.from({ length: 10 }, (_, j) => {
      const x = (k * 10 + j) % texts.length;
      const body = texts[x]!;
      return { url: `${it.task.scope.origin}/p/${j}.html`, status: 200, depth: 1, fetchedAt: now(), contentType: 'text/html', bytes: body.length, digest: digests[x]!, text: body, title: `page ${j}` };
    });
    k++;
    const result: TaskResult = {
      taskId: it.task.id,
      channel: it.task.scope,
      part: 0,
      final: true,
      status: 'completed',
      startedAt: now(),
      finishedAt: now(),
      pages: ps,
      validators: ps.map((p) => ({ url: p.url, digest: p.digest, depth: 1 })),
      newDigests: ps.map((p) => p.digest),
      interSiteUrls: [],
      outcomes: { changed: 10 },
      errors: [],
      stats: { pagesFetched: 10, pagesChanged: 10, pagesUnchanged: 0, pagesNotModified: 0, pagesFailed: 0, requests: 11, bytes: 200_000, downloadMs: 5000, rttMs: 30, crawlDelayMs: 1000, urlsDiscovered: 10, urlsSpilled: 0 },
    };
    await ingest!.ingest({ orderId: it.task.id, crawler: 'bench', host: it.channel.host, hostRttMs: 30, result }, 'benchPeer');
    pages += 10;
    bytes += 200_000;
  };
  let next = 0;
  const slices = values['no-warc'] ? [false] : [false, true, true, false, false, true, true, false];
  const per = { on: { pages: 0, ms: 0 }, off: { pages: 0, ms: 0 } };
  const tStart = performance.now();
  if (!values['no-warc']) {
    warc = new WarcExporter(join(dir, 'warc'));
    await warc.ready();
  }
  const warcStartMs = performance.now() - tStart;
  let withoutWarc: IngestService | null = new IngestService(m.core, m.tasks, DEFAULT_GROUPING, null);
  let withWarc: IngestService | null = warc ? new IngestService(m.core, m.tasks, DEFAULT_GROUPING, warc) : null;
  const tIngest = performance.now();
  for (const [i, on] of slices.entries()) {
    const ts = performance.now();
    const pages0 = pages;
    ingest = on ? withWarc : withoutWarc;
    const budget = ingestBudget / slices.length;
    await threadSpan(on ? 'ingestWarcOn' : 'ingestWarcOff', async () => {
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < sample.length && performance.now() - ts < budget) await one(sample[next++]!);
        }),
      );
      // A run of on slices ends when its pages are written (the last one when the file is closed).
      if (on && slices[i + 1] !== true) while (warc !== null && warc.backlog > 0) await new Promise((r) => setImmediate(r));
      if (on && !slices.slice(i + 1).includes(true)) await warc?.close();
    });
    const d = on ? per.on : per.off;
    d.pages += pages - pages0;
    d.ms += performance.now() - ts;
  }
  const ingestSeconds = (performance.now() - tIngest) / 1000;
  const ingestCpu = cpuSince(c0);
  const rate = (d: { pages: number; ms: number }) => (d.ms > 0 ? (d.pages * 1000) / d.ms : 0);
  const offPagesPerSec = rate(per.off);
  const onPagesPerSec = rate(per.on);
  // The figure against the target is the WARC-on one (the off one with --no-warc).
  const ingestPagesPerSec = warc ? onPagesPerSec : offPagesPerSec;
  say(`ingest: ${pages} pages (${(bytes / 1e6).toFixed(0)} MB text) in ${ingestSeconds.toFixed(2)} s (${(pages / ingestCpu).toFixed(0)} per CPU-second of the process, all threads): WARC off ${offPagesPerSec.toFixed(0)} pages/s${warc ? `, WARC on ${onPagesPerSec.toFixed(0)} pages/s (${(onPagesPerSec / offPagesPerSec).toFixed(2)}× of off; the WARC thread's start-up, not timed: ${warcStartMs.toFixed(0)} ms)` : ''}`);

  // 4b. --archive full ingest, over the tasks just ingested (their holder is benchPeer)
  let archive: ArchiveBenchResult | null = null;
  if (!values['no-archive'] && next > 0) {
    enter('archive');
    const opened = m;
    archive = await threadSpan('archive', () => benchArchiveIngest(opened, sample.slice(0, next), 'benchPeer', dir, text, now, Number(values['archive-seconds']) * 1000));
    say(`archive (--archive full) ingest: ${archive.archivePages} pages of 20 KB in batches of 10 with robots.txt and requests: ${archive.archivePagesPerSec} pages/s, ${archive.archiveMbPerSec} MB/s of records, ${archive.archiveCpuUsPerPage} µs CPU per page (all threads; the writer's start-up, not timed: ${archive.archiveWriterStartMs} ms)`);
  }

  // 5. restart with the tasks in flight
  enter('restartWithTasks');
  await m.close();
  // eslint-disable-next-line no-useless-assignment -- drop the references before reopening, as a restarted process would
  m = null as unknown as Manager;
  ingest = null; // the ingest services hold the old manager's state
  // eslint-disable-next-line no-useless-assignment -- as above
  withoutWarc = withWarc = null;
  sample.length = 0;
  t0 = performance.now();
  m = await Manager.open({ dataDir: dir, clock: now });
  const restartWithTasksSeconds = (performance.now() - t0) / 1000;
  say(`restart with ${m.inflight.size} tasks in flight: ${restartWithTasksSeconds.toFixed(2)} s`);
  await m.close();
  enter('end');
  const peak = peakRssMb();
  say(`peak RSS ${peak.toFixed(0)} MB; per phase ${JSON.stringify(phasePeak)}; V8 heap, external memory (and with --smaps native memory) at each phase's peak ${JSON.stringify(phasePeakDetail)}${gc !== undefined ? `; live heap at each phase's end ${JSON.stringify(liveHeap)}` : ''}`);
  const out = {
    channels: N,
    populateSeconds: +populateSeconds.toFixed(2),
    restartSeconds: +restartSeconds.toFixed(2),
    tasksIssued: issued,
    scheduledPerSec: Math.round(scheduledPerSec),
    scheduledPerCpuSec: Math.round(issued / issueCpu),
    ingestPages: pages,
    ingestPagesPerSec: Math.round(ingestPagesPerSec),
    ingestPagesPerSecWarcOff: Math.round(offPagesPerSec),
    ...(warc ? { ingestPagesPerSecWarcOn: Math.round(onPagesPerSec), ingestWarcOnOffRatio: Math.round((onPagesPerSec / offPagesPerSec) * 100) / 100, warcStartMs: Math.round(warcStartMs) } : {}),
    ingestPagesPerCpuSec: Math.round(pages / ingestCpu),
    ...(archive ?? {}),
    loadAverage: +loadavg()[0]!.toFixed(2),
    cpus: cpus().length,
    mallocArenaMax: process.env.MALLOC_ARENA_MAX ?? 'default',
    warc: warc !== null,
    restartWithTasksSeconds: +restartWithTasksSeconds.toFixed(2),
    peakRssMb: Math.round(peak),
    heapLimitMb: Math.round(getHeapStatistics().heap_size_limit / 2 ** 20),
    phasePeakRssMb: phasePeak,
    phasePeakDetailMb: phasePeakDetail,
    ...(gc !== undefined ? { liveHeapMb: liveHeap } : {}),
    ...(values.threads ? { threadCpuMs: Object.fromEntries(Object.entries(threadMs).map(([k, v]) => [k, busiest(v)])), ingestPagesWarcOn: per.on.pages, ingestPagesWarcOff: per.off.pages } : {}),
    targets: { scheduledPerSec: 20_000, ingestPagesPerSec: 3000, archivePagesPerSec: 2000, peakRssMb: 400, restartSeconds: 5 },
  };
  if (values.json) process.stdout.write(JSON.stringify(out) + '\n');
  else {
    const ok = (b: boolean) => (b ? 'ok' : 'MISSED');
    say(
      `targets: scheduler ${ok(out.scheduledPerSec >= 20_000)}, ingest ${ok(out.ingestPagesPerSec >= 3000)}${archive ? `, archive ingest ${ok(archive.archivePagesPerSec >= 2000)}` : ''}, RSS ${ok(out.peakRssMb <= 400)}, restart ${ok(out.restartSeconds <= 5)}`,
    );
  }
  if (!values.keep && values['data-dir'] === undefined) rmSync(dir, { recursive: true, force: true });
}

await main();
