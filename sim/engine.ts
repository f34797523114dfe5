// The discrete-event simulation of the paper's §4 for one recrawl strategy:
// the event loop and the rules that tie its parts together. Events: channel
// submissions, task completions, crawler departures and joins, and periodic
// samples, all in one binary heap (sim/heap.ts). Time is in minutes.
//
// The parts, one job each: tasks (task-pool.ts), crawlers' threads and queues
// (crawlers.ts), routing (routing.ts), what a task costs and the model's
// readings (model.ts), freshness against the change process (freshness.ts),
// and the summary of a run (result.ts).
import type { RecrawlOptions, RecrawlState, StrategyName } from '../src/recrawl/index.js';
import {
  channelInterval,
  createRecrawlState,
  groupChannelInterval,
  observeLoad,
  reassign,
  recordFailure,
  recordNoRoom,
  recordSubmit,
  recordSuccess,
  shouldReassign,
  waitIntervals,
} from '../src/recrawl/index.js';
import { createRng, deriveSeed, normal } from '../src/rng.js';
import { Crawlers } from './crawlers.js';
import { FreshnessTracker } from './freshness.js';
import { EventQueue } from './heap.js';
import { DEFAULT_ICR_ENCOURAGE, DEFAULT_MODEL, rttMultiplier, taskCost, type SimModel, type TaskCost } from './model.js';
import type { Sample, StrategyResult } from './result.js';
import { summariseRun } from './result.js';
import type { Routing } from './routing.js';
import { SimRouter } from './routing.js';
import { ST_QUEUED, ST_RUNNING, TaskPool } from './task-pool.js';
import { ThreadLedger } from './thread-use.js';
import type { World } from './world.js';

export type { Routing, RoutingStats } from './routing.js';
export type { Sample, StrategyResult } from './result.js';

export interface RunOptions {
  strategy: StrategyName;
  routing: Routing;
  steps: number;
  recrawl?: Partial<RecrawlOptions>;
  /** The model's readings where the paper and we differ (default DEFAULT_MODEL: the paper's;
   * ICR's encourage scope, in recrawl, defaults to DEFAULT_ICR_ENCOURAGE to match). */
  model?: Partial<SimModel>;
  /** Called now and then with the fraction of simulated time done. */
  onProgress?: (fraction: number) => void;
}

const EV_SUBMIT = 0;
const EV_FINISH = 1;
const EV_LEAVE = 2;
const EV_JOIN = 3;
const EV_SAMPLE = 4;

export function simulate(world: World, opts: RunOptions): StrategyResult {
  const wall0 = performance.now();
  const cfg = world.config;
  const H = cfg.hosts;
  const C = cfg.crawlers;
  const K = cfg.changeIntervals.length;
  const T = opts.steps;
  const seed = world.seed;
  const model: SimModel = { ...DEFAULT_MODEL, ...opts.model };
  const rttFactor = rttMultiplier(model.rttRule);
  const hold = model.fullSystem === 'hold';

  const rec: RecrawlState = createRecrawlState(
    Array.from({ length: H }, (_, h) => ({ changeInterval: world.changeInterval[h]!, group: world.group[h]! })),
    { ...opts.recrawl, icrEncourage: opts.recrawl?.icrEncourage ?? DEFAULT_ICR_ENCOURAGE, strategy: opts.strategy },
    0,
    K,
  );

  const q = new EventQueue(1 << 16);
  const pool = new TaskPool();
  const cost: TaskCost = { minutes: 0, rttMs: 0 };

  // ---- metrics
  const submittedBy = new Float64Array(K);
  const completedBy = new Float64Array(K);
  const successes = new Float64Array(H);
  const pagesByCrawler = new Float64Array(C);
  const outcomes = { completed: 0, failed: 0, cancelled: 0, lost: 0, pendingAtEnd: 0 };
  let migrations = 0;
  let held = 0;
  let rttSum = 0;
  let bytesTotal = 0;
  let windowBytes = 0;
  let windowCompleted = 0;
  let events = 0;
  const capacity = { threadMinutes: 0, completedMinutes: 0, busyMinutes: 0, lostMinutes: 0, inProgressMinutes: 0, idleMinutes: 0, idleWaitingMinutes: 0 };
  const ledger = new ThreadLedger();
  let onlineSince = 0;
  const samples: Sample[] = [];
  const freshness = new FreshnessTracker(world.changeInterval, seed);

  const crawlers = new Crawlers(C, cfg.threads, cfg.queue, pool, {
    start(s, c, t) {
      taskCost(world, pool.channel[s]!, c, rttFactor, cost);
      pool.download[s] = cost.minutes;
      pool.rtt[s] = cost.rttMs;
      ledger.start();
      q.push(t + cost.minutes, s * 8 + EV_FINISH, pool.gen[s]!);
    },
    cancel(s, deadline) {
      outcomes.cancelled++;
      recordFailure(rec, pool.channel[s]!, deadline, 'expired');
      pool.release(s);
    },
  });

  let expectedRoutes = 0;
  for (let h = 0; h < H; h++) expectedRoutes += T / world.changeInterval[h]!;
  const router = new SimRouter(
    world,
    opts.routing,
    {
      online: crawlers.online,
      running: crawlers.running,
      qLen: crawlers.qLen,
      threads: cfg.threads,
      queue: cfg.queue,
      purge: (c, t) => crawlers.purge(c, t),
      accept: (s, c, t) => crawlers.accept(s, c, t),
    },
    deriveSeed(seed, 'ring'),
    {
      placement: cfg.placement,
      overlay: cfg.overlay,
      knownPeers: cfg.knownPeers,
      knownRandom: cfg.knownRandom,
      peerSeed: deriveSeed(seed, 'peers'),
      stretchSamples: cfg.stretchSamples,
      expectedRoutes,
    },
  );

  // ---- the group intervals over time (time-averaged per rank)
  const intervalIntegral = new Float64Array(K);
  const intervalNow = new Float64Array(K);
  let intervalSince = 0;
  // In this world all channels of a group share one change interval, so one
  // representative channel per group tells the interval it is scheduled at
  // (rate cap and floor applied; CAF's per-channel factors not: the group's).
  const rep = new Int32Array(K).fill(-1);
  for (let h = H - 1; h >= 0; h--) rep[world.group[h]!] = h;
  const effectiveInterval = (g: number): number => (rep[g]! >= 0 ? groupChannelInterval(rec, g, world.changeInterval[rep[g]!]!) : rec.groups[g]!.interval);
  for (let g = 0; g < K; g++) intervalNow[g] = effectiveInterval(g);
  function noteIntervals(t: number): void {
    for (let g = 0; g < K; g++) {
      intervalIntegral[g] = intervalIntegral[g]! + intervalNow[g]! * (t - intervalSince);
      intervalNow[g] = effectiveInterval(g);
    }
    intervalSince = t;
  }

  function maybeRound(t: number): void {
    if (!shouldReassign(rec, t)) return;
    const load = crawlers.load(t);
    // What the crawlers' queues hold, as a live crawler reports it: the tasks held
    // beyond a full queue (the paper's reading, model.fullSystem 'hold') pile up at
    // a few hot spots and are no queue a crawler reports (docs/sim.md, "CAF").
    observeLoad(rec, { threads: crawlers.onlineCount * cfg.threads, running: load.running, queued: load.queued - crawlers.heldCount });
    noteIntervals(t);
    reassign(rec, t);
    noteIntervals(t);
  }

  /** Places task s: routed to a crawler, else held (paper reading) or failed. */
  function place(s: number, t: number): void {
    const h = pool.channel[s]!;
    if (router.route(s, h, t) >= 0) return;
    if (hold) {
      const first = router.firstChoiceAgain(h, t);
      if (first >= 0) {
        held++;
        recordNoRoom(rec, h, t);
        crawlers.hold(s, first, t);
        return;
      }
    }
    outcomes.failed++;
    recordFailure(rec, h, t, 'refused');
    pool.release(s);
  }

  // ---- crawler churn
  const churn = createRng(deriveSeed(seed, 'churn'));
  function noteOnline(t: number): void {
    capacity.threadMinutes += crawlers.onlineCount * cfg.threads * (t - onlineSince);
    onlineSince = t;
  }

  function join(c: number, t: number): void {
    noteOnline(t);
    crawlers.join(c);
    router.join(c, t);
    q.push(t + Math.max(1, normal(churn, cfg.lifetimeMean, cfg.lifetimeSd)), c * 8 + EV_LEAVE);
  }

  const moving: number[] = [];
  function leave(c: number, t: number): void {
    noteOnline(t);
    router.leave(c, t);
    const notify = churn.next() < cfg.notifyProbability;
    crawlers.leave(c, t, moving);
    for (const s of moving) {
      // The work a running task did is lost either way (a migrated one restarts).
      if (pool.state[s] === ST_RUNNING) {
        capacity.busyMinutes += t - pool.started[s]!;
        capacity.lostMinutes += t - pool.started[s]!;
        ledger.stop();
      }
      // Invalidate the pending completion event of a running task.
      pool.bump(s);
      if (notify) {
        migrations++;
        place(s, t);
      } else {
        outcomes.lost++;
        recordFailure(rec, pool.channel[s]!, t, 'lost');
        pool.release(s);
      }
    }
    q.push(t + Math.max(1, normal(churn, cfg.rejoinMean, cfg.rejoinSd)), c * 8 + EV_JOIN);
  }

  function finish(s: number, t: number): void {
    const c = pool.crawler[s]!;
    const h = pool.channel[s]!;
    const dl = pool.download[s]!;
    outcomes.completed++;
    completedBy[world.group[h]!]! += 1;
    successes[h] = successes[h]! + 1;
    pagesByCrawler[c] = pagesByCrawler[c]! + world.pages[h]!;
    rttSum += pool.rtt[s]!;
    capacity.completedMinutes += dl;
    capacity.busyMinutes += dl;
    bytesTotal += world.bytes[h]!;
    windowBytes += world.bytes[h]!;
    windowCompleted++;
    freshness.update(h, t);
    recordSuccess(rec, h, t, dl);
    pool.release(s);
    ledger.stop();
    crawlers.finish(s, c, t);
    maybeRound(t);
  }

  // CAF may let a task wait several intervals and not resubmit its channel meanwhile.
  const waitFor = waitIntervals(rec);
  const lastTask = waitFor > 1 ? new Int32Array(H).fill(-1) : null;

  function submit(h: number, t: number): void {
    const iv = channelInterval(rec, h);
    q.push(t + iv, h * 8 + EV_SUBMIT);
    if (lastTask !== null) {
      // The channel's last task still waiting for a thread stands for this one.
      const p = lastTask[h]!;
      if (p >= 0 && pool.channel[p] === h && pool.state[p] === ST_QUEUED && pool.deadline[p]! > t) return;
    }
    const s = pool.alloc(h, t + iv * waitFor);
    if (lastTask !== null) lastTask[h] = s;
    submittedBy[world.group[h]!]! += 1;
    recordSubmit(rec, h, t);
    place(s, t);
  }

  function sample(t: number): void {
    const load = crawlers.load(t);
    const win = cfg.sampleEvery;
    samples.push({
      t,
      online: crawlers.onlineCount,
      queued: load.queued,
      running: load.running,
      throughputMbps: (windowBytes * 8) / 1e6 / (win * 60),
      completed: windowCompleted,
      intervals: Array.from(intervalNow),
    });
    windowBytes = 0;
    windowCompleted = 0;
    maybeRound(t);
  }

  // ---- start: all crawlers join at step 1 (t = 0); channels start at a random phase
  const phase = createRng(deriveSeed(seed, 'phase'));
  for (let c = 0; c < C; c++) join(c, 0);
  for (let h = 0; h < H; h++) q.push(phase.next() * channelInterval(rec, h), h * 8 + EV_SUBMIT);
  for (let t = cfg.sampleEvery; t <= T; t += cfg.sampleEvery) q.push(t, EV_SAMPLE);

  const progressEvery = 1 << 16;
  while (q.size > 0) {
    const t = q.peekTime();
    if (t > T) break;
    const gen = q.peekExtra();
    const p = q.pop();
    events++;
    ledger.advance(t, crawlers.onlineCount * cfg.threads, pool.live);
    const id = p >>> 3;
    switch (p & 7) {
      case EV_SUBMIT:
        submit(id, t);
        break;
      case EV_FINISH:
        if (pool.state[id] === ST_RUNNING && pool.gen[id] === gen) finish(id, t);
        break;
      case EV_LEAVE:
        leave(id, t);
        break;
      case EV_JOIN:
        join(id, t);
        break;
      case EV_SAMPLE:
        sample(t);
        break;
    }
    if ((events & (progressEvery - 1)) === 0 && opts.onProgress) opts.onProgress(t / T);
  }

  // ---- close the books at T
  ledger.advance(T, crawlers.onlineCount * cfg.threads, pool.live);
  noteIntervals(T);
  noteOnline(T);
  router.close(T);
  const end = crawlers.load(T);
  outcomes.pendingAtEnd = end.running + end.queued;
  // Work in progress at T counts as busy time.
  for (let c = 0; c < C; c++) {
    for (let i = 0; i < crawlers.running[c]!; i++) {
      const done = T - pool.started[crawlers.runSlots[c * cfg.threads + i]!]!;
      capacity.busyMinutes += done;
      capacity.inProgressMinutes += done;
    }
  }
  capacity.idleMinutes = ledger.idleMinutes;
  capacity.idleWaitingMinutes = ledger.idleWaitingMinutes;
  const fresh = freshness.finish(T);
  return summariseRun(world, opts.strategy, opts.routing, model, T, {
    submittedBy,
    completedBy,
    successes,
    outcomes,
    migrations,
    held,
    rttSum,
    bytesTotal,
    pagesByCrawler,
    capacity,
    intervalByRank: Array.from(intervalIntegral, (v) => v / T),
    finalIntervalByRank: Array.from({ length: K }, (_, g) => effectiveInterval(g)),
    freshness: fresh.freshness,
    age: fresh.age,
    samples,
    reassignments: rec.rounds,
    maxRunningSeen: crawlers.maxRunningSeen,
    maxQueueSeen: crawlers.maxQueueSeen,
    events,
    wallSeconds: (performance.now() - wall0) / 1000,
    forwards: router.forwards,
    routingStats: router.stats(pagesByCrawler, T),
  });
}
