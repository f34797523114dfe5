// Reporting: Markdown tables for the terminal, the --json summary, and the --out
// directory (full JSON, CSV time series, SVG figures rendered headless by vega).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vega from 'vega';
import * as vl from 'vega-lite';
import type { StrategyName } from '../src/recrawl/index.js';
import { STRATEGIES } from '../src/recrawl/index.js';
import { ofBound } from './bounds.js';
import { threadUse, threadUseShares } from './thread-use.js';
import type { StrategyResult } from './engine.js';
import type { ScenarioReport } from './run.js';

const ORDER: readonly StrategyName[] = STRATEGIES;

function present(r: ScenarioReport): [StrategyName, StrategyResult][] {
  return ORDER.filter((s) => r.strategies[s] !== undefined).map((s) => [s, r.strategies[s]!]);
}

function fmt(x: number, digits = 2): string {
  if (!Number.isFinite(x)) return String(x);
  return x.toFixed(digits);
}

function sci(x: number): string {
  return `${(x / 1e6).toFixed(3)}E6`;
}

function table(head: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

/** Paper rank label for our group g (group 0 = paper rank K-1). */
export function paperRank(g: number, k: number): number {
  return k - 1 - g;
}

export function markdown(r: ScenarioReport): string {
  const ss = present(r);
  const names = ss.map(([s]) => s.toUpperCase());
  const k = r.world.groupSizes.length;
  const out: string[] = [];
  out.push(
    `## sim run --scenario ${r.scenario} (routing ${r.routing}, seed ${r.seed}, ${r.steps} steps${r.quick ? ', quick' : ''}${r.scale !== 1 ? `, scale ${r.scale}` : ''})`,
    '',
    `${r.world.hosts} hosts from ${r.world.hostOrigins} origins, ${r.world.crawlers} crawlers from ${r.world.crawlerOrigins} origins, ` +
      `latency ${r.latencySource} (${r.world.baseNodes} nodes). Channels per group (60→960 min): ${r.world.groupSizes.join(', ')}.`,
    `Readings: full system ${r.model.fullSystem}, RTT rule ${r.model.rttRule}, ICR encourage ${r.icrEncourage}. ` +
      `CAF: cost exponent ${r.recrawl.cafCostExponent}, max queue ${r.recrawl.cafMaxQueue}, wait intervals ${r.recrawl.cafWaitIntervals} (every option: --json's recrawl).`,
    '',
    `### Tasks and mean recrawl interval per rank (paper Table ${r.scenario === 'rec' ? 1 : 3})`,
    '',
  );
  const rows: string[][] = [];
  for (let g = 0; g < k; g++) {
    rows.push([
      String(paperRank(g, k)),
      String(r.world.groupSizes[g]),
      ...ss.map(([, s]) => sci(s.tasksByRank[g]!)),
      ...ss.map(([, s]) => fmt(s.intervalByRank[g]!, 0)),
    ]);
  }
  rows.push([
    'Total',
    String(r.world.hosts),
    ...ss.map(([, s]) => sci(s.tasksTotal)),
    ...ss.map(([, s]) => `mean ${fmt(s.intervalByRank.reduce((a, b) => a + b, 0) / k, 0)}`),
  ]);
  out.push(table(['Rank', 'channels', ...names.map((n) => `${n} tasks`), ...names.map((n) => `${n} interval`)], rows), '');
  out.push(`### Update quality, formula (5) (paper Table ${r.scenario === 'rec' ? 2 : 4})`, '');
  out.push(
    table(
      ['', ...names.map((n) => `${n} (w)`), ...names],
      [['Update quality', ...ss.map(([, s]) => fmt(s.updateQualityWeighted, 4)), ...ss.map(([, s]) => fmt(s.updateQuality, 4))]],
    ),
    '',
  );
  const b = r.bounds;
  if (b !== null) {
    out.push(
      '### Against the capacity bound',
      '',
      `The crawlers were online ${fmt(b.threadMinutes / 1e6, 2)} M thread-minutes; at ${fmt(b.taskMinutes, 1)} minutes per completed task ` +
        `(the least of these strategies) that is at most ${fmt(b.completions / 1e6, 3)} M completions. ` +
        `Bound: weighted quality ${fmt(b.updateQualityWeighted, 4)}, unweighted ${fmt(b.updateQuality, 4)}, freshness ${fmt(b.freshness, 3)}.`,
      `After departures (docs/sim.md): the least share of busy thread-minutes a strategy lost with a departing crawler was ${fmt(b.afterDepartures.lostShare, 3)}, ` +
        `so at most ${fmt(b.afterDepartures.completions / 1e6, 3)} M completions: weighted ${fmt(b.afterDepartures.updateQualityWeighted, 4)}, ` +
        `unweighted ${fmt(b.afterDepartures.updateQuality, 4)}, freshness ${fmt(b.afterDepartures.freshness, 3)}.`,
      '',
      table(
        ['share of the bound', ...names],
        [
          ['weighted quality', ...ss.map(([, s]) => fmt(ofBound(s, b).updateQualityWeighted, 3))],
          ['unweighted quality', ...ss.map(([, s]) => fmt(ofBound(s, b).updateQuality, 3))],
          ['freshness', ...ss.map(([, s]) => fmt(ofBound(s, b).freshness, 3))],
          ['weighted quality, of the bound after departures', ...ss.map(([, s]) => fmt(ofBound(s, b).afterDepartures.updateQualityWeighted, 3))],
          ['freshness, of the bound after departures', ...ss.map(([, s]) => fmt(ofBound(s, b).afterDepartures.freshness, 3))],
        ],
      ),
      '',
      'Where the online thread-minutes went (shares; the first five add up to 1). The weighted share of the bound is ' +
        'the completed share × the cheapest mean task cost ÷ this strategy\'s (exactly, when weight × interval is the same for every group, as in the paper):',
      '',
      table(
        ['share of online thread-minutes', ...names],
        [
          ['busy, task completed', ...ss.map(([, s]) => fmt(useOf(s).completed, 3))],
          ['busy, crawler left (work lost)', ...ss.map(([, s]) => fmt(useOf(s).lost, 3))],
          ['busy, still running at the end', ...ss.map(([, s]) => fmt(useOf(s).inProgress, 3))],
          ['idle while tasks waited elsewhere', ...ss.map(([, s]) => fmt(useOf(s).idleWaiting, 3))],
          ['idle, no task waiting anywhere', ...ss.map(([, s]) => fmt(useOf(s).idleNothing, 3))],
          ['cheapest task cost ÷ this one\'s', ...ss.map(([, s]) => fmt(costRatio(s, b.taskMinutes), 3))],
        ],
      ),
      '',
    );
  }
  out.push('### System', '');
  const metric = (label: string, f: (s: StrategyResult) => string): string[] => [label, ...ss.map(([, s]) => f(s))];
  out.push(
    table(
      ['', ...names],
      [
        metric('task success rate', (s) => fmt(s.successRate, 3)),
        metric('completed / failed / cancelled / lost / pending', (s) => {
          const o = s.outcomes;
          return `${o.completed} / ${o.failed} / ${o.cancelled} / ${o.lost} / ${o.pendingAtEnd}`;
        }),
        metric('mean queued tasks per online crawler', (s) => fmt(s.meanQueuedPerCrawler, 2)),
        metric('mean online crawlers', (s) => fmt(s.meanOnline, 0)),
        metric('mean throughput (Mbit/s)', (s) => fmt(s.meanThroughput, 1)),
        metric('task migrations', (s) => String(s.migrations)),
        metric('forwards (full queue)', (s) => String(s.forwards)),
        metric('mean hops of a forwarded task', (s) => fmt(s.meanForwardHops, 2)),
        metric('mean task RTT (ms)', (s) => fmt(s.meanTaskRttMs, 1)),
        metric('mean download time (min)', (s) => fmt(s.meanDownloadMinutes, 1)),
        metric('load imbalance (max−mean)/mean pages', (s) => fmt(s.loadImbalance, 2)),
        metric('… within one bandwidth level (largest)', (s) => fmt(s.loadImbalanceSameBandwidth, 2)),
        metric('… of pages ∝ capacity (ideal placement)', (s) => fmt(s.routingStats.loadImbalanceIdeal ?? 0, 2)),
        metric('… of pages ÷ capacity (online ≥ ¼ of the run)', (s) => fmt(s.routingStats.loadImbalancePerCapacity ?? 0, 2)),
        metric('thread utilisation (busy / online threads)', (s) => fmt(s.threadUtilisation, 2)),
        metric('freshness (all channels)', (s) => fmt(s.freshness, 3)),
        metric('mean age (min, all channels)', (s) => fmt(s.meanAgeMinutes, 1)),
        metric('tasks held beyond a full queue', (s) => String(s.held)),
        metric('reassignment rounds', (s) => String(s.reassignments)),
        metric('events', (s) => String(s.events)),
        metric('wall (s)', (s) => fmt(s.wallSeconds, 1)),
      ],
    ),
    '',
  );
  out.push(`### Routing (${ss[0]?.[1].routingStats.policy ?? r.routing})`, '');
  const rs = (label: string, f: (x: StrategyResult['routingStats'], s: StrategyResult) => string): string[] => [label, ...ss.map(([, s]) => f(s.routingStats, s))];
  out.push(
    table(
      ['', ...names],
      [
        rs('stretch median / p90 (RTT ÷ best online crawler\'s)', (x) => `${fmt(x.stretchMedian)} / ${fmt(x.stretchP90)}`),
        rs('oracle stretch median / p90 (least predicted RTT)', (x) => `${fmt(x.oracleStretchMedian)} / ${fmt(x.oracleStretchP90)}`),
        rs('hash routing stretch median / p90', (x) => `${fmt(x.hashStretchMedian)} / ${fmt(x.hashStretchP90)}`),
        rs('stretch samples', (x) => String(x.stretchSamples)),
        rs('routed tasks / no crawler found / refused', (x) => `${x.routed} / ${x.noCrawler} / ${x.refused}`),
        rs('crawlers tried per task / task messages per task', (x) => `${fmt(x.attemptsPerTask)} / ${fmt(x.sendsPerTask)}`),
        rs('forward hops per placed task / per forwarded task', (x) => `${fmt(x.forwardHopsMean, 3)} / ${fmt(x.forwardHopsPerForwarded)}`),
        rs('candidate records offered per task (cell-search.ts)', (x) => fmt(x.candidatesPerTask, 1)),
        rs('DHT ops per task (lookups + provides) / messages', (x) => `${fmt(x.dhtOpsPerTask)} / ${fmt(x.dhtMessagesPerTask, 1)}`),
        rs('DHT ops per crawler-hour / messages', (x) => `${fmt(x.dhtOpsPerCrawlerHour, 1)} / ${fmt(x.dhtMessagesPerCrawlerHour, 0)}`),
        rs('lookups per task (cache hits) / provides per crawler-hour', (x) => `${fmt(x.lookupsPerTask)} (${x.cacheHits}) / ${fmt(x.providesPerCrawlerHour, 1)}`),
        rs('records found of departed crawlers', (x) => String(x.staleRecords)),
      ],
    ),
    '',
  );
  out.push('### Freshness and mean age (min) per rank, against the simulated Poisson changes', '');
  const frows: string[][] = [];
  for (let g = 0; g < k; g++) {
    frows.push([
      String(paperRank(g, k)),
      ...ss.map(([, s]) => fmt(s.freshnessByRank[g]!, 3)),
      ...ss.map(([, s]) => fmt(s.ageByRank[g]!, 0)),
    ]);
  }
  out.push(table(['Rank', ...names.map((n) => `${n} freshness`), ...names.map((n) => `${n} age`)], frows), '');
  out.push(`wall ${fmt(r.wallSeconds, 1)} s, ${fmt(r.eventsPerSec / 1e6, 2)} M events/s`, '');
  return out.join('\n');
}

/** A strategy's online thread-minutes by what they did, as shares. */
function useOf(s: StrategyResult) {
  return threadUseShares(threadUse(s.capacity), s.capacity.threadMinutes);
}

/** The bound's task cost (the cheapest strategy's mean) over this strategy's mean. */
function costRatio(s: StrategyResult, taskMinutes: number): number {
  return s.outcomes.completed > 0 ? taskMinutes / (s.capacity.completedMinutes / s.outcomes.completed) : 0;
}

/** The `routing` object of --json: routing quality against the oracle and
 * hash routing, load imbalance, and what the overlay costs per task. */
export function routingSummary(s: StrategyResult): Record<string, unknown> {
  const x = s.routingStats;
  return {
    policy: x.policy,
    stretchMedian: x.stretchMedian,
    stretchP90: x.stretchP90,
    oracleStretchMedian: x.oracleStretchMedian,
    oracleStretchP90: x.oracleStretchP90,
    hashStretchMedian: x.hashStretchMedian,
    loadImbalance: s.loadImbalance,
    loadImbalanceSameBandwidth: s.loadImbalanceSameBandwidth,
    ...(x.loadImbalanceIdeal !== undefined ? { loadImbalanceIdeal: x.loadImbalanceIdeal, loadImbalancePerCapacity: x.loadImbalancePerCapacity } : {}),
    threadUtilisation: s.threadUtilisation,
    dhtOpsPerTask: x.dhtOpsPerTask,
    dhtMessagesPerTask: x.dhtMessagesPerTask,
    forwardHopsMean: x.forwardHopsMean,
    noCrawler: x.noCrawler,
    // Task messages (the Router's sends and every forward), beside the DHT's.
    attemptsPerTask: x.attemptsPerTask,
    taskMessagesPerTask: x.sendsPerTask,
    ...(x.endedByWalkPerTask !== undefined ? { endedByWalkPerTask: x.endedByWalkPerTask } : {}),
    ...(x.widenedPerTask !== undefined ? { widenedPerTask: x.widenedPerTask, widenedToRoomPerTask: x.widenedToRoomPerTask } : {}),
    ...(x.diagnosis !== undefined ? { diagnosis: x.diagnosis } : {}),
  };
}

export function jsonSummary(r: ScenarioReport): Record<string, unknown> {
  const strategies: Record<string, unknown> = {};
  for (const [name, s] of present(r)) {
    strategies[name] = {
      tasksTotal: s.tasksTotal,
      tasksByRank: s.tasksByRank,
      intervalByRank: s.intervalByRank,
      updateQualityWeighted: s.updateQualityWeighted,
      updateQuality: s.updateQuality,
      successRate: s.successRate,
      meanQueuedPerCrawler: s.meanQueuedPerCrawler,
      meanThroughput: s.meanThroughput,
      meanTaskRttMs: s.meanTaskRttMs,
      outcomes: s.outcomes,
      migrations: s.migrations,
      forwards: s.forwards,
      meanForwardHops: s.meanForwardHops,
      loadImbalance: s.loadImbalance,
      routing: routingSummary(s),
      freshness: s.freshness,
      meanAgeMinutes: s.meanAgeMinutes,
      freshnessByRank: s.freshnessByRank,
      ageByRank: s.ageByRank,
      held: s.held,
      capacity: s.capacity,
      threadUse: useOf(s),
      ofBound: r.bounds !== null ? ofBound(s, r.bounds) : null,
      events: s.events,
      wallSeconds: s.wallSeconds,
    };
  }
  return {
    scenario: r.scenario,
    routing: r.routing,
    seed: r.seed,
    steps: r.steps,
    rankOrder: 'index 0 = 60-minute group (paper rank 4) ... index 4 = 960-minute group (paper rank 0)',
    model: { ...r.model, icrEncourage: r.icrEncourage },
    recrawl: r.recrawl,
    strategies,
    bounds: r.bounds,
    wallSeconds: r.wallSeconds,
    eventsPerSec: r.eventsPerSec,
  };
}

export function timeSeriesCsv(r: ScenarioReport): string {
  const k = r.world.groupSizes.length;
  const head = ['strategy', 't', 'online', 'queued', 'running', 'throughput_mbps', 'completed'];
  for (let g = 0; g < k; g++) head.push(`interval_rank${paperRank(g, k)}`);
  const lines = [head.join(',')];
  for (const [name, s] of present(r)) {
    for (const x of s.samples) {
      lines.push([name, x.t, x.online, x.queued, x.running, x.throughputMbps.toFixed(3), x.completed, ...x.intervals.map((v) => v.toFixed(2))].join(','));
    }
  }
  return lines.join('\n') + '\n';
}

export async function renderSvg(spec: vl.TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(vl.compile(spec).spec), { renderer: 'none' });
  const svg = await view.toSVG();
  view.finalize();
  return svg;
}

function lineSpec(title: string, values: Record<string, unknown>[], y: string, yTitle: string): vl.TopLevelSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    width: 520,
    height: 260,
    data: { values },
    mark: { type: 'line', strokeWidth: 1.2 },
    encoding: {
      x: { field: 't', type: 'quantitative', title: 'step (minutes)' },
      y: { field: y, type: 'quantitative', title: yTitle },
      color: { field: 'strategy', type: 'nominal' },
    },
  } as vl.TopLevelSpec;
}

/** Creates dir; put(name, text) writes a file there and lists it in files. */
export function outputDir(dir: string): { files: string[]; put: (name: string, text: string) => void } {
  mkdirSync(dir, { recursive: true });
  const files: string[] = [];
  return {
    files,
    put(name, text) {
      writeFileSync(join(dir, name), text);
      files.push(join(dir, name));
    },
  };
}

export async function writeOut(dir: string, r: ScenarioReport): Promise<string[]> {
  const { files, put } = outputDir(dir);
  put('report.json', JSON.stringify(r, null, 1) + '\n');
  put('summary.json', JSON.stringify(jsonSummary(r), null, 2) + '\n');
  put('tables.md', markdown(r));
  put('timeseries.csv', timeSeriesCsv(r));
  const k = r.world.groupSizes.length;
  const values: Record<string, unknown>[] = [];
  const ivs: Record<string, unknown>[] = [];
  for (const [name, s] of present(r)) {
    for (const x of s.samples) {
      values.push({ strategy: name.toUpperCase(), t: x.t, queued: x.queued, throughput: x.throughputMbps, online: x.online });
      x.intervals.forEach((v, g) => ivs.push({ strategy: `${name.toUpperCase()} rank ${paperRank(g, k)}`, t: x.t, interval: v }));
    }
  }
  const fig = r.scenario === 'rec' ? 4 : 5;
  put('queued.svg', await renderSvg(lineSpec(`Queued tasks (Fig. ${fig} left), ${r.scenario}`, values, 'queued', 'queued tasks')));
  put(
    'throughput.svg',
    await renderSvg(lineSpec(`System throughput (Fig. ${fig} right), ${r.scenario}`, values, 'throughput', 'Mbit/s (100-step windows)')),
  );
  put('online.svg', await renderSvg(lineSpec(`Online crawlers, ${r.scenario}`, values, 'online', 'crawlers')));
  put('intervals.svg', await renderSvg(lineSpec(`Recrawl interval per rank, ${r.scenario}`, ivs, 'interval', 'minutes')));
  return files;
}
