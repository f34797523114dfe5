// The discrete-event simulation of the paper's §4 for one recrawl strategy.
// Events: channel submissions, task completions, crawler departures and joins,
// and periodic samples, all in one binary heap (sim/heap.ts). Time is in minutes.
import type { RecrawlOptions, RecrawlState, StrategyName } from '../src/recrawl/index.js';
import {
  channelInterval,
  createRecrawlState,
  reassign,
  recordFailure,
  recordSubmit,
  recordSuccess,
  shouldReassign,
} from '../src/recrawl/index.js';
import type { Rng } from '../src/rng.js';
import { createRng, deriveSeed, exponential, normal } from '../src/rng.js';
import { UpdateQualitySum } from '../src/recrawl/quality.js';
import { EventQueue } from './heap.js';
import type { Routing, RoutingStats } from './routing.js';
import { SimRouter } from './routing.js';
import type { World } from './world.js';
import { hostCrawlerRtt } from './world.js';

export type { Routing, RoutingStats } from './routing.js';

export interface RunOptions {
  strategy: StrategyName;
  routing: Routing;
  steps: number;
  recrawl?: Partial<RecrawlOptions>;
  /** Called now and then with the fraction of simulated time done. */
  onProgress?: (fraction: number) => void;
}

export interface Sample {
  t: number;
  online: number;
  queued: number;
  running: number;
  /** System download rate over the last window (Mbit/s), bytes of completed tasks. */
  throughputMbps: number;
  completed: number;
  intervals: number[];
}

export interface StrategyResult {
  strategy: StrategyName;
  routing: Routing;
  steps: number;
  groupSizes: number[];
  tasksTotal: number;
  tasksByRank: number[];
  completedByRank: number[];
  intervalByRank: number[];
  finalIntervalByRank: number[];
  updateQualityWeighted: number;
  updateQuality: number;
  /** Formula (5) per group (null for a group with no channels). */
  updateQualityByRank: (number | null)[];
  successRate: number;
  outcomes: { completed: number; failed: number; cancelled: number; lost: number; pendingAtEnd: number };
  migrations: number;
  forwards: number;
  /** Mean number of hops of a forwarded task (1 = the first crawler forwarded it once). */
  meanForwardHops: number;
  /** Routing quality and what the overlay costs (sim/routing.ts). */
  routingStats: RoutingStats;
  meanQueuedPerCrawler: number;
  meanOnline: number;
  meanThroughput: number;
  meanTaskRttMs: number;
  meanDownloadMinutes: number;
  loadImbalance: number;
  /** The same within each bandwidth level, the largest: what placement adds to the
   * spread that bandwidth alone makes (a 2048 kbit/s crawler fetches ~1.5× the pages
   * of a 1024 one in the same busy time). */
  loadImbalanceSameBandwidth: number;
  /** Busy threads ÷ online threads, averaged over the samples. */
  threadUtilisation: number;
  freshnessByRank: number[];
  ageByRank: number[];
  freshness: number;
  reassignments: number;
  maxRunningSeen: number;
  maxQueueSeen: number;
  events: number;
  wallSeconds: number;
  samples: Sample[];
}

const EV_SUBMIT = 0;
const EV_FINISH = 1;
const EV_LEAVE = 2;
const EV_JOIN = 3;
const EV_SAMPLE = 4;

const ST_FREE = 0;
const ST_QUEUED = 1;
const ST_RUNNING = 2;

export function simulate(world: World, opts: RunOptions): StrategyResult {
  const wall0 = performance.now();
  const cfg = world.config;
  const H = cfg.hosts;
  const C = cfg.crawlers;
  const K = cfg.changeIntervals.length;
  const T = opts.steps;
  const THREADS = cfg.threads;
  const QCAP = cfg.queue;
  const seed = world.seed;

  const rec: RecrawlState = createRecrawlState(
    Array.from({ length: H }, (_, h) => ({ changeInterval: world.changeInterval[h]!, group: world.group[h]! })),
    { ...opts.recrawl, strategy: opts.strategy },
    0,
    K,
  );

  const q = new EventQueue(1 << 16);

  // ---- task pool
  let cap = 1 << 15;
  let tChannel = new Int32Array(cap);
  let tCrawler = new Int32Array(cap);
  let tState = new Uint8Array(cap);
  let tGen = new Int32Array(cap);
  let tDeadline = new Float64Array(cap);
  let tDl = new Float64Array(cap);
  let tRtt = new Float64Array(cap);
  let freeTop = 0;
  let freeList = new Int32Array(cap);
  let used = 0;
  function growPool(): void {
    const n = cap * 2;
    const g32 = (a: Int32Array) => {
      const b = new Int32Array(n);
      b.set(a);
      return b;
    };
    const g64 = (a: Float64Array) => {
      const b = new Float64Array(n);
      b.set(a);
      return b;
    };
    tChannel = g32(tChannel);
    tCrawler = g32(tCrawler);
    tGen = g32(tGen);
    freeList = g32(freeList);
    const s = new Uint8Array(n);
    s.set(tState);
    tState = s;
    tDeadline = g64(tDeadline);
    tDl = g64(tDl);
    tRtt = g64(tRtt);
    cap = n;
  }
  function alloc(): number {
    if (freeTop > 0) return freeList[--freeTop]!;
    if (used === cap) growPool();
    return used++;
  }
  function release(slot: number): void {
    tState[slot] = ST_FREE;
    tGen[slot] = (tGen[slot]! + 1) | 0;
    freeList[freeTop++] = slot;
  }

  // ---- crawlers
  const online = new Uint8Array(C);
  const running = new Uint8Array(C);
  const runSlots = new Int32Array(C * THREADS);
  const qLen = new Uint8Array(C);
  const qSlots = new Int32Array(C * QCAP);
  /** Earliest deadline in each crawler's queue (Infinity when empty): purge is O(1) until then. */
  const qMinDeadline = new Float64Array(C).fill(Infinity);
  const pagesBy = new Float64Array(C);
  let onlineCount = 0;
  let maxRunningSeen = 0;
  let maxQueueSeen = 0;
  let expectedRoutes = 0;
  for (let h = 0; h < H; h++) expectedRoutes += T / world.changeInterval[h]!;
  const router = new SimRouter(
    world,
    opts.routing,
    { online, running, qLen, threads: THREADS, queue: QCAP, purge, accept },
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

  // ---- metrics
  const submittedBy = new Float64Array(K);
  const completedBy = new Float64Array(K);
  const successes = new Float64Array(H);
  let completed = 0;
  let failed = 0;
  let cancelled = 0;
  let lost = 0;
  let migrations = 0;
  let rttSum = 0;
  let dlSum = 0;
  let bytesTotal = 0;
  let windowBytes = 0;
  let windowCompleted = 0;
  let events = 0;
  const samples: Sample[] = [];
  const intervalIntegral = new Float64Array(K);
  const intervalNow = new Float64Array(K);
  let intervalSince = 0;
  // The interval channels of a group are actually scheduled at (rate cap and floor
  // applied); in this world all channels of a group share one change interval, so
  // one representative channel per group tells it.
  const rep = new Int32Array(K).fill(-1);
  for (let h = H - 1; h >= 0; h--) rep[world.group[h]!] = h;
  const effectiveInterval = (g: number): number => (rep[g]! >= 0 ? channelInterval(rec, rep[g]!) : rec.groups[g]!.interval);
  for (let g = 0; g < K; g++) intervalNow[g] = effectiveInterval(g);

  // ---- freshness against a simulated Poisson change process (own stream per channel)
  const changeRng: Rng[] = new Array<Rng>(H);
  const nextChange = new Float64Array(H);
  const lastSync = new Float64Array(H);
  const freshTime = new Float64Array(H);
  const ageIntegral = new Float64Array(H);
  for (let h = 0; h < H; h++) {
    const r = createRng(deriveSeed(seed, `change:${h}`));
    changeRng[h] = r;
    nextChange[h] = exponential(r, world.changeInterval[h]!);
  }
  function closeSync(h: number, t: number): void {
    const c = nextChange[h]!;
    const s = lastSync[h]!;
    freshTime[h] = freshTime[h]! + Math.min(c, t) - s;
    if (c < t) ageIntegral[h] = ageIntegral[h]! + ((t - c) * (t - c)) / 2;
  }
  function sync(h: number, t: number): void {
    closeSync(h, t);
    const mean = world.changeInterval[h]!;
    let c = nextChange[h]!;
    const r = changeRng[h]!;
    while (c <= t) c += exponential(r, mean);
    nextChange[h] = c;
    lastSync[h] = t;
  }

  const churn = createRng(deriveSeed(seed, 'churn'));
  const phase = createRng(deriveSeed(seed, 'phase'));
  // ---- task placement
  /** Drops expired tasks from crawler c's queue (cancelled at their deadline). */
  function purge(c: number, t: number): void {
    if (qMinDeadline[c]! >= t) return;
    const n = qLen[c]!;
    const base = c * QCAP;
    let w = 0;
    let minD = Infinity;
    for (let i = 0; i < n; i++) {
      const s = qSlots[base + i]!;
      if (tDeadline[s]! < t) {
        cancelled++;
        recordFailure(rec, tChannel[s]!, tDeadline[s]!);
        release(s);
      } else {
        qSlots[base + w++] = s;
        if (tDeadline[s]! < minD) minD = tDeadline[s]!;
      }
    }
    qLen[c] = w;
    qMinDeadline[c] = minD;
  }

  function startTask(s: number, c: number, t: number): void {
    const h = tChannel[s]!;
    const rtt = hostCrawlerRtt(world, h, c);
    const speedKbpsPerThread = world.bandwidthKbps[c]! / THREADS;
    const transferMs = ((world.bytes[h]! * 8) / 1000 / speedKbpsPerThread) * 1000;
    // Σ over pages of (2 × one-way latency + size / (bandwidth / threads) + wait); 2 × one-way = RTT.
    const dlMs = world.pages[h]! * (rtt + cfg.waitMs) + transferMs;
    const dl = dlMs / 60_000;
    tState[s] = ST_RUNNING;
    tCrawler[s] = c;
    tDl[s] = dl;
    tRtt[s] = rtt;
    runSlots[c * THREADS + running[c]!] = s;
    running[c] = running[c]! + 1;
    if (running[c]! > maxRunningSeen) maxRunningSeen = running[c]!;
    q.push(t + dl, s * 8 + EV_FINISH, tGen[s]!);
  }

  /** Accept at crawler c if it has room; false when full. */
  function accept(s: number, c: number, t: number): boolean {
    if (running[c]! < THREADS) {
      startTask(s, c, t);
      return true;
    }
    purge(c, t);
    const n = qLen[c]!;
    if (n < QCAP) {
      qSlots[c * QCAP + n] = s;
      qLen[c] = n + 1;
      if (n + 1 > maxQueueSeen) maxQueueSeen = n + 1;
      tState[s] = ST_QUEUED;
      tCrawler[s] = c;
      if (tDeadline[s]! < qMinDeadline[c]!) qMinDeadline[c] = tDeadline[s]!;
      return true;
    }
    return false;
  }

  /** Routes task s to a crawler (sim/routing.ts); false when none took it. */
  function route(s: number, t: number): boolean {
    return router.route(s, tChannel[s]!, t) >= 0;
  }

  function fail(s: number, t: number): void {
    failed++;
    recordFailure(rec, tChannel[s]!, t);
    release(s);
  }

  function noteIntervals(t: number): void {
    for (let g = 0; g < K; g++) {
      intervalIntegral[g] = intervalIntegral[g]! + intervalNow[g]! * (t - intervalSince);
      intervalNow[g] = effectiveInterval(g);
    }
    intervalSince = t;
  }

  function maybeRound(t: number): void {
    if (shouldReassign(rec, t)) {
      noteIntervals(t);
      reassign(rec, t);
      noteIntervals(t);
    }
  }

  // ---- crawler churn
  function join(c: number, t: number): void {
    online[c] = 1;
    onlineCount++;
    router.join(c, t);
    q.push(t + Math.max(1, normal(churn, cfg.lifetimeMean, cfg.lifetimeSd)), c * 8 + EV_LEAVE);
  }

  const moving: number[] = [];
  function leave(c: number, t: number): void {
    online[c] = 0;
    onlineCount--;
    router.leave(c, t);
    const notify = churn.next() < cfg.notifyProbability;
    moving.length = 0;
    for (let i = 0; i < running[c]!; i++) moving.push(runSlots[c * THREADS + i]!);
    purge(c, t);
    for (let i = 0; i < qLen[c]!; i++) moving.push(qSlots[c * QCAP + i]!);
    running[c] = 0;
    qLen[c] = 0;
    qMinDeadline[c] = Infinity;
    for (const s of moving) {
      // Invalidate the pending completion event of a running task.
      tGen[s] = (tGen[s]! + 1) | 0;
      if (notify) {
        migrations++;
        if (!route(s, t)) fail(s, t);
      } else {
        lost++;
        recordFailure(rec, tChannel[s]!, t);
        release(s);
      }
    }
    q.push(t + Math.max(1, normal(churn, cfg.rejoinMean, cfg.rejoinSd)), c * 8 + EV_JOIN);
  }

  function finish(s: number, t: number): void {
    const c = tCrawler[s]!;
    const h = tChannel[s]!;
    // Remove s from c's running slots.
    const base = c * THREADS;
    const n = running[c]!;
    for (let i = 0; i < n; i++) {
      if (runSlots[base + i] === s) {
        runSlots[base + i] = runSlots[base + n - 1]!;
        break;
      }
    }
    running[c] = n - 1;
    completed++;
    completedBy[world.group[h]!]! += 1;
    successes[h] = successes[h]! + 1;
    pagesBy[c] = pagesBy[c]! + world.pages[h]!;
    rttSum += tRtt[s]!;
    dlSum += tDl[s]!;
    bytesTotal += world.bytes[h]!;
    windowBytes += world.bytes[h]!;
    windowCompleted++;
    sync(h, t);
    recordSuccess(rec, h, t, tDl[s]!);
    release(s);
    // Next queued task that has not expired.
    purge(c, t);
    if (qLen[c]! > 0) {
      const qb = c * QCAP;
      const next = qSlots[qb]!;
      qSlots.copyWithin(qb, qb + 1, qb + qLen[c]!);
      qLen[c] = qLen[c]! - 1;
      startTask(next, c, t);
    }
    maybeRound(t);
  }

  function submit(h: number, t: number): void {
    const iv = channelInterval(rec, h);
    q.push(t + iv, h * 8 + EV_SUBMIT);
    const s = alloc();
    tChannel[s] = h;
    tDeadline[s] = t + iv;
    submittedBy[world.group[h]!]! += 1;
    recordSubmit(rec, h, t);
    if (!route(s, t)) fail(s, t);
  }

  function sample(t: number): void {
    let queued = 0;
    let run = 0;
    for (let c = 0; c < C; c++) {
      if (!online[c]) continue;
      purge(c, t);
      queued += qLen[c]!;
      run += running[c]!;
    }
    const win = cfg.sampleEvery;
    samples.push({
      t,
      online: onlineCount,
      queued,
      running: run,
      throughputMbps: (windowBytes * 8) / 1e6 / (win * 60),
      completed: windowCompleted,
      intervals: Array.from(intervalNow),
    });
    windowBytes = 0;
    windowCompleted = 0;
    maybeRound(t);
  }

  // ---- start: all crawlers join at step 1 (t = 0); channels start at a random phase
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
    const type = p & 7;
    const id = p >>> 3;
    switch (type) {
      case EV_SUBMIT:
        submit(id, t);
        break;
      case EV_FINISH:
        if (tState[id] === ST_RUNNING && tGen[id] === gen) finish(id, t);
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
  noteIntervals(T);
  router.close(T);
  const fw = router.forwards;
  let pendingAtEnd = 0;
  for (let c = 0; c < C; c++) {
    purge(c, T);
    pendingAtEnd += qLen[c]! + running[c]!;
  }
  for (let h = 0; h < H; h++) closeSync(h, T);

  const groupSizes = new Array<number>(K).fill(0);
  for (let h = 0; h < H; h++) groupSizes[world.group[h]!]! += 1;
  // Formula (5), src/recrawl/quality.ts: every channel counts, one never updated with rate 0.
  const quality = new UpdateQualitySum(K);
  const freshBy = new Array<number>(K).fill(0);
  const ageBy = new Array<number>(K).fill(0);
  let freshAll = 0;
  for (let h = 0; h < H; h++) {
    const g = world.group[h]!;
    quality.add(g, successes[h]! / T, world.changeInterval[h]!);
    freshBy[g]! += freshTime[h]! / T;
    ageBy[g]! += ageIntegral[h]! / T;
    freshAll += freshTime[h]! / T;
  }
  const uq = quality.result();
  for (let g = 0; g < K; g++) {
    const n = groupSizes[g]! || 1;
    freshBy[g] = freshBy[g]! / n;
    ageBy[g] = ageBy[g]! / n;
  }
  let pagesSum = 0;
  let pagesMax = 0;
  for (let c = 0; c < C; c++) {
    pagesSum += pagesBy[c]!;
    if (pagesBy[c]! > pagesMax) pagesMax = pagesBy[c]!;
  }
  const pagesMean = pagesSum / C;
  const levelsN = world.config.bandwidthsKbps.length;
  const lvSum = new Float64Array(levelsN);
  const lvMax = new Float64Array(levelsN);
  const lvN = new Float64Array(levelsN);
  for (let c = 0; c < C; c++) {
    const l = world.bandwidthLevel[c]!;
    lvSum[l]! += pagesBy[c]!;
    lvN[l]! += 1;
    if (pagesBy[c]! > lvMax[l]!) lvMax[l] = pagesBy[c]!;
  }
  let sameBandwidth = 0;
  for (let l = 0; l < levelsN; l++) {
    const mean = lvN[l]! > 0 ? lvSum[l]! / lvN[l]! : 0;
    if (mean > 0) sameBandwidth = Math.max(sameBandwidth, (lvMax[l]! - mean) / mean);
  }
  let qpc = 0;
  let onl = 0;
  let qpcN = 0;
  let runSum = 0;
  let slotSum = 0;
  for (const s of samples) {
    runSum += s.running;
    slotSum += s.online * THREADS;
    onl += s.online;
    if (s.online > 0) {
      qpc += s.queued / s.online;
      qpcN++;
    }
  }
  const tasksTotal = submittedBy.reduce((a, b) => a + b, 0);
  return {
    strategy: opts.strategy,
    routing: opts.routing,
    steps: T,
    groupSizes,
    tasksTotal,
    tasksByRank: Array.from(submittedBy),
    completedByRank: Array.from(completedBy),
    intervalByRank: Array.from(intervalIntegral, (v) => v / T),
    finalIntervalByRank: Array.from({ length: K }, (_, g) => effectiveInterval(g)),
    updateQualityWeighted: uq.weighted ?? 0,
    updateQuality: uq.unweighted ?? 0,
    updateQualityByRank: uq.groups.map((q) => q.quality),
    successRate: tasksTotal > 0 ? completed / tasksTotal : 0,
    outcomes: { completed, failed, cancelled, lost, pendingAtEnd },
    migrations,
    forwards: fw.count,
    meanForwardHops: fw.count > 0 ? fw.hops / fw.count : 0,
    routingStats: router.stats(),
    meanQueuedPerCrawler: qpcN > 0 ? qpc / qpcN : 0,
    meanOnline: samples.length > 0 ? onl / samples.length : 0,
    meanThroughput: (bytesTotal * 8) / 1e6 / (T * 60),
    meanTaskRttMs: completed > 0 ? rttSum / completed : 0,
    meanDownloadMinutes: completed > 0 ? dlSum / completed : 0,
    loadImbalance: pagesMean > 0 ? (pagesMax - pagesMean) / pagesMean : 0,
    loadImbalanceSameBandwidth: sameBandwidth,
    threadUtilisation: slotSum > 0 ? runSum / slotSum : 0,
    freshnessByRank: freshBy,
    ageByRank: ageBy,
    freshness: freshAll / H,
    reassignments: rec.rounds,
    maxRunningSeen,
    maxQueueSeen,
    events,
    wallSeconds: (performance.now() - wall0) / 1000,
    samples,
  };
}
