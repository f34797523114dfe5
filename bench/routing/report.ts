// bench:routing's result: one JSON object (--json) or the same figures as
// text, each beside its yardsticks (the oracles, the offline embedding, hash
// routing). Apart from the run so that what is reported, and under which key,
// reads in one place.
import { loadavg } from 'node:os';
import { quantileSorted, type AppCoordOptions } from '../../src/coords/index.js';
import type { Oracle } from './oracles.js';
import type { RoutingBenchOptions } from './options.js';
import type { routeOrders } from './route.js';
import type { SettleBill } from './world.js';

type Routed = Awaited<ReturnType<typeof routeOrders>>;

/** What a run measured, as bench/routing.ts gathered it. */
export interface Measured {
  opts: RoutingBenchOptions;
  appCoord: AppCoordOptions;
  /** ProcessNet's usage (undefined in one process). */
  usage: { processes: number; cpuSeconds: number } | undefined;
  convergeSeconds: number | null;
  settledSeconds: number;
  live: number;
  livePublished: number;
  offline: number;
  startSeconds: number;
  sysOracle: Oracle;
  pubOracle: Oracle;
  offlineOracle: number[];
  byCoord: Routed;
  byHash: Routed;
  unconfirmed: Routed | undefined;
  /** How far the crawlers' Vivaldi and published coordinates moved while routing (sorted), and how often the published ones changed. */
  motion: number[];
  motionPub: number[];
  changesWhileRouting: number[];
  routerConfirmQueries: number;
  peakRssSumMB: number;
  bill: SettleBill;
  load0: number;
  t0: number;
}

export function resultOf(m: Measured) {
  const { opts, byCoord, byHash, unconfirmed, usage, bill } = m;
  return {
    nodes: opts.nodes,
    processes: usage?.processes ?? 1,
    tasks: opts.tasks,
    hashTasks: opts.hashTasks,
    converged: m.convergeSeconds !== null,
    convergeSeconds: m.convergeSeconds,
    settledSeconds: m.settledSeconds,
    stretchMedian: quantileSorted(byCoord.stretch, 0.5),
    stretchP90: quantileSorted(byCoord.stretch, 0.9),
    oracleStretchMedian: quantileSorted(m.sysOracle.stretch, 0.5),
    oracleStretchP90: quantileSorted(m.sysOracle.stretch, 0.9),
    publishedOracleStretchMedian: quantileSorted(m.pubOracle.stretch, 0.5),
    publishedOracleStretchP90: quantileSorted(m.pubOracle.stretch, 0.9),
    publishedOracleExtraRttMsMedian: quantileSorted(m.pubOracle.extra, 0.5),
    publishedOracleExtraRttMsP90: quantileSorted(m.pubOracle.extra, 0.9),
    offlineOracleStretchMedian: quantileSorted(m.offlineOracle, 0.5),
    offlineOracleStretchP90: quantileSorted(m.offlineOracle, 0.9),
    extraRttMsMedian: quantileSorted(byCoord.extra, 0.5),
    extraRttMsP90: quantileSorted(byCoord.extra, 0.9),
    oracleExtraRttMsMedian: quantileSorted(m.sysOracle.extra, 0.5),
    oracleExtraRttMsP90: quantileSorted(m.sysOracle.extra, 0.9),
    hashStretchMedian: quantileSorted(byHash.stretch, 0.5),
    hashStretchP90: quantileSorted(byHash.stretch, 0.9),
    exactNearest: byCoord.exact / Math.max(1, byCoord.stretch.length),
    sameAsOracle: byCoord.asOracle / Math.max(1, byCoord.stretch.length),
    acceptP50Ms: quantileSorted(byCoord.latency, 0.5),
    acceptP99Ms: quantileSorted(byCoord.latency, 0.99),
    ...(unconfirmed !== undefined
      ? {
          unconfirmed: {
            stretchMedian: quantileSorted(unconfirmed.stretch, 0.5),
            stretchP90: quantileSorted(unconfirmed.stretch, 0.9),
            extraRttMsMedian: quantileSorted(unconfirmed.extra, 0.5),
            extraRttMsP90: quantileSorted(unconfirmed.extra, 0.9),
            sameAsOracle: unconfirmed.asOracle / Math.max(1, unconfirmed.stretch.length),
            acceptP50Ms: quantileSorted(unconfirmed.latency, 0.5),
            acceptP99Ms: quantileSorted(unconfirmed.latency, 0.99),
            failed: unconfirmed.failed,
            diagnosis: unconfirmed.diagnosis,
          },
        }
      : {}),
    diagnosis: { ...byCoord.diagnosis, coordMotionDuringRoutingMsMedian: quantileSorted(m.motion, 0.5), publishedMotionDuringRoutingMsMedian: quantileSorted(m.motionPub, 0.5), publishedChangesDuringRoutingMedian: quantileSorted(m.changesWhileRouting, 0.5), routerConfirmQueries: m.routerConfirmQueries },
    hashAcceptP50Ms: quantileSorted(byHash.latency, 0.5),
    failed: byCoord.failed,
    hashFailed: byHash.failed,
    liveMedianError: m.live,
    liveMedianErrorPublished: m.livePublished,
    appCoord: m.appCoord,
    offlineMedianError: m.offline,
    startSeconds: m.startSeconds,
    perProcess: opts.perProcess,
    coordIntervalMs: opts.coordInterval,
    peakRssSumMB: m.peakRssSumMB,
    childCpuSeconds: usage?.cpuSeconds,
    cpuPctPerNode: bill.cpuPctPerNode,
    settleActivityPerNodeMinute: bill.perNodeMinute,
    concurrency: opts.concurrency,
    seed: opts.seed,
    loadAverage: Number(((m.load0 + loadavg()[0]!) / 2).toFixed(2)),
    wallSeconds: (performance.now() - m.t0) / 1000,
  };
}

export type RoutingResult = ReturnType<typeof resultOf>;

/** The result as text, for a reader at the terminal. */
export function printText(result: RoutingResult): void {
  console.log(`stretch median ${result.stretchMedian.toFixed(3)} p90 ${result.stretchP90.toFixed(3)} (exact nearest ${(result.exactNearest * 100).toFixed(0)}%)`);
  console.log(`best possible from the Vivaldi (system) coordinates: stretch median ${result.oracleStretchMedian.toFixed(3)} p90 ${result.oracleStretchP90.toFixed(3)}`);
  console.log(`best possible from the published coordinates (what the router ranks): stretch median ${result.publishedOracleStretchMedian.toFixed(3)} p90 ${result.publishedOracleStretchP90.toFixed(3)}, extra RTT ${result.publishedOracleExtraRttMsMedian.toFixed(1)} / ${result.publishedOracleExtraRttMsP90.toFixed(1)} ms (same choice as ours ${(result.sameAsOracle * 100).toFixed(0)}%); live error ${result.liveMedianErrorPublished.toFixed(3)} (Vivaldi's ${result.liveMedianError.toFixed(3)})`);
  console.log(`best possible from converged (offline) coordinates: stretch median ${result.offlineOracleStretchMedian.toFixed(3)} p90 ${result.offlineOracleStretchP90.toFixed(3)}`);
  console.log(`extra RTT over the nearest crawler: median ${result.extraRttMsMedian.toFixed(1)} ms p90 ${result.extraRttMsP90.toFixed(1)} ms (best possible: ${result.oracleExtraRttMsMedian.toFixed(1)} / ${result.oracleExtraRttMsP90.toFixed(1)} ms)`);
  if (result.unconfirmed !== undefined) {
    const u = result.unconfirmed;
    console.log(`beside it, unconfirmed (ranking on the copies as they are): stretch median ${u.stretchMedian.toFixed(3)} p90 ${u.stretchP90.toFixed(3)} (same choice as the oracle ${(u.sameAsOracle * 100).toFixed(0)}%), extra RTT ${u.extraRttMsMedian.toFixed(1)} / ${u.extraRttMsP90.toFixed(1)} ms, accept p50 ${u.acceptP50Ms.toFixed(1)} ms p99 ${u.acceptP99Ms.toFixed(1)} ms`);
  }
  console.log(`hash routing stretch median ${result.hashStretchMedian.toFixed(3)} p90 ${result.hashStretchP90.toFixed(3)}`);
  const d = result.diagnosis;
  console.log(`choices unlike the oracle's: ${d.missed} not among the candidates, ${d.staleRank} ranked lower (stale coordinates), ${d.retried} after a refusal; candidates median ${d.candidatesMedian} (p10 ${d.candidatesP10}), finest level found ${JSON.stringify(d.levels)}`);
  console.log(`  by class (routes, RTT given up in ms, stretch p90 had they gone to the oracle's crawler): ${Object.entries(d.unlikeOracle).map(([k, v]) => `${k} ${v.routes} / ${v.extraMsSum} / ${v.stretchP90IfOracle?.toFixed(2)}`).join('; ')}; the manager's coordinate copies (ranked lower) lie a median ${d.managerCopyDriftMsMedian.toFixed(1)} ms from the live ones`);
  console.log(`routes that waited for a DHT lookup: ${d.routesThatFetched} (accept p50 ${d.fetchedAcceptP50Ms.toFixed(1)} ms p99 ${d.fetchedAcceptP99Ms.toFixed(1)} ms); from cache p50 ${d.cachedAcceptP50Ms.toFixed(1)} ms p99 ${d.cachedAcceptP99Ms.toFixed(1)} ms`);
  console.log(`submit-to-accept p50 ${result.acceptP50Ms.toFixed(1)} ms p99 ${result.acceptP99Ms.toFixed(1)} ms (concurrency ${result.concurrency})`);
  console.log(`peak RSS summed over processes ${result.peakRssSumMB.toFixed(0)} MB; ${result.nodes} nodes in ${result.processes} process(es); whole run ${result.wallSeconds.toFixed(0)} s (load average ${result.loadAverage})`);
}
