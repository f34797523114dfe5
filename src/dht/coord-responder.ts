// The answering side of the coordinate protocol (coord-wire.ts): reads a
// peer's probe, info or bye, notes what it says of itself, and replies with
// this node's coordinate, load and turnaround. Apart from the probing side
// (coord-protocol.ts) because it keeps none of its state — only its own rate
// limit, the record of who probed us lately, and the imposed delays to abort
// on stop.
//
// The responder may hold its reply to a probe for `probeDelay(remotePeer)` ms:
// the test network uses this hook to impose a latency matrix on loopback.
import type { Logger } from 'pino';
import type { Connection, Stream } from '@libp2p/interface';
import { COORD_MAX_BYTES, requestSchema } from './coord-wire.js';
import type { LagSource } from './process-lag.js';
import { fromWireCoord, type Load, type PeerTable } from './peers.js';
import type { WireCoord } from './signing.js';
import { PeerRateLimiter } from './rate-limit.js';
import { sleep, unboundedController } from './sleep.js';
import { jsonChannel } from './wire.js';

export interface CoordResponderOptions {
  peers: PeerTable;
  crawler: boolean;
  load?: () => Load;
  /** The coordinate this node publishes, as sent. */
  coord: () => WireCoord | undefined;
  /** Vivaldi's own coordinate, when it differs from the published one. */
  sys: () => WireCoord | undefined;
  probeDelay?: (remote: string) => number;
  timeoutMs?: number;
  lag?: LagSource;
  log?: Logger;
}

export class CoordResponder {
  private readonly o: CoordResponderOptions;
  private readonly limiter = new PeerRateLimiter({ perSecond: 50, burst: 100 });
  /** Aborts the imposed probe delays on stop. Every delayed reply in progress
   * listens on it, so it may have many listeners at once by design. */
  private readonly closing = unboundedController();
  /** When each peer last probed us (their neighbour sets hold us), performance.now(). */
  private readonly probers = new Map<string, number>();

  constructor(o: CoordResponderOptions) {
    this.o = o;
  }

  /** Whether `peer` probed this node within the last `ms`. */
  probedWithin(peer: string, ms: number): boolean {
    const at = this.probers.get(peer);
    return at !== undefined && performance.now() - at <= ms;
  }

  /** Cuts short every imposed delay in progress (the service is stopping). */
  close(): void {
    this.closing.abort();
  }

  async handle(stream: Stream, conn: Connection): Promise<void> {
    const remote = conn.remotePeer.toString();
    if (!this.limiter.take(remote)) {
      stream.abort(new Error('rate limited'));
      return;
    }
    const ch = jsonChannel(stream, COORD_MAX_BYTES, this.o.timeoutMs ?? 10_000);
    try {
      const req = requestSchema.parse(await ch.read());
      const tIn = performance.now();
      let imposed = 0;
      if (req.t === 'bye') {
        this.o.peers.markDown(remote);
      } else {
        this.o.peers.note(remote, {
          coord: req.coord !== undefined ? fromWireCoord(req.coord) : undefined,
          load: req.load,
          crawler: req.crawler ?? false,
        });
      }
      if (req.t === 'probe') {
        this.probers.delete(remote);
        this.probers.set(remote, performance.now());
        if (this.probers.size > 4096) this.probers.delete(this.probers.keys().next().value!);
      }
      if (req.t === 'probe' && this.o.probeDelay !== undefined) {
        const ms = this.o.probeDelay(remote);
        if (ms > 0) await sleep(ms, this.closing.signal);
        imposed = ms;
      }
      const turnaroundMs = Math.max(0, performance.now() - tIn - imposed);
      // A stall going on when the request arrived delayed its read (later ones are in the turnaround).
      const stallMs = this.o.lag !== undefined && req.t === 'probe' ? this.o.lag.lag.stallAt(tIn) : undefined;
      const sys = req.t === 'probe' ? this.o.sys() : undefined;
      await ch.write({ coord: this.o.coord(), ...(sys !== undefined ? { sys } : {}), load: this.o.load?.(), crawler: this.o.crawler, turnaroundMs, ...(stallMs !== undefined && stallMs > 0 ? { stallMs: Math.min(60_000, stallMs) } : {}) });
      await ch.close();
    } catch (err) {
      this.o.log?.debug({ peer: remote, err: String(err) }, 'bad coordinate request');
      ch.abort('bad request');
    }
  }
}
