// Holds a volunteer's connection count at a soft bound without refusing
// newcomers. libp2p's own bound (`maxConnections`) is hard: at the bound it
// refuses every inbound connection, so a node whose connections are full can no
// longer be anyone's bootstrap peer, and a network of nodes at their bound
// turns joiners away (a joiner dialling one saw ECONNRESET). So libp2p gets
// headroom above the soft bound, and this trims back to the soft bound
// periodically, as go-libp2p's connection manager does with its low and high
// watermarks: connections younger than a grace period are left alone (a
// joiner's bootstrap connection has time for its DHT self-query), and among
// the rest those to the least valuable peers close first — lowest summed
// peer-store tag value (neighbours and kad-dht's closest peers are tagged),
// then fewest open streams, then newest — the order libp2p's pruner uses.
// Open question (test/node/bounds.test.ts, skipped): with the bound binding,
// a node nobody keeps can lose every connection and stay isolated.
import type { Connection, Libp2p, PeerId } from '@libp2p/interface';
import type { Logger } from 'pino';

export interface ConnectionTrimOptions {
  libp2p: Libp2p;
  /** Connections kept after a trim. */
  softMax: number;
  /** Connections younger than this are never trimmed, ms. */
  graceMs?: number;
  /** How often the count is checked, ms. */
  checkMs?: number;
  log?: Logger;
}

export class ConnectionTrimmer {
  private timer: ReturnType<typeof setInterval> | undefined;
  private busy = false;
  /** Connections closed so far (a figure for tests and benchmarks). */
  trimmed = 0;

  constructor(private readonly o: ConnectionTrimOptions) {}

  start(): void {
    this.timer = setInterval(() => void this.trim(), this.o.checkMs ?? 5_000);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Closes connections beyond the soft bound (outside their grace period). */
  async trim(): Promise<number> {
    if (this.busy) return 0;
    const conns = this.o.libp2p.getConnections();
    const excess = conns.length - this.o.softMax;
    if (excess <= 0) return 0;
    this.busy = true;
    try {
      const now = Date.now();
      const grace = this.o.graceMs ?? 30_000;
      const old = conns.filter((c) => now - c.timeline.open >= grace);
      const value = new Map<string, number>();
      for (const c of old) {
        const id = c.remotePeer.toString();
        if (!value.has(id)) value.set(id, await this.tagValue(c.remotePeer));
      }
      const order = old.sort(
        (a, b) =>
          value.get(a.remotePeer.toString())! - value.get(b.remotePeer.toString())! ||
          a.streams.length - b.streams.length ||
          b.timeline.open - a.timeline.open,
      );
      const close = order.slice(0, excess);
      await Promise.all(close.map((c) => this.close(c)));
      this.trimmed += close.length;
      if (close.length > 0) this.o.log?.debug({ closed: close.length, connections: conns.length, softMax: this.o.softMax }, 'connections trimmed');
      return close.length;
    } finally {
      this.busy = false;
    }
  }

  private async tagValue(peer: PeerId): Promise<number> {
    try {
      const p = await this.o.libp2p.peerStore.get(peer);
      let v = 0;
      for (const t of p.tags.values()) v += t.value;
      return v;
    } catch {
      return 0;
    }
  }

  private async close(c: Connection): Promise<void> {
    await c.close({ signal: AbortSignal.timeout(1_000) }).catch(() => c.abort(new Error('connection trimmed')));
  }
}
