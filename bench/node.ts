// bench:node — what an idle volunteer costs its owner's PC.
//
// Starts `dht-manager serve` and `--volunteers` `volunteer-crawler join`
// processes on loopback, exactly as the README runs them (through bin/, so the
// compiled build, with the Node settings of the executable's first line:
// src/node/runtime-flags.ts), one after another so that each start is timed alone. Once
// all have joined it waits until each has logged 'coordinate settled' (its
// probing pace backed off to the longest gap; at most `--settle` seconds —
// older builds never log it), then measures for `--measure` seconds with no
// tasks:
//   idle RSS     each volunteer's resident set, sampled every 2 s (mean, max)
//   idle CPU     user + system CPU each volunteer process used in the window,
//                as a percent of one core (from /proc/<pid>/stat: the
//                process's own accounting, not the machine's load)
//   start        spawn → the node's 'node started' log line (bootstrap peer
//                reached, DHT and protocols up), median over volunteers
// --detail adds, for each volunteer at its own largest RSS sample, where that
// memory is: /proc/<pid>/smaps by category (native-memory.ts), V8's heap
// spaces and process.memoryUsage() (bench/node-probe.mjs, loaded with
// NODE_OPTIONS=--import into each volunteer: a diagnostic only), and its open
// TCP sockets (≈ connections) — so the heaviest process can be told apart.
// Linux only (/proc).
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Command } from 'commander';
import { int } from '../src/node/crawl-command.js';
import { nativeMemory, type NativeMemory } from './native-memory.js';
import { startManagerProcess, startVolunteerProcess, type ManagerProcess, type VolunteerProcess } from '../testbed/processes.js';

const program = new Command('bench:node')
  .description('idle cost of volunteer processes: RSS, CPU and start-to-joined time')
  .option('--volunteers <n>', 'volunteer processes', int('--volunteers', 1, 200), 10)
  .option('--settle <s>', 'longest wait for every coordinate to settle before measuring, seconds', int('--settle', 1, 86_400), 300)
  .option('--measure <s>', 'idle measurement window, seconds', int('--measure', 1, 86_400), 120)
  .option('--join-args <args>', 'extra flags for every volunteer (space-separated)', '')
  .option('--detail', "per volunteer, where its memory is at its largest RSS sample (smaps, V8's heap spaces, sockets)", false)
  .option('--json', 'print one JSON object on stdout', false)
  .parse(process.argv);
const opts = program.opts<{ volunteers: number; settle: number; measure: number; joinArgs: string; detail: boolean; json: boolean }>();
const say = (s: string) => process.stderr.write(`${s}\n`);

const CLK_TCK = 100; // USER_HZ on Linux
const PAGE_KB = 4;

/** utime + stime of a process, seconds. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start after ') '.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}

function rssMb(pid: number): number {
  const statm = readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ');
  return (Number(statm[1]) * PAGE_KB) / 1024;
}

/** Open sockets of a process (TCP connections and listeners, the control socket). */
function sockets(pid: number): number {
  let n = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:')) n++;
    } catch {
      // closed meanwhile
    }
  }
  return n;
}

interface Detail {
  rssMb: number;
  smaps: NativeMemory | null;
  v8: unknown;
  sockets: number;
}

/** What a volunteer's probe (node-probe.mjs) last wrote, or null. */
function probe(dir: string, pid: number): unknown {
  try {
    return JSON.parse(readFileSync(join(dir, `${pid}.json`), 'utf8')) as unknown;
  } catch {
    return null;
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 === 1 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const dir = mkdtempSync(join(tmpdir(), 'volcrawl-bench-node-'));
const probeDir = join(dir, 'probe');
const probeEnv: Record<string, string> = {};
if (opts.detail) {
  mkdirSync(probeDir);
  const probeUrl = pathToFileURL(resolve(fileURLToPath(new URL('.', import.meta.url)), 'node-probe.mjs')).href;
  Object.assign(probeEnv, { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${probeUrl}`.trim(), VOLCRAWL_BENCH_PROBE: probeDir });
}
let manager: ManagerProcess | undefined;
const volunteers: VolunteerProcess[] = [];
try {
  manager = await startManagerProcess(join(dir, 'manager'));
  say(`manager ${manager.peerId} up`);
  const startMs: number[] = [];
  const extra = opts.joinArgs.trim() === '' ? [] : opts.joinArgs.trim().split(/\s+/);
  const settled = new Set<number>();
  for (let i = 0; i < opts.volunteers; i++) {
    const t = performance.now();
    const v = await startVolunteerProcess(`volunteer ${i}`, manager, join(dir, `v${i}`), ['--log-level', 'info', '--seed', String(i + 1), ...extra], { env: probeEnv });
    startMs.push(performance.now() - t);
    volunteers.push(v);
    v.follow((line) => {
      if (line.includes('"coordinate settled"')) settled.add(i);
    });
    say(`volunteer ${i} joined in ${startMs[i]!.toFixed(0)} ms`);
  }
  const t1 = performance.now();
  while (settled.size < opts.volunteers && performance.now() - t1 < opts.settle * 1000) await sleep(1000);
  const settleSeconds = (performance.now() - t1) / 1000;
  say(`${settled.size}/${opts.volunteers} coordinates settled after ${settleSeconds.toFixed(0)} s`);
  const pids = volunteers.map((v) => v.proc.pid!);
  const cpu0 = pids.map(cpuSeconds);
  const t0 = performance.now();
  const samples: number[][] = pids.map(() => []);
  const details: (Detail | null)[] = pids.map(() => null);
  const load0 = loadavg()[0]!;
  say(`measuring ${opts.measure} s`);
  while (performance.now() - t0 < opts.measure * 1000) {
    pids.forEach((p, i) => {
      const r = rssMb(p);
      samples[i]!.push(r);
      if (opts.detail && r > (details[i]?.rssMb ?? -1)) details[i] = { rssMb: r, smaps: nativeMemory(p), v8: probe(probeDir, p), sockets: sockets(p) };
    });
    await sleep(2000);
  }
  const wall = (performance.now() - t0) / 1000;
  const cpuPct = pids.map((p, i) => (100 * (cpuSeconds(p) - cpu0[i]!)) / wall);
  const dead = volunteers.filter((v) => !v.running).length;
  const result = {
    volunteers: opts.volunteers,
    idleRssMbMean: mean(samples.map(mean)),
    idleRssMbMax: Math.max(...samples.flat()),
    idleCpuPctMean: mean(cpuPct),
    idleCpuPctMax: Math.max(...cpuPct),
    startToJoinedMsMedian: median(startMs),
    startToJoinedMsMax: Math.max(...startMs),
    measureSeconds: wall,
    settled: settled.size,
    settleSeconds,
    exited: dead,
    loadAverage: Number(((load0 + loadavg()[0]!) / 2).toFixed(2)),
    ...(opts.detail ? { perVolunteer: details.map((d, i) => ({ volunteer: i, rssMbMean: Number(mean(samples[i]!).toFixed(1)), ...d })) } : {}),
  };
  if (opts.detail) for (const d of result.perVolunteer ?? []) say(`volunteer ${d.volunteer}: mean ${d.rssMbMean} MB, at its max ${JSON.stringify({ ...d, volunteer: undefined, rssMbMean: undefined })}`);
  if (opts.json) console.log(JSON.stringify(result));
  else {
    console.log(`${opts.volunteers} volunteers, idle for ${wall.toFixed(0)} s (load average ${result.loadAverage}):`);
    console.log(`  RSS mean ${result.idleRssMbMean.toFixed(1)} MB, max ${result.idleRssMbMax.toFixed(1)} MB`);
    console.log(`  CPU mean ${result.idleCpuPctMean.toFixed(2)}% of a core, max ${result.idleCpuPctMax.toFixed(2)}%`);
    console.log(`  start to joined median ${result.startToJoinedMsMedian.toFixed(0)} ms, max ${result.startToJoinedMsMax.toFixed(0)} ms`);
  }
} finally {
  await Promise.all(volunteers.map((v) => v.stop(5_000)));
  await manager?.stop(5_000);
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
