// Keeps a volunteer in the overlay when its connections or the crawlers it
// knows fall low — re-bootstrapping, as a Kademlia node refreshes its buckets.
// With the connection count bounded, a node can lose every connection (its
// peers trimmed theirs to it) and, after a few failed probes under load, every
// crawler it knew (each failure marks a peer down): nothing would then make it
// dial out again, and it stays isolated with an empty neighbour set. So, every
// few seconds: if live crawlers known are below `minCrawlers` or connections
// below `minConnections`, it dials the bootstrap peers (when it has no
// connection or knows no live crawler), then asks crawlers it knew but marked down and peers in the
// peer store for their coordinate (an info query: it dials, and an answer
// marks the peer live again so the neighbour set can take it back). A refill
// that finds nothing new backs off (doubling, up to `maxBackoffMs`), so a small
// network whose every peer is already known costs nothing.
import type { Logger } from 'pino';
import type { Libp2p } from '@libp2p/interface';
import type { Multiaddr } from '@multiformats/multiaddr';
import type { Rng } from '../rng.js';
import type { PeerTable } from './peers.js';
import { BackoffLoop } from './backoff-loop.js';

export interface PeerKeeperOptions {
  libp2p: Libp2p;
  peers: PeerTable;
  /** Asks a peer for its coordinate and load (CoordService.info): dials it and records the answer. */
  info: (peer: string) => Promise<unknown>;
  /** Where to start over from (the join's bootstrap addresses). */
  bootstrap: Multiaddr[];
  /** Refill below this many connections. */
  minConnections: number;
  /** Refill below this many live crawlers known (with a coordinate). */
  minCrawlers: number;
  /** Peers asked per refill at most. */
  perRound?: number;
  /** Gap between checks, ms. */
  checkMs?: number;
  /** Longest gap after refills that found nothing new, ms. */
  maxBackoffMs?: number;
  dialTimeoutMs?: number;
  rng: Rng;
  log?: Logger;
}

export class PeerKeeper {
  private readonly loop: BackoffLoop;
  /** Refills started (a figure for tests and status). */
  refills = 0;
  /** Peers brought back or met by refills. */
  regained = 0;

  constructor(private readonly o: PeerKeeperOptions) {
    this.loop = new BackoffLoop(() => this.check(), o.checkMs ?? 5_000, o.maxBackoffMs ?? 60_000);
  }

  start(): void {
    this.loop.start();
  }

  stop(): void {
    this.loop.stop();
  }

  /** Whether the node is short of connections or of known crawlers. */
  short(): boolean {
    return this.o.libp2p.getConnections().length < this.o.minConnections || this.o.peers.crawlers().length < this.o.minCrawlers;
  }

  /** True when the node is not short or a refill met someone. */
  private async check(): Promise<boolean> {
    if (!this.short()) return true;
    try {
      return (await this.refill()) > 0;
    } catch (err) {
      this.o.log?.debug({ err: String(err) }, 'refill failed');
      return false;
    }
  }

  /** One refill; returns how many peers answered. */
  async refill(): Promise<number> {
    this.refills++;
    const self = this.o.libp2p.peerId.toString();
    const conns = this.o.libp2p.getConnections().length;
    if (conns === 0 || this.o.peers.crawlers().length === 0) {
      // Cut off: the bootstrap peers first (they also bring kad-dht's routing
      // table back). Not sooner: every node short of peers re-dialling the
      // bootstrap peers every few seconds would bury them in handshakes.
      await Promise.all(
        this.o.bootstrap.map((ma) =>
          this.o.libp2p.dial(ma, { signal: AbortSignal.timeout(this.o.dialTimeoutMs ?? 15_000) }).catch((err: unknown) => {
            this.o.log?.debug({ addr: ma.toString(), err: String(err) }, 'bootstrap re-dial failed');
          }),
        ),
      );
    }
    // Crawlers we knew but marked down, then peers the peer store knows how to reach.
    const live = new Set(this.o.peers.crawlers().map((p) => p.id));
    const down = this.o.peers.all().filter((p) => p.crawler && (p.down || p.coord === undefined)).map((p) => p.id);
    const stored = (await this.o.libp2p.peerStore.all({ filters: [(p) => p.addresses.length > 0] })).map((p) => p.id.toString());
    const pool = [...new Set([...shuffle(down, this.o.rng), ...shuffle(stored, this.o.rng)])].filter(
      (id) => id !== self && !live.has(id) && this.o.peers.get(id)?.crawler !== false,
    );
    const want = Math.min(this.o.perRound ?? 4, pool.length);
    let gained = 0;
    await Promise.all(
      pool.slice(0, want).map(async (id) => {
        try {
          await this.o.info(id);
          gained++;
        } catch {
          // still gone (CoordService marked it down again)
        }
      }),
    );
    this.regained += gained;
    this.o.log?.debug({ connections: conns, crawlers: live.size, asked: want, gained }, 'refilled peers');
    return gained + (this.o.libp2p.getConnections().length > conns ? 1 : 0);
  }
}

function shuffle<T>(xs: T[], rng: Rng): T[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}
