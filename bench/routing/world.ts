// bench:routing's network: N real libp2p volunteers on loopback (TestNet, or
// ProcessNet with k to a child process) with an unlimited no-op runner, the
// product's provider-record lifetime, and what the children cost while the
// coordinates settle. Apart from the run so that the measurement does not mix
// with how the network is started and billed.
import { loadavg } from 'node:os';
import { quantileSorted, type AppCoordOptions } from '../../src/coords/index.js';
import { DEFAULT_PROVIDER_TTL_MS } from '../../src/dht/announce.js';
import { TestNet } from '../../testbed/net/harness.js';
import { ProcessNet } from '../../testbed/net/process-net.js';
import type { RoutingBenchOptions, Say } from './options.js';

export type BenchNet = TestNet | ProcessNet;

/** How long the manager's router keeps a cell's answer (the twin router of --ab-unconfirmed gets the same). */
export const ROUTER_CACHE_TTL_MS = 60_000;

/** Starts the network; on failure prints why (with the load) and ends the process with exit code 1. */
export async function startNet(opts: RoutingBenchOptions, appCoord: AppCoordOptions, say: Say): Promise<{ net: BenchNet; t0: number; load0: number; startSeconds: number }> {
  const netOptions = {
    nodes: opts.nodes,
    seed: opts.seed,
    runner: { unlimited: true },
    coordIntervalMs: opts.coordInterval,
    coordFanout: 2,
    appCoord,
    routerCacheTtlMs: ROUTER_CACHE_TTL_MS,
    taskRateLimit: { perSecond: 100_000, burst: 100_000 },
    // The product's provider-record lifetime (the test network's default is
    // shorter, for tests of departures): re-provides are most of the DHT's bill.
    providerTtlMs: DEFAULT_PROVIDER_TTL_MS,
    ...(opts.confirmTop !== undefined ? { routerConfirmTop: opts.confirmTop } : {}),
  };
  const t0 = performance.now();
  let lastJoinNote = 0;
  const onJoined = (joined: number, total: number) => {
    const now = performance.now();
    if (joined === total || now - lastJoinNote >= 15_000) {
      lastJoinNote = now;
      say(`  ${joined}/${total} nodes joined in ${((now - t0) / 1000).toFixed(0)} s (load ${loadavg()[0]!.toFixed(1)})`);
    }
  };
  const net = opts.perProcess > 0 ? new ProcessNet({ ...netOptions, perProcess: opts.perProcess, startConcurrency: opts.startConcurrency, onJoined }) : new TestNet(netOptions);
  const load0 = loadavg()[0]!;
  try {
    await net.start();
  } catch (err) {
    console.error(`bench:routing: the network did not start after ${((performance.now() - t0) / 1000).toFixed(0)} s (load average ${loadavg()[0]!.toFixed(1)}): ${(err as Error).message}`);
    await net.stop().catch(() => undefined);
    process.exit(1);
  }
  const startSeconds = (performance.now() - t0) / 1000;
  say(`started ${opts.nodes} nodes (${opts.perProcess > 0 ? `${opts.perProcess} per child process` : 'all in this process'}) in ${startSeconds.toFixed(1)} s${lagNote(net)}`);
  return { net, t0, load0, startSeconds };
}

/** The children's event-loop lag: queueing that inflates the probes they answer ('' in one process). */
export function lagNote(net: BenchNet): string {
  if (!(net instanceof ProcessNet)) return '';
  const u = net.usage();
  const lag = u.lagP99Ms.sort((x, y) => x - y);
  return `, loop lag p99 ${quantileSorted(lag, 0.5).toFixed(0)} ms (worst process ${lag[lag.length - 1]!.toFixed(0)} ms), children's CPU ${u.cpuSeconds.toFixed(0)} s`;
}

export interface SettleBill {
  cpuPctPerNode?: number;
  perNodeMinute?: Record<string, number>;
}

/**
 * The children's CPU and activity from now on, while the coordinates settle
 * (no tasks yet): the bill of an idle-ish network, per node (activity.ts).
 * Returns what reads the bill; empty in one process.
 */
export function markSettle(net: BenchNet, nodes: number): () => SettleBill {
  const mark = { at: performance.now(), usage: net instanceof ProcessNet ? net.usage() : undefined };
  return () => {
    if (!(net instanceof ProcessNet) || mark.usage === undefined) return {};
    const u = net.usage();
    const minutes = (performance.now() - mark.at) / 60_000;
    const perNodeMinute: Record<string, number> = {};
    for (const [k, v] of Object.entries(u.activity)) {
      if (k.startsWith('now: ')) {
        perNodeMinute[k] = Number((v / nodes).toFixed(2));
        continue;
      }
      const d = (v - (mark.usage.activity[k] ?? 0)) / nodes / Math.max(1e-9, minutes);
      if (d > 0) perNodeMinute[k] = Number(d.toFixed(2));
    }
    return { cpuPctPerNode: (100 * (u.cpuSeconds - mark.usage.cpuSeconds)) / (minutes * 60) / nodes, perNodeMinute };
  };
}
