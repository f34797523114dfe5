// Holds a volunteer's connection count at a soft bound without refusing
// newcomers. libp2p's own bound (`maxConnections`) is hard: at the bound it
// refuses every inbound connection, so a node whose connections are full can no
// longer be anyone's bootstrap peer, and a network of nodes at their bound
// turns joiners away (a joiner dialling one saw ECONNRESET). So libp2p gets
// headroom above the soft bound, and this trims back to the soft bound
// periodically, as go-libp2p's connection manager does with its low and high
// watermarks: connections younger than a grace period are left alone (a
// joiner's bootstrap connection has time for its DHT self-query).
//
// Which go first. Peers that depend on this node are spared outright: the
// manager link, relays (ours, tagged keep-alive by the relay transport, and
// peers holding a reservation on us), and any peer with an open task, upload,
// archive or hole-punch stream (a task in flight). Among the rest the least
// valuable close first — lowest summed peer-store tag value (our neighbours
// and kad-dht's closest peers are tagged) plus what `value` adds (peers whose
// neighbour sets hold us: they probe us), then fewest open streams, then
// newest — the order libp2p's pruner uses.
//
// kad-dht also tags its 20 closest peers keep-alive, and libp2p re-dials a
// keep-alive peer the moment its connection closes: every trim of one was
// undone at once (on a network of fewer than ~30 nodes every peer is among
// everyone's 20 closest, so no bound could hold). The DHT does not need those
// connections kept open (it dials on demand), so a node drops kad-dht's
// keep-alive tag as soon as it is set; kad-dht's `kad-close` value still
// ranks those peers above strangers.
import type { Connection, Libp2p, PeerId, PeerUpdate } from '@libp2p/interface';
import { KEEP_ALIVE } from '@libp2p/interface';
import type { Logger } from 'pino';

/** kad-dht's keep-alive tag on its closest peers (@libp2p/kad-dht constants). */
export const KAD_KEEP_ALIVE_TAG = `${KEEP_ALIVE}-kad-dht`;
/** The circuit-relay server's tag on peers holding a reservation with us. */
const RELAY_SOURCE_TAG = 'circuit-relay-source';

export interface ConnectionTrimOptions {
  libp2p: Libp2p;
  /** Connections kept after a trim. */
  softMax: number;
  /** Connections younger than this are never trimmed, ms. */
  graceMs?: number;
  /** How often the count is checked, ms. */
  checkMs?: number;
  /** Peers never trimmed (the manager). */
  spare?: (peer: string) => boolean;
  /** Streams on these protocols mark a connection in use (tasks in flight): never trimmed. */
  busyProtocols?: string[];
  /** Value added to a peer's tags (peers whose neighbour sets hold us). */
  value?: (peer: string) => number;
  log?: Logger;
}

export class ConnectionTrimmer {
  private timer: ReturnType<typeof setInterval> | undefined;
  private busy = false;
  /** Connections closed so far (a figure for tests and benchmarks). */
  trimmed = 0;
  /** Of those, connections to peers worth more than kad-dht's routing-table tag (1): neighbours, peers that
   * probe us, kad-dht's closest peers. Many of them mean the bound is tight for what the node wants kept. */
  trimmedValued = 0;

  constructor(private readonly o: ConnectionTrimOptions) {}

  start(): void {
    this.timer = setInterval(() => void this.trim(), this.o.checkMs ?? 5_000);
    this.timer.unref?.();
    this.o.libp2p.addEventListener('peer:update', this.onPeerUpdate);
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.o.libp2p.removeEventListener('peer:update', this.onPeerUpdate);
  }

  private readonly onPeerUpdate = (evt: CustomEvent<PeerUpdate>): void => {
    const { peer } = evt.detail;
    if (!peer.tags.has(KAD_KEEP_ALIVE_TAG)) return;
    this.o.libp2p.peerStore.merge(peer.id, { tags: { [KAD_KEEP_ALIVE_TAG]: undefined } }).catch(() => undefined);
  };

  /** Closes connections beyond the soft bound (outside their grace period and not spared). */
  async trim(): Promise<number> {
    if (this.busy) return 0;
    let conns = this.o.libp2p.getConnections();
    if (conns.length <= this.o.softMax) return 0;
    this.busy = true;
    try {
      // Two peers dialling each other at once end up with two connections;
      // the spare one (fewest streams, newest) goes first, whatever its age.
      const dup = duplicates(conns).filter((c) => !this.inUse(c));
      await Promise.all(dup.map((c) => this.close(c)));
      if (dup.length > 0) conns = this.o.libp2p.getConnections();
      const excess = conns.length - this.o.softMax;
      let closed = dup.length;
      if (excess > 0) {
        const now = Date.now();
        const grace = this.o.graceMs ?? 30_000;
        const value = new Map<string, number>();
        const candidates: Connection[] = [];
        for (const c of conns) {
          if (now - c.timeline.open < grace || this.inUse(c)) continue;
          const id = c.remotePeer.toString();
          if (this.o.spare?.(id) === true) continue;
          if (!value.has(id)) value.set(id, await this.tagValue(c.remotePeer));
          if (value.get(id)! === Infinity) continue;
          candidates.push(c);
        }
        const order = candidates.sort(
          (a, b) =>
            value.get(a.remotePeer.toString())! - value.get(b.remotePeer.toString())! ||
            a.streams.length - b.streams.length ||
            b.timeline.open - a.timeline.open,
        );
        const close = order.slice(0, excess);
        this.trimmedValued += close.filter((c) => value.get(c.remotePeer.toString())! > 1).length;
        await Promise.all(close.map((c) => this.close(c)));
        closed += close.length;
      }
      this.trimmed += closed;
      if (closed > 0) this.o.log?.debug({ closed, duplicates: dup.length, connections: conns.length, softMax: this.o.softMax }, 'connections trimmed');
      return closed;
    } finally {
      this.busy = false;
    }
  }

  private inUse(c: Connection): boolean {
    const busy = this.o.busyProtocols ?? [];
    return busy.length > 0 && c.streams.some((s) => busy.some((p) => s.protocol?.startsWith(p) === true));
  }

  /** Summed tag value plus `value`; Infinity for a relay (ours or a peer reserved on us). */
  private async tagValue(peer: PeerId): Promise<number> {
    let v = this.o.value?.(peer.toString()) ?? 0;
    try {
      const p = await this.o.libp2p.peerStore.get(peer);
      for (const [name, t] of p.tags) {
        if ((name.startsWith(KEEP_ALIVE) && name !== KAD_KEEP_ALIVE_TAG) || name === RELAY_SOURCE_TAG) return Infinity;
        v += t.value;
      }
    } catch {
      // not in the peer store: no tags
    }
    return v;
  }

  private async close(c: Connection): Promise<void> {
    await c.close({ signal: AbortSignal.timeout(1_000) }).catch(() => c.abort(new Error('connection trimmed')));
  }
}

/** Every connection but one to each peer: the one kept has the most streams (then is the oldest). */
function duplicates(conns: Connection[]): Connection[] {
  const byPeer = new Map<string, Connection[]>();
  for (const c of conns) {
    const id = c.remotePeer.toString();
    const list = byPeer.get(id);
    if (list === undefined) byPeer.set(id, [c]);
    else list.push(c);
  }
  const out: Connection[] = [];
  for (const list of byPeer.values()) {
    if (list.length < 2) continue;
    list.sort((a, b) => b.streams.length - a.streams.length || a.timeline.open - b.timeline.open);
    out.push(...list.slice(1));
  }
  return out;
}
