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
  readonly metrics = (): Metrics => {
    const base = this.traffic.metrics();
    // The upgrader's failures by direction and error name: why a TCP
    // connection never became a libp2p connection.
    const failures: Record<string, string> = {
      libp2p_connection_manager_dials_inbound_errors_total: 'upgrade failed inbound',
      libp2p_connection_manager_dials_outbound_errors_total: 'upgrade failed outbound',
    };
    // kad-dht's own counters: what its routing table does with new contacts
    // (each verified with a ping) and which requests it sends (each to a peer
    // it may have to dial first).
    const kad: [string, string][] = [
      ['_kad_bucket_events_total', 'kad bucket'],
      ['_outbound_rpc_requests_total', 'kad rpc out'],
      ['_operations_total', 'kad operation'],
    ];
    const labelOf = (name: string): string | undefined => failures[name] ?? (name.includes('kad_dht') ? kad.find(([suffix]) => name.endsWith(suffix))?.[1] : undefined);
    const counting = (label: string) => ({ increment: (v: Record<string, unknown>) => Object.keys(v).forEach((k) => this.add(`${label}: ${k}`)), update: () => undefined, reset: () => undefined, decrement: () => undefined, timer: () => () => undefined });
    const group = ((name: string, o?: never) => {
      const label = labelOf(name);
      if (label === undefined) return (base.registerCounterGroup as (n: string, o?: never) => unknown)(name, o);
      return counting(label);
    }) as Metrics['registerCounterGroup'];
    const metricGroup = ((name: string, o?: never) => {
      const label = labelOf(name);
      if (label === undefined) return (base.registerMetricGroup as (n: string, o?: never) => unknown)(name, o);
      return counting(label);
    }) as Metrics['registerMetricGroup'];
    return {
      ...base,
      registerCounterGroup: group,
      registerMetricGroup: metricGroup,
      trackMultiaddrConnection: (c: MultiaddrConnection) => {
        this.add(`tcp connections ${c.direction}`);
        if (process.env.VOLCRAWL_ABORT_REASONS !== undefined) this.abortReasons(c);
      },
      trackProtocolStream: (s: Stream) => this.add(`${s.protocol ?? '?'} ${s.direction}`),
    };
  };

  /** Diagnosis (VOLCRAWL_ABORT_REASONS set): counts why raw connections were
   * aborted, by the first error's name and message, before or after their upgrade. */
  private abortReasons(c: MultiaddrConnection): void {
    const abort = c.abort.bind(c);
    let seen = false;
    c.abort = (err: Error) => {
      if (!seen) {
        seen = true;
        this.add(`aborted ${c.direction}: ${err?.name ?? '?'} ${String(err?.message ?? '').slice(0, 70)}`);
      }
      abort(err);
    };
  }

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
    'probes spoiled (loop stall)': n.coords.probesSpoiled,
    'probes spoiled by the responder': n.coords.probesSpoiledRemote,
    'probes that dialled': n.coords.probeDials,
    'info queries that dialled': n.coords.infoDials,
    'neighbours added': n.coords.neighboursAdded,
    'neighbours removed': n.coords.neighboursRemoved,
    'connections trimmed with value': n.trimmer.trimmedValued,
    'accepted samples': n.coords.samples,
    'cell announcements': n.announcer.announcements,
    'cell density counts': n.announcer.densityChecks,
    // A gauge: cell levels announced (1: the coarsest only; announce.ts).
    'now: cell levels announced': n.announcer.levelsAnnounced,
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
