// What the test network's nodes spend their time on, counted: connections
// upgraded (each a Noise handshake) and streams opened per protocol and
// direction, through libp2p's metrics hook (src/dht/traffic.ts's hook with the
// two tracking calls replaced), plus each node's own counters (probes,
// announcements, trims, refills). bench:routing prints them per node and
// minute, so the CPU bill of an idle-ish network can be split by activity.
import type { Metrics, MultiaddrConnection, Stream } from '@libp2p/interface';
import { Libp2pTraffic } from '../../src/dht/traffic.js';
import type { VolunteerNode } from '../../src/node/node.js';

export type Activity = Record<string, number>;

export class ActivityCounter {
  readonly counts: Activity = {};
  private readonly traffic = new Libp2pTraffic();

  /** libp2p's `metrics` option: counts connections and streams, nothing else. */
  readonly metrics = (): Metrics => ({
    ...this.traffic.metrics(),
    trackMultiaddrConnection: (c: MultiaddrConnection) => this.add(`tcp connections ${c.direction}`),
    trackProtocolStream: (s: Stream) => this.add(`${s.protocol ?? '?'} ${s.direction}`),
  });

  /** Counts upgraded (encrypted, muxed) connections of `node` as they open and close. */
  watch(node: VolunteerNode): void {
    node.libp2p.addEventListener('connection:open', () => this.add('connections upgraded'));
    node.libp2p.addEventListener('connection:close', () => this.add('connections closed'));
  }

  add(key: string, n = 1): void {
    this.counts[key] = (this.counts[key] ?? 0) + n;
  }
}

/** The node's own counters, as activity. */
export function nodeActivity(n: VolunteerNode): Activity {
  return {
    'probes ok': n.coords.probesOk,
    'probes failed': n.coords.probesFailed,
    'cell announcements': n.announcer.announcements,
    'connections trimmed': n.trimmer.trimmed,
    'keeper refills': n.keeper.refills,
    // A gauge, not a count: bench:routing averages it instead of taking a rate.
    'now: open connections': n.libp2p.getConnections().length,
  };
}

/** Sums activities key by key. */
export function sumActivity(xs: Activity[]): Activity {
  const out: Activity = {};
  for (const x of xs) for (const [k, v] of Object.entries(x)) out[k] = (out[k] ?? 0) + v;
  return out;
}
