#!/usr/bin/env node
// `sim`: the discrete-event simulator that replays the paper's experiments.
// First, as in every entry point: the Node 20 polyfill (src/polyfill.ts).
import '../src/polyfill.js';
import { existsSync, statSync } from 'node:fs';
import { Option } from 'commander';
import { SingleBar } from 'cli-progress';
import { createProgram, runProgram } from '../src/cli.js';
import type { IcrEncourage, RecrawlOptions, StrategyName } from '../src/recrawl/index.js';
import { STRATEGIES } from '../src/recrawl/index.js';
import type { FullSystemRule, RttRule, SimReadings } from './model.js';
import { simReadings } from './model.js';
import { registerAuditPaper } from './audit-cli.js';
import { DEFAULT_PLACEMENT_OPTIONS, placementOptions, type PlacementOptions } from '../src/dht/placement.js';
import { jsonSummary, markdown, writeOut } from './report.js';
import { defaultJobs, runScenarioParallel } from './run-parallel.js';
import { DEFAULT_SWEEP_CRAWLERS, QUICK_SWEEP_STEPS, runSweep } from './sweep.js';
import { sweepMarkdown, writeSweep } from './sweep-report.js';

const program = createProgram(
  'sim',
  "volcrawl simulator: replay the paper's rec/ruc experiments on measured latency data",
);

function intArg(name: string, min: number, max: number) {
  return (v: string): number => {
    if (!/^-?\d+$/.test(v.trim())) throw new Error(`--${name} must be an integer, got '${v}'`);
    const n = Number(v);
    if (n < min || n > max) throw new Error(`--${name} must be between ${min} and ${max}, got ${n}`);
    return n;
  };
}

function numArg(name: string, min: number) {
  return (v: string): number => {
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number >= ${min}, got '${v}'`);
    return n;
  };
}

interface RunFlags extends CafFlags {
  scenario: 'rec' | 'ruc';
  steps?: number;
  seed: number;
  strategy: StrategyName | 'all';
  routing: 'coord' | 'hash';
  scale: number;
  latency?: string;
  out?: string;
  quick?: boolean;
  json?: boolean;
  rateCap?: number;
  minInterval?: number;
  encourage?: number;
  providerTtl?: number;
  knownPeers?: [number, number];
  placement?: Partial<PlacementOptions>;
  fullSystem?: FullSystemRule;
  rttRule?: RttRule;
  icrEncourage?: IcrEncourage;
  faithful?: boolean;
  jobs?: number;
}

interface CafFlags {
  cafCostExponent?: number;
  cafMaxQueue?: number;
}

/** CAF's knobs a run or a sweep may set (docs/recrawl.md, "CAF"). */
function cafOptions(flags: CafFlags): Partial<RecrawlOptions> {
  if (flags.cafCostExponent !== undefined && flags.cafCostExponent > 1) throw new Error(`--caf-cost-exponent must be in [0, 1], got ${flags.cafCostExponent}`);
  const o: Partial<RecrawlOptions> = {};
  if (flags.cafCostExponent !== undefined) o.cafCostExponent = flags.cafCostExponent;
  if (flags.cafMaxQueue !== undefined) o.cafMaxQueue = flags.cafMaxQueue;
  return o;
}

/** The CAF flags, added to a command's options where they belong in its help. */
function cafFlags(): Option[] {
  return [
    new Option('--caf-cost-exponent <x>', "CAF: within a group, a channel's interval × (its mean download time ÷ its group's)^x, x in [0, 1] (default 0: off)").argParser(numArg('caf-cost-exponent', 0)),
    new Option('--caf-max-queue <q>', 'CAF: the queued tasks per online thread it lets build up (default 0.9)').argParser(numArg('caf-max-queue', 0)),
  ];
}

/** The model and recrawl readings from the flags (sim/model.ts simReadings):
 * the paper's by default (issue 12), --no-faithful for the earlier ones, an
 * explicit flag overriding either. */
function readings(flags: Pick<RunFlags, 'faithful' | 'fullSystem' | 'rttRule' | 'icrEncourage'>): SimReadings {
  return simReadings(flags.faithful !== false, { fullSystem: flags.fullSystem, rttRule: flags.rttRule, icrEncourage: flags.icrEncourage });
}

program
  .command('run')
  .description('simulate the rec (16000 hosts, 1400 crawlers) or ruc (2800 crawlers) scenario of the paper (§4)')
  .addOption(new Option('--scenario <name>', 'scenario').choices(['rec', 'ruc']).default('rec'))
  .option('--steps <n>', 'one-minute steps to simulate (default 90000, 10000 with --quick)', intArg('steps', 1, 10_000_000))
  .option('--seed <n>', 'seed of every random stream', intArg('seed', 0, 2 ** 31 - 1), 1)
  .option('--scale <k>', 'multiply hosts and crawlers by k (10: 160000 channels and 28000 crawlers in ruc)', intArg('scale', 1, 100), 1)
  .addOption(new Option('--strategy <name>', 'recrawl strategy').choices([...STRATEGIES, 'all']).default('all'))
  .addOption(new Option('--routing <mode>', 'task routing: nearest crawler in coordinates, or hash of the host').choices(['coord', 'hash']).default('coord'))
  .option('--latency <file>', 'latency matrix (ms matrix, King matrix in µs, or p2psim E2EGraph); default: the shipped PlanetLab 490-node data')
  .option('--out <dir>', 'write report.json, summary.json, tables.md, timeseries.csv and SVG figures here')
  .option('--quick', 'small preset (2000 hosts, 1/8 of the crawlers, 10000 steps) for tests and demos')
  .option('--json', 'print one JSON object instead of Markdown tables')
  .option('--rate-cap <x>', 'cap each channel at x times its change frequency (off by default)', numArg('rate-cap', 0.000001))
  .option('--min-interval <min>', 'floor on any recrawl interval in minutes (default 5)', numArg('min-interval', 0))
  .option('--encourage <delta>', 'encourage rate δ in (0, 1] (default 0.6)', numArg('encourage', 0.000001))
  .option('--provider-ttl <s>', 'provider record lifetime of the modelled DHT in seconds (default: the live TTL, 600)', intArg('provider-ttl', 4, 7 * 86_400))
  .option('--known-peers <near,random>', "the crawlers each crawler knows and forwards to: its nearest and some at random (default 64,64; a live node probes 8,8)", peerCounts)
  .option('--placement <k=v,...>', 'placement policy options (src/dht/placement.ts), e.g. spill=4,widen=true,lastHopBound=4,outward=true,queueSpill=2,fullWalkEnds=true (default: the live policy)', placementArg)
  .option('--faithful', "follow the paper's words where they speak (the default): --full-system hold --rtt-rule paper --icr-encourage group")
  .option('--no-faithful', 'the earlier readings (the tables before faithful became the default): --full-system reject --rtt-rule physical --icr-encourage system')
  .addOption(new Option('--full-system <rule>', 'a task no crawler has room for: reject it, or hold it at a crawler beyond its queue (the paper)').choices(['reject', 'hold']))
  .addOption(new Option('--rtt-rule <rule>', 'per-page RTT: the matrix value (physical), or 2 × it (the paper on p2psim)').choices(['physical', 'paper']))
  .addOption(new Option('--icr-encourage <scope>', "ICR's encourage step: one system-wide success rate, or per group (as IIR)").choices(['system', 'group']))
  .addOption(cafFlags()[0]!)
  .addOption(cafFlags()[1]!)
  .option('--jobs <n>', 'strategies simulated at once, each on a worker thread with its own copy of the world (default: one per core, at most one per strategy, for full-size runs of 10000 steps or more; 1: one after another on the main thread)', intArg('jobs', 1, 64))
  .action(async (flags: RunFlags) => {
    if (flags.latency !== undefined) {
      if (!existsSync(flags.latency)) throw new Error(`latency file not found: ${flags.latency}`);
      if (!statSync(flags.latency).isFile()) throw new Error(`latency path is not a file: ${flags.latency}`);
    }
    if (flags.out !== undefined && existsSync(flags.out) && !statSync(flags.out).isDirectory()) {
      throw new Error(`--out must be a directory, ${flags.out} is a file`);
    }
    if (flags.encourage !== undefined && flags.encourage > 1) throw new Error(`--encourage must be in (0, 1], got ${flags.encourage}`);
    const strategies: StrategyName[] = flags.strategy === 'all' ? [...STRATEGIES] : [flags.strategy];
    const recrawl: Partial<RecrawlOptions> = cafOptions(flags);
    if (flags.rateCap !== undefined) recrawl.rateCap = flags.rateCap;
    if (flags.minInterval !== undefined) recrawl.minInterval = flags.minInterval;
    if (flags.encourage !== undefined) recrawl.encourageRate = flags.encourage;
    const { model, icrEncourage } = readings(flags);

    const jobs = Math.min(flags.jobs ?? defaultJobs(strategies.length, flags.steps ?? 90_000, flags.quick === true), strategies.length);
    const bar = process.stderr.isTTY ? new SingleBar({ format: 'sim {strategy} [{bar}] {percentage}% | {duration}s', stream: process.stderr, hideCursor: true }) : null;
    // One bar: the strategy running, or with several at once the mean of their progress.
    const label = jobs > 1 ? `${strategies.length} strategies, ${jobs} at once` : '';
    const progress = new Map<StrategyName, number>();
    let current = '';
    const report = await runScenarioParallel(
      {
        scenario: flags.scenario,
        strategies,
        routing: flags.routing,
        seed: flags.seed,
        scale: flags.scale,
        steps: flags.steps,
        quick: flags.quick ?? false,
        latencyPath: flags.latency,
        config: {
          ...(flags.providerTtl !== undefined ? { overlay: { providerTtlMs: flags.providerTtl * 1000 } } : {}),
          ...(flags.knownPeers !== undefined ? { knownPeers: flags.knownPeers[0], knownRandom: flags.knownPeers[1] } : {}),
          ...(flags.placement !== undefined ? { placement: flags.placement } : {}),
        },
        recrawl: { ...recrawl, icrEncourage },
        model,
        onProgress: bar
          ? (s, f) => {
              progress.set(s, f);
              const name = jobs > 1 ? label : s;
              if (name !== current) {
                if (current !== '') bar.stop();
                current = name;
                bar.start(100, 0, { strategy: name });
              }
              const fraction = jobs > 1 ? [...progress.values()].reduce((a, b) => a + b, 0) / strategies.length : f;
              bar.update(Math.round(fraction * 100), { strategy: name });
            }
          : undefined,
      },
      jobs,
    );
    if (bar && current !== '') {
      bar.update(100);
      bar.stop();
    }
    if (flags.out !== undefined) {
      const files = await writeOut(flags.out, report);
      if (!flags.json) process.stderr.write(`wrote ${files.length} files to ${flags.out}\n`);
    }
    if (flags.json) process.stdout.write(JSON.stringify(jsonSummary(report)) + '\n');
    else process.stdout.write(markdown(report) + '\n');
  });

/** --placement k=v,...: numbers, true/false, or a word (forwardAnchor); placementOptions validates the rest. */
function placementArg(v: string): Partial<PlacementOptions> {
  const o: Record<string, unknown> = {};
  for (const part of v.split(',')) {
    const m = /^\s*(\w+)\s*=\s*([\w.]+)\s*$/.exec(part);
    if (m === null) throw new Error(`--placement takes k=v pairs separated by commas (e.g. widen=true,lastHopBound=4), got '${part}'`);
    const [, k, raw] = m as unknown as [string, string, string];
    if (!(k in DEFAULT_PLACEMENT_OPTIONS)) throw new Error(`--placement: unknown option '${k}' (one of ${Object.keys(DEFAULT_PLACEMENT_OPTIONS).join(', ')})`);
    o[k] = raw === 'true' ? true : raw === 'false' ? false : raw === 'Infinity' ? Infinity : /^[\d.]+$/.test(raw) ? Number(raw) : raw;
  }
  return placementOptions(o as Partial<PlacementOptions>);
}

function peerCounts(v: string): [number, number] {
  const parts = v.split(',');
  if (parts.length !== 2) throw new Error(`--known-peers takes two counts, near,random (e.g. 8,8), got '${v}'`);
  const count = intArg('known-peers', 0, 1024);
  return [count(parts[0]!), count(parts[1]!)];
}

function crawlerList(v: string): number[] {
  const parts = v.split(',').map((x) => x.trim());
  if (parts.length === 0 || parts.length > 20) throw new Error(`--crawlers takes 1 to 20 counts, got '${v}'`);
  return parts.map((x) => intArg('crawlers', 10, 100_000)(x));
}

interface SweepFlags extends CafFlags {
  crawlers: number[];
  steps?: number;
  quickSteps?: boolean;
  seed: number;
  strategy: StrategyName | 'all';
  routing: 'coord' | 'hash';
  latency?: string;
  out?: string;
  json?: boolean;
  faithful?: boolean;
  fullSystem?: FullSystemRule;
  rttRule?: RttRule;
  icrEncourage?: IcrEncourage;
  jobs?: number;
}

program
  .command('sweep')
  .description("the scale-adaptation curve: rec's 16000 channels crawled by more and more crawlers, every strategy at each size, against the capacity bound")
  .option('--crawlers <list>', 'comma-separated crawler counts', crawlerList, [...DEFAULT_SWEEP_CRAWLERS])
  .option('--steps <n>', 'one-minute steps per run (default 90000)', intArg('steps', 1, 10_000_000))
  .option('--quick-steps', `a shorter horizon: ${QUICK_SWEEP_STEPS} steps per run (the whole sweep in minutes)`)
  .option('--seed <n>', 'seed of every random stream', intArg('seed', 0, 2 ** 31 - 1), 1)
  .addOption(new Option('--strategy <name>', 'recrawl strategy').choices([...STRATEGIES, 'all']).default('all'))
  .addOption(new Option('--routing <mode>', 'task routing').choices(['coord', 'hash']).default('coord'))
  .option('--latency <file>', 'latency matrix (default: the shipped PlanetLab 490-node data)')
  .option('--out <dir>', 'write sweep.json, sweep.csv, sweep.md and tasks/quality/freshness/success SVG curves here')
  .option('--json', 'print the sweep as one JSON object instead of a Markdown table')
  .option('--faithful', "the paper's readings (the default, as for run)")
  .option('--no-faithful', 'the earlier readings (as for run)')
  .addOption(new Option('--full-system <rule>', 'reject | hold (as for run)').choices(['reject', 'hold']))
  .addOption(new Option('--rtt-rule <rule>', 'physical | paper (as for run)').choices(['physical', 'paper']))
  .addOption(new Option('--icr-encourage <scope>', 'system | group (as for run)').choices(['system', 'group']))
  .addOption(cafFlags()[0]!)
  .addOption(cafFlags()[1]!)
  .option('--jobs <n>', 'strategies simulated at once at each point, on worker threads (as for run; default one per core)', intArg('jobs', 1, 64))
  .action(async (flags: SweepFlags) => {
    if (flags.latency !== undefined && !existsSync(flags.latency)) throw new Error(`latency file not found: ${flags.latency}`);
    if (flags.out !== undefined && existsSync(flags.out) && !statSync(flags.out).isDirectory()) {
      throw new Error(`--out must be a directory, ${flags.out} is a file`);
    }
    if (flags.steps !== undefined && flags.quickSteps) throw new Error('give --steps or --quick-steps, not both');
    const steps = flags.steps ?? (flags.quickSteps ? QUICK_SWEEP_STEPS : 90_000);
    const strategies: StrategyName[] = flags.strategy === 'all' ? [...STRATEGIES] : [flags.strategy];
    const { model, icrEncourage } = readings(flags);
    // Progress: one line per finished run on stderr (a sweep is many runs).
    let last = '';
    const report = await runSweep({
      crawlers: flags.crawlers,
      strategies,
      jobs: flags.jobs ?? defaultJobs(strategies.length, steps),
      steps,
      seed: flags.seed,
      routing: flags.routing,
      latencyPath: flags.latency,
      recrawl: { ...cafOptions(flags), icrEncourage },
      model,
      onProgress: (n, s) => {
        const key = `${n} ${s}`;
        if (key !== last) {
          last = key;
          process.stderr.write(`sweep: ${n} crawlers, ${s}\n`);
        }
      },
    });
    if (flags.out !== undefined) {
      const files = await writeSweep(flags.out, report);
      process.stderr.write(`wrote ${files.length} files to ${flags.out}\n`);
    }
    if (flags.json) process.stdout.write(JSON.stringify(report) + '\n');
    else process.stdout.write(sweepMarkdown(report) + '\n');
  });

registerAuditPaper(program);

await runProgram(program);
