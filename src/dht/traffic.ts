// What the libp2p stack moves on the wire, as the operating system counts it:
// the TCP sockets' own bytesRead/bytesWritten under every connection libp2p
// upgrades (Noise handshake and framing, yamux headers, identify, ping, the
// DHT, coordinate probes, cell announcements, the manager link, result
// uploads). libp2p hands each raw connection to its `metrics` hook
// (upgrader: trackMultiaddrConnection) before the upgrade; @libp2p/tcp's
// connection keeps its net.Socket as `socket`, which is all this reads. A
// relayed (circuit) connection has no socket of its own: its bytes are
// counted on the TCP connection to the relay that carries them. Nothing else
// of libp2p's metrics is kept (every other register* returns a no-op).
//
// Cheap on an idle node: no per-message work; `take()` sums the live sockets'
// counters when the owner's tick asks (every few seconds) and returns what
// moved since the last call, so the ledger is written in batches.
import type { Socket } from 'node:net';
import type { Metrics, MultiaddrConnection } from '@libp2p/interface';

const noop = (): void => undefined;
const metric = { update: noop, increment: noop, decrement: noop, reset: noop, timer: () => noop, observe: noop };

export class Libp2pTraffic {
  private readonly live = new Map<Socket, { read: number; written: number }>();
  /** Bytes of closed sockets (and of live ones up to their last `take`) not yet taken. */
  private pending = { read: 0, written: 0 };
  /** Everything counted since start. */
  readonly total = { read: 0, written: 0 };

  /** libp2p's `metrics` option. */
  readonly metrics = (): Metrics => {
    const register = ((_name: string, opts?: { calculate?: unknown }) => (opts?.calculate !== undefined ? undefined : metric)) as never;
    return {
      trackMultiaddrConnection: (maConn: MultiaddrConnection) => this.track(maConn),
      trackProtocolStream: noop,
      registerMetric: register,
      registerMetricGroup: register,
      registerCounter: register,
      registerCounterGroup: register,
      registerHistogram: register,
      registerHistogramGroup: register,
      registerSummary: register,
      registerSummaryGroup: register,
      traceFunction: ((_name: string, fn: unknown) => fn) as never,
      createTrace: () => undefined,
    };
  };

  private track(maConn: MultiaddrConnection): void {
    const s = (maConn as unknown as { socket?: unknown }).socket;
    if (!isSocket(s) || this.live.has(s)) return;
    // From zero: bytes moved before the hook saw the socket (none for TCP: it runs before the upgrade's first byte) count too.
    this.live.set(s, { read: 0, written: 0 });
    s.once('close', () => {
      const seen = this.live.get(s);
      if (seen === undefined) return;
      this.live.delete(s);
      this.add(s.bytesRead - seen.read, s.bytesWritten - seen.written);
    });
  }

  private add(read: number, written: number): void {
    this.pending.read += read;
    this.pending.written += written;
    this.total.read += read;
    this.total.written += written;
  }

  /** Bytes down (read) and up (written) since the last call. */
  take(): { read: number; written: number } {
    for (const [s, seen] of this.live) {
      const r = s.bytesRead;
      const w = s.bytesWritten;
      this.add(r - seen.read, w - seen.written);
      seen.read = r;
      seen.written = w;
    }
    const out = this.pending;
    this.pending = { read: 0, written: 0 };
    return out;
  }

  /** Open sockets counted. */
  get connections(): number {
    return this.live.size;
  }
}

function isSocket(s: unknown): s is Socket {
  return typeof s === 'object' && s !== null && typeof (s as Socket).bytesRead === 'number' && typeof (s as Socket).once === 'function';
}
