import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LatencyMatrix } from '../../src/coords/index.js';
import { createRng, uniform } from '../../src/rng.js';
import type { StrategyResult } from '../../sim/engine.js';
import { simulate } from '../../sim/engine.js';
import { EventQueue } from '../../sim/heap.js';
import { HashRing, knownPeers, nearestNeighbours } from '../../sim/spatial.js';
import type { ScenarioConfig } from '../../sim/world.js';
import { buildWorld, crawlerCoords, hostCrawlerRtt, scenarioConfig } from '../../sim/world.js';
import { computeBounds } from '../../sim/bounds.js';
import { EARLIER_MODEL, taskCost } from '../../sim/model.js';
import { STRATEGIES } from '../../src/recrawl/index.js';

/** A small synthetic latency matrix: points in a plane, RTT = distance + 5 ms. */
function syntheticLatency(n: number, seed: number): LatencyMatrix {
  const rng = createRng(seed);
  const xs = Array.from({ length: n }, () => [uniform(rng, 0, 200), uniform(rng, 0, 200)] as const);
  const rtt = new Float64Array(n * n);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) rtt[i * n + j] = i === j ? 0 : Math.hypot(xs[i]![0] - xs[j]![0], xs[i]![1] - xs[j]![1]) + 5;
  return { n, rtt, source: 'synthetic' };
}

function smallConfig(over: Partial<ScenarioConfig> = {}): ScenarioConfig {
  return { ...scenarioConfig('rec', true), hosts: 400, crawlers: 24, steps: 4000, embedRounds: 200, ...over };
}

function comparable(r: StrategyResult): Omit<StrategyResult, 'wallSeconds'> {
  const { wallSeconds: _w, ...rest } = r;
  return rest;
}

describe('event queue', () => {
  it('pops in time order, ties in insertion order', () => {
    const q = new EventQueue(2);
    const rng = createRng(3);
    const times: number[] = [];
    for (let i = 0; i < 500; i++) {
      const t = Math.floor(uniform(rng, 0, 50));
      times.push(t);
      q.push(t, i, i * 2);
    }
    const out: [number, number][] = [];
    while (q.size > 0) {
      const t = q.peekTime();
      expect(q.peekExtra()).toBeGreaterThanOrEqual(0);
      out.push([t, q.pop()]);
    }
    const expected = times.map((t, i) => [t, i] as [number, number]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    expect(out).toEqual(expected);
  });
});

describe('routing indexes', () => {
  const world = buildWorld(syntheticLatency(40, 1), smallConfig(), 7);
  it("a crawler's nearest neighbours by the grid equal a brute-force scan by predicted RTT", () => {
    const C = world.config.crawlers;
    const k = 5;
    const nn = nearestNeighbours(crawlerCoords(world), k);
    const d = (a: number, b: number) => {
      let s = 0;
      for (let j = 0; j < world.dims; j++) s += (world.crawlerVec[a * world.dims + j]! - world.crawlerVec[b * world.dims + j]!) ** 2;
      return Math.sqrt(s) + world.crawlerHeight[a]! + world.crawlerHeight[b]!;
    };
    for (let c = 0; c < C; c++) {
      const brute = Array.from({ length: C }, (_, i) => i).filter((i) => i !== c).sort((a, b) => d(c, a) - d(c, b) || a - b).slice(0, k);
      expect(Array.from(nn.subarray(c * k, c * k + k))).toEqual(brute);
    }
  });
  it('a crawler knows its nearest crawlers and some others at random, never itself', () => {
    const C = world.config.crawlers;
    const known = knownPeers(crawlerCoords(world), 4, 6, createRng(1));
    const nn = nearestNeighbours(crawlerCoords(world), 4);
    for (let c = 0; c < C; c++) {
      const row = Array.from(known.subarray(c * 10, c * 10 + 10));
      expect(row.slice(0, 4)).toEqual(Array.from(nn.subarray(c * 4, c * 4 + 4)));
      expect(row).not.toContain(c);
      expect(new Set(row.filter((x) => x >= 0)).size).toBe(row.filter((x) => x >= 0).length);
    }
  });
  it('hash ring skips offline crawlers', () => {
    const ring = new HashRing(10, 5, 1);
    const out = new Int32Array(10);
    expect(ring.nearest(0, 3, out)).toBe(0);
    ring.add(4);
    expect(ring.nearest(0, 3, out)).toBe(1);
    expect(out[0]).toBe(4);
  });
  it('host–crawler RTT follows the measured origin RTT scaled by the replica offsets', () => {
    const rtt = hostCrawlerRtt(world, 0, 0);
    const m = world.latency.rtt[world.hostOrigin[0]! * world.latency.n + world.crawlerOrigin[0]!]!;
    expect(rtt).toBeGreaterThan(0);
    expect(rtt / m).toBeGreaterThan(0.3);
    expect(rtt / m).toBeLessThan(3);
  });
});

/** The readings the tests before the paper's became the default ran under. */
const EARLIER = { model: EARLIER_MODEL, recrawl: { icrEncourage: 'system' as const } };

describe('simulator invariants', () => {
  const world = buildWorld(syntheticLatency(40, 2), smallConfig(), 11);
  for (const strategy of STRATEGIES) {
    it(`${strategy}: every task ends exactly once, limits hold`, () => {
      // The earlier readings: a refused task fails, so no crawler ever holds more than its queue
      // (the paper's `hold` is checked in "model readings").
      const r = simulate(world, { strategy, routing: 'coord', steps: world.config.steps, ...EARLIER });
      const o = r.outcomes;
      expect(o.completed + o.failed + o.cancelled + o.lost + o.pendingAtEnd).toBe(r.tasksTotal);
      expect(r.tasksByRank.reduce((a, b) => a + b, 0)).toBe(r.tasksTotal);
      expect(r.completedByRank.reduce((a, b) => a + b, 0)).toBe(o.completed);
      expect(r.maxRunningSeen).toBeLessThanOrEqual(world.config.threads);
      expect(r.maxQueueSeen).toBeLessThanOrEqual(world.config.queue);
      for (const s of r.samples) {
        expect(s.running).toBeLessThanOrEqual(s.online * world.config.threads);
        expect(s.queued).toBeLessThanOrEqual(s.online * world.config.queue);
      }
      expect(r.freshness).toBeGreaterThan(0);
      expect(r.freshness).toBeLessThanOrEqual(1);
    });
  }
  it('same seed, same output; another seed, another output', () => {
    const a = simulate(world, { strategy: 'icr', routing: 'coord', steps: 3000 });
    const b = simulate(world, { strategy: 'icr', routing: 'coord', steps: 3000 });
    expect(comparable(a)).toEqual(comparable(b));
    const other = buildWorld(syntheticLatency(40, 2), smallConfig(), 12);
    const c = simulate(other, { strategy: 'icr', routing: 'coord', steps: 3000 });
    expect(c.tasksTotal).not.toBe(a.tasksTotal);
  });
  it('hash routing works and gives longer task RTTs than coordinate routing', () => {
    const coord = simulate(world, { strategy: 'fixed', routing: 'coord', steps: 3000 });
    const hash = simulate(world, { strategy: 'fixed', routing: 'hash', steps: 3000 });
    const o = hash.outcomes;
    expect(o.completed + o.failed + o.cancelled + o.lost + o.pendingAtEnd).toBe(hash.tasksTotal);
    expect(hash.meanTaskRttMs).toBeGreaterThan(coord.meanTaskRttMs);
  });
});

describe('forwarding', () => {
  it('full crawlers forwarding to their neighbours refuse fewer tasks than no forwarding', () => {
    const cfg = { crawlers: 60, steps: 3000 };
    const none = buildWorld(syntheticLatency(40, 6), smallConfig({ ...cfg, placement: { maxHops: 0 } }), 13);
    const some = buildWorld(syntheticLatency(40, 6), smallConfig(cfg), 13);
    // Refusals are counted under the earlier readings (the paper's holds a refused task).
    const a = simulate(none, { strategy: 'fixed', routing: 'coord', steps: 3000, ...EARLIER });
    const b = simulate(some, { strategy: 'fixed', routing: 'coord', steps: 3000, ...EARLIER });
    expect(a.tasksTotal).toBe(b.tasksTotal);
    expect(a.forwards).toBe(0);
    expect(b.forwards).toBeGreaterThan(0);
    expect(b.meanForwardHops).toBeGreaterThanOrEqual(1);
    expect(b.meanForwardHops).toBeLessThanOrEqual(3);
    expect(b.outcomes.failed).toBeLessThan(a.outcomes.failed);
    expect(b.routingStats.refused).toBe(b.outcomes.failed);
    const o = b.outcomes;
    expect(o.completed + o.failed + o.cancelled + o.lost + o.pendingAtEnd).toBe(b.tasksTotal);
  });
});

describe('capacity bound', () => {
  // Two worlds: one with spare crawlers, one overloaded (10 crawlers).
  for (const crawlers of [24, 10]) {
    it(`is never below any strategy's achieved value (${crawlers} crawlers)`, () => {
      const world = buildWorld(syntheticLatency(40, 8), smallConfig({ crawlers, steps: 4000 }), 21);
      const results = STRATEGIES.map((strategy) => simulate(world, { strategy, routing: 'coord', steps: 4000 }));
      const b = computeBounds(world, 4000, results)!;
      expect(b).not.toBeNull();
      for (const r of results) {
        // The same churn for every strategy: the same thread-minutes online.
        expect(r.capacity.threadMinutes).toBeCloseTo(b.threadMinutes, 6);
        expect(r.capacity.completedMinutes).toBeLessThanOrEqual(r.capacity.busyMinutes + 1e-6);
        expect(r.capacity.busyMinutes).toBeLessThanOrEqual(r.capacity.threadMinutes + 1e-6);
        expect(r.outcomes.completed).toBeLessThanOrEqual(b.completions + 1e-6);
        expect(r.updateQualityWeighted).toBeLessThanOrEqual(b.updateQualityWeighted + 1e-9);
        expect(r.updateQuality).toBeLessThanOrEqual(b.updateQuality + 1e-9);
        expect(r.freshness).toBeLessThanOrEqual(b.freshness + 1e-9);
      }
      // The strategy with the cheapest completed task sets the cost: its weighted
      // score over the bound is its share of the thread-minutes spent on completed tasks.
      const cheapest = results.reduce((a, r) => (r.capacity.completedMinutes / r.outcomes.completed < a.capacity.completedMinutes / a.outcomes.completed ? r : a));
      expect(cheapest.updateQualityWeighted / b.updateQualityWeighted).toBeCloseTo(cheapest.capacity.completedMinutes / b.threadMinutes, 9);
    });
  }
});

describe('model readings (each flag changes only what it names)', () => {
  const world = buildWorld(syntheticLatency(40, 3), smallConfig({ crawlers: 10, steps: 3000 }), 5);
  const run = (model: Parameters<typeof simulate>[1]['model'], strategy: (typeof STRATEGIES)[number] = 'fixed', recrawl = {}) =>
    simulate(world, { strategy, routing: 'coord', steps: 3000, model, recrawl });

  it("--full-system hold: no task is refused, each is held and still ends exactly once", () => {
    const reject = run({ fullSystem: 'reject' });
    const hold = run({ fullSystem: 'hold' });
    expect(reject.outcomes.failed).toBeGreaterThan(0);
    expect(reject.held).toBe(0);
    expect(hold.held).toBeGreaterThan(0);
    expect(hold.outcomes.failed).toBe(hold.routingStats.noCrawler);
    for (const r of [reject, hold]) {
      const o = r.outcomes;
      expect(o.completed + o.failed + o.cancelled + o.lost + o.pendingAtEnd).toBe(r.tasksTotal);
    }
    // FIXED submits on its own clock: the same tasks either way; only their fate differs.
    expect(hold.tasksByRank).toEqual(reject.tasksByRank);
    // Held tasks wait beyond the 5 slots: the paper's "queued" can exceed 5 per crawler.
    expect(Math.max(...hold.samples.map((s) => s.queued / Math.max(1, s.online)))).toBeGreaterThan(world.config.queue);
  });

  it('--rtt-rule paper: each page is charged 2 × the matrix RTT, nothing else changes', () => {
    const one = { minutes: 0, rttMs: 0 };
    const two = { minutes: 0, rttMs: 0 };
    for (const [h, c] of [[0, 0], [5, 3], [17, 9]] as const) {
      taskCost(world, h, c, 1, one);
      taskCost(world, h, c, 2, two);
      expect(two.rttMs).toBe(one.rttMs);
      expect((two.minutes - one.minutes) * 60_000).toBeCloseTo(world.pages[h]! * hostCrawlerRtt(world, h, c), 6);
    }
    const physical = run({ rttRule: 'physical' });
    const paper = run({ rttRule: 'paper' });
    expect(paper.tasksByRank).toEqual(physical.tasksByRank);
    expect(paper.meanDownloadMinutes).toBeGreaterThan(physical.meanDownloadMinutes);
    expect(paper.model.rttRule).toBe('paper');
  });

  it("icrEncourage 'group' changes ICR only", () => {
    for (const strategy of ['fixed', 'iir', 'caf'] as const) {
      const a = run({}, strategy, { icrEncourage: 'system' });
      const b = run({}, strategy, { icrEncourage: 'group' });
      expect(comparable(b)).toEqual(comparable(a));
    }
    const spare = buildWorld(syntheticLatency(40, 3), smallConfig({ crawlers: 40, steps: 6000 }), 5);
    const icr = (icrEncourage: 'system' | 'group') => simulate(spare, { strategy: 'icr', routing: 'coord', steps: 6000, recrawl: { icrEncourage } });
    const sys = icr('system');
    const grp = icr('group');
    expect(sys.reassignments).toBeGreaterThan(2);
    expect(grp.intervalByRank).not.toEqual(sys.intervalByRank);
  });
});

describe('scale', () => {
  it('multiplies hosts and crawlers: --scale 10 is 160000 channels and 28000 crawlers in ruc', () => {
    const c = scenarioConfig('ruc', false, 10);
    expect([c.hosts, c.crawlers, c.steps]).toEqual([160_000, 28_000, 90_000]);
    expect(() => scenarioConfig('ruc', false, 0)).toThrow(/scale/);
  });
});

describe('rate cap', () => {
  it('never recrawls a channel faster than rateCap × its change frequency', () => {
    const world = buildWorld(syntheticLatency(40, 4), smallConfig({ crawlers: 80, steps: 6000 }), 9);
    const r = simulate(world, { strategy: 'icr', routing: 'coord', steps: 6000, recrawl: { rateCap: 2 } });
    world.config.changeIntervals.forEach((ci, g) => {
      expect(r.intervalByRank[g]!).toBeGreaterThanOrEqual(ci / 2 - 1e-9);
      // Submissions: at most one per capped interval per channel, plus the first one.
      expect(r.tasksByRank[g]!).toBeLessThanOrEqual(r.groupSizes[g]! * (6000 / (ci / 2) + 1));
    });
  });
});

describe('overload', () => {
  it('FIXED overloads few crawlers; IIR and ICR cut the task count', () => {
    const world = buildWorld(syntheticLatency(40, 3), smallConfig({ crawlers: 10, steps: 8000 }), 5);
    const fixed = simulate(world, { strategy: 'fixed', routing: 'coord', steps: 8000 });
    const iir = simulate(world, { strategy: 'iir', routing: 'coord', steps: 8000 });
    const icr = simulate(world, { strategy: 'icr', routing: 'coord', steps: 8000 });
    expect(fixed.successRate).toBeLessThan(0.5);
    expect(fixed.outcomes.failed + fixed.outcomes.cancelled).toBeGreaterThan(fixed.outcomes.completed);
    expect(iir.tasksTotal).toBeLessThan(0.85 * fixed.tasksTotal);
    expect(icr.tasksTotal).toBeLessThan(0.85 * fixed.tasksTotal);
    expect(icr.successRate).toBeGreaterThan(fixed.successRate);
    expect(iir.reassignments).toBeGreaterThan(0);
    expect(icr.reassignments).toBeGreaterThan(0);
  });
});

// Each case spawns the CLI (start-up and tsx compile, seconds each on a loaded 2-core machine).
describe('sim CLI', { timeout: 240_000 }, () => {
  const cli = (...args: string[]) => spawnSync(process.execPath, ['bin/sim.js', ...args], { encoding: 'utf8', timeout: 120_000 });

  it('rejects an unknown scenario', () => {
    const r = cli('run', '--scenario', 'nope');
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/scenario/);
    expect(r.stderr).toMatch(/rec|ruc/);
  });
  it('rejects bad numbers and strategies', () => {
    const a = cli('run', '--steps', 'abc');
    expect(a.status).not.toBe(0);
    expect(a.stderr).toMatch(/--steps must be an integer/);
    const b = cli('run', '--strategy', 'magic');
    expect(b.status).not.toBe(0);
    expect(b.stderr).toMatch(/strategy/);
    const c = cli('run', '--encourage', '2');
    expect(c.status).not.toBe(0);
    expect(c.stderr).toMatch(/--encourage must be in/);
    const d = cli('run', '--scale', '0');
    expect(d.status).not.toBe(0);
    expect(d.stderr).toMatch(/--scale must be between 1 and/);
    const e = cli('run', '--provider-ttl', '1');
    expect(e.status).not.toBe(0);
    expect(e.stderr).toMatch(/--provider-ttl must be between 4 and/);
    const f = cli('run', '--known-peers', '8');
    expect(f.status).not.toBe(0);
    expect(f.stderr).toMatch(/--known-peers takes two counts/);
    const g = cli('run', '--jobs', '0');
    expect(g.status).not.toBe(0);
    expect(g.stderr).toMatch(/--jobs must be between 1 and/);
    const h = cli('run', '--caf-cost-exponent', '2');
    expect(h.status).not.toBe(0);
    expect(h.stderr).toMatch(/--caf-cost-exponent must be in \[0, 1\]/);
    const i = cli('run', '--placement', 'spill=0.5');
    expect(i.status).not.toBe(0);
    expect(i.stderr).toMatch(/spill must be >= 1/);
    const j = cli('run', '--placement', 'nearest=true');
    expect(j.status).not.toBe(0);
    expect(j.stderr).toMatch(/--placement: unknown option 'nearest'/);
  });
  it('rejects a missing or malformed latency file', () => {
    const a = cli('run', '--quick', '--latency', '/nonexistent/latency.txt');
    expect(a.status).toBe(1);
    expect(a.stderr).toMatch(/latency file not found: \/nonexistent\/latency.txt/);
    const dir = mkdtempSync(join(tmpdir(), 'simtest-'));
    const bad = join(dir, 'bad.txt');
    writeFileSync(bad, 'this is not\na latency matrix\n');
    const b = cli('run', '--quick', '--latency', bad);
    expect(b.status).toBe(1);
    expect(b.stderr).toMatch(/cannot use latency file/);
  });
  it('sweep: one point, every strategy, CSV/JSON/SVG out, the bound beside each', () => {
    const dir = mkdtempSync(join(tmpdir(), 'simsweep-'));
    // --jobs 2: the strategies on worker threads started from the compiled dist/sim/strategy-worker.js.
    const r = cli('sweep', '--crawlers', '60', '--steps', '300', '--json', '--out', dir, '--jobs', '2');
    expect(r.status).toBe(0);
    const j = JSON.parse(r.stdout) as { points: { crawlers: number; bounds: { updateQualityWeighted: number } }[]; rows: { strategy: string; updateQualityWeighted: number }[] };
    expect(j.points.map((p) => p.crawlers)).toEqual([60]);
    expect(j.rows.map((x) => x.strategy)).toEqual([...STRATEGIES]);
    for (const row of j.rows) expect(row.updateQualityWeighted).toBeLessThanOrEqual(j.points[0]!.bounds.updateQualityWeighted);
    const files = readdirSync(dir);
    for (const f of ['sweep.json', 'sweep.csv', 'sweep.md', 'tasks.svg', 'quality.svg', 'freshness.svg', 'success.svg']) expect(files).toContain(f);
    const bad = cli('sweep', '--crawlers', '60,x');
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toMatch(/--crawlers must be an integer/);
  });
  it("follows the paper's readings by default; --no-faithful restores the earlier ones; a flag overrides either", () => {
    const model = (...args: string[]) => {
      const r = cli('run', '--quick', '--steps', '100', '--strategy', 'fixed', '--json', ...args);
      expect(r.status).toBe(0);
      return (JSON.parse(r.stdout) as { model: Record<string, string> }).model;
    };
    expect(model()).toEqual({ fullSystem: 'hold', rttRule: 'paper', icrEncourage: 'group' });
    expect(model('--no-faithful')).toEqual({ fullSystem: 'reject', rttRule: 'physical', icrEncourage: 'system' });
    expect(model('--no-faithful', '--full-system', 'hold')).toEqual({ fullSystem: 'hold', rttRule: 'physical', icrEncourage: 'system' });
    expect(model('--rtt-rule', 'physical')).toEqual({ fullSystem: 'hold', rttRule: 'physical', icrEncourage: 'group' });
  });
  it('runs --quick --json and writes --out files', () => {
    const dir = mkdtempSync(join(tmpdir(), 'simout-'));
    const r = cli('run', '--quick', '--steps', '1500', '--scenario', 'ruc', '--json', '--out', dir);
    expect(r.status).toBe(0);
    const j = JSON.parse(r.stdout) as {
      scenario: string;
      routing: string;
      strategies: Record<string, { tasksByRank: number[]; updateQualityWeighted: number; routing: Record<string, number | string> }>;
    };
    expect(j.scenario).toBe('ruc');
    expect(j.routing).toBe('coord');
    expect(Object.keys(j.strategies)).toEqual(['fixed', 'iir', 'icr', 'caf']);
    const jb = (j as unknown as { bounds: Record<string, number> }).bounds;
    for (const key of ['updateQualityWeighted', 'updateQuality', 'freshness']) expect(jb[key]).toBeGreaterThan(0);
    for (const s of Object.values(j.strategies) as unknown as Record<string, unknown>[]) {
      for (const key of ['freshness', 'meanAgeMinutes', 'ofBound']) expect(s).toHaveProperty(key);
      expect((s.ofBound as Record<string, number>).updateQualityWeighted).toBeLessThanOrEqual(1);
    }
    expect(j.strategies.fixed!.tasksByRank).toHaveLength(5);
    const routing = j.strategies.iir!.routing;
    expect(Object.keys(routing)).toEqual([
      'policy', 'stretchMedian', 'stretchP90', 'oracleStretchMedian', 'oracleStretchP90', 'hashStretchMedian',
      'loadImbalance', 'loadImbalanceSameBandwidth', 'loadImbalanceIdeal', 'loadImbalancePerCapacity', 'threadUtilisation',
      'dhtOpsPerTask', 'dhtMessagesPerTask', 'forwardHopsMean', 'noCrawler', 'attemptsPerTask', 'taskMessagesPerTask', 'endedByWalkPerTask', 'diagnosis',
    ]);
    // Task messages: at least one send per routed task, at most maxAttempts candidates tried.
    expect(routing.taskMessagesPerTask as number).toBeGreaterThanOrEqual(routing.attemptsPerTask as number);
    expect(routing.attemptsPerTask as number).toBeGreaterThanOrEqual(1);
    expect(routing.attemptsPerTask as number).toBeLessThanOrEqual(4);
    // The imbalance's yardsticks (sim/imbalance.ts): pages ∝ capacity, and pages ÷ capacity.
    expect(routing.loadImbalanceIdeal as number).toBeGreaterThan(0);
    expect(routing.loadImbalancePerCapacity as number).toBeGreaterThan(0);
    // Why sampled routes missed the oracle's crawler (sim/routing.ts): the classes and the oracle's add up.
    const diag = routing.diagnosis as unknown as { sampled: number; oracleTaken: number; classes: Record<string, { count: number }> };
    expect(diag.oracleTaken + Object.values(diag.classes).reduce((a, c) => a + c.count, 0)).toBe(diag.sampled);
    expect(routing.loadImbalanceSameBandwidth as number).toBeGreaterThan(0);
    expect(routing.threadUtilisation as number).toBeGreaterThan(0);
    expect(routing.threadUtilisation as number).toBeLessThanOrEqual(1);
    // Stretch is RTT ÷ the best online crawler's: never below 1; hashing is worse than coordinates.
    expect(routing.stretchMedian as number).toBeGreaterThanOrEqual(1);
    expect(routing.oracleStretchMedian as number).toBeGreaterThanOrEqual(1);
    expect(routing.hashStretchMedian as number).toBeGreaterThan(routing.stretchMedian as number);
    expect(routing.dhtMessagesPerTask as number).toBeGreaterThan(routing.dhtOpsPerTask as number);
    const files = readdirSync(dir);
    for (const f of ['report.json', 'summary.json', 'tables.md', 'timeseries.csv', 'queued.svg', 'throughput.svg']) expect(files).toContain(f);
  });
});
