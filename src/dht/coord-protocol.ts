// The coordinate protocol's probing side, /volcrawl/coord/1.0.0: whom to
// probe and when, the requests, and the Vivaldi updates their replies feed.
// The wire format is coord-wire.ts, the answering side coord-responder.ts, the
// per-peer RTT minimum rtt-window.ts, the process's stall tracker
// process-lag.ts; this module re-exports what its importers used from it.
//
// `coord` is the coordinate the node publishes (src/coords/app-coord.ts: it
// changes only when Vivaldi's own coordinate has really moved, so routers,
// hosts placed from it and cell announcements do not chase Vivaldi's jitter);
// peers store it, route on it and check it against the RTTs they measure. A
// probe reply also carries `sys`, the Vivaldi coordinate itself, when it
// differs: the prober's Vivaldi step needs where the responder's Vivaldi is
// now (Ledlie et al. 2007 keep the system-level coordinate for updates).
//
// A `probe` is timed by the caller (write → reply) and feeds Vivaldi with the
// RTT and the remote's coordinate and error; both sides also learn each other's
// load. An `info` asks for coordinate and load without measuring. A `bye` says
// the sender is leaving: the receiver stops routing to it at once instead of
// waiting for its provider records to expire.
//
// Whom and how often a crawler probes: a bounded neighbour set (neighbours.ts:
// its nearest crawlers plus a few random ones, rotated slowly) at a pace that
// adapts to its own Vivaldi error (src/coords/adaptive.ts: fast while samples
// disagree with the coordinates, backing off to tens of seconds while they
// agree). Neighbours are tagged in
// the peer store so the connection manager keeps their connections when it
// prunes down to its bound.
//
// Samples taken while either side's event loop was stalled are dropped
// (src/coords/loop-lag.ts): the responder says how long its loop had been
// stalled when it read the request (`stallMs`), the caller checks its own
// loop when it read the reply; a spoiled sample neither feeds Vivaldi nor counts toward
// the pace, and while this process's loop stalls lately the pace stays at its
// busy gap, one probe a round (a busy PC measures less, and a loaded test
// network no longer speeds its probing up on its own noise).
import type { Logger } from 'pino';
import type { IdentifyResult, Libp2p, PeerId, Stream, Connection } from '@libp2p/interface';
import { peerIdFromString } from '@libp2p/peer-id';
import type { VivaldiNode, AdaptiveProbeOptions, AppCoordinate, Coordinate } from '../coords/index.js';
import type { Rng } from '../rng.js';
import { AdaptiveProbing, predictRtt } from '../coords/index.js';
import { NeighbourSet, type Candidate, type NeighbourChange, type NeighbourOptions } from './neighbours.js';
import { PeerTable, fromWireCoord, toWireCoord, type Load } from './peers.js';
import { jsonChannel } from './wire.js';
import { COORD_MAX_BYTES, COORD_PROTOCOL, replySchema, type CoordReply } from './coord-wire.js';
import { CoordResponder } from './coord-responder.js';
import { processLag, type LagSource } from './process-lag.js';
import { RttWindows } from './rtt-window.js';

// Where tests and the old importers still take these from.
export { COORD_MAX_BYTES, COORD_PROTOCOL, loadSchema, type CoordReply } from './coord-wire.js';
export { processLag, type LagSource } from './process-lag.js';

/** Peer-store tag on neighbours: the connection manager prunes untagged connections first. */
export const NEIGHBOUR_TAG = 'volcrawl-neighbour';
export const NEIGHBOUR_TAG_VALUE = 60;

export interface CoordServiceOptions {
  libp2p: Libp2p;
  peers: PeerTable;
  /** This node's Vivaldi state; absent on nodes that only route (a manager). */
  vivaldi?: VivaldiNode;
  /** The filter of the coordinate this node publishes (absent: it publishes Vivaldi's own). */
  app?: AppCoordinate;
  /** Whether this node runs tasks and should be chosen by routers. */
  crawler: boolean;
  load?: () => Load;
  rng: Rng;
  /** Test hook: ms to hold the reply to a probe from `remote`. */
  probeDelay?: (remote: string) => number;
  /** Shortest gap between probing rounds (full speed), ms; adaptive.minIntervalMs. */
  intervalMs?: number;
  /** Probes per round at full speed; adaptive.fastFanout. */
  fanout?: number;
  /** The probing pace (src/coords/adaptive.ts); intervalMs and fanout override its fields. */
  adaptive?: Partial<AdaptiveProbeOptions>;
  /** The neighbour set's bounds (neighbours.ts). */
  neighbours?: Partial<NeighbourOptions>;
  timeoutMs?: number;
  /** RTT samples per peer whose minimum feeds Vivaldi… */
  minWindow?: number;
  /** …if not older than this, ms. */
  windowMs?: number;
  /** Event-loop stalls (default: this process's shared tracker; `false` keeps every sample and never counts as busy). */
  lag?: LagSource | false;
  log?: Logger;
}

export class CoordService {
  private readonly o: CoordServiceOptions;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private running = false;
  private inflight = 0;
  private readonly responder: CoordResponder;
  private readonly windows: RttWindows;
  readonly pace: AdaptiveProbing;
  /** Whether the pace has reached its longest gap yet (logged once). */
  private settledOnce = false;
  /** Neighbours whose connection closed: probed in the next round. */
  private readonly verify = new Set<string>();
  private nextAt = 0;
  readonly neighbours: NeighbourSet;
  /** Accepted Vivaldi samples. */
  samples = 0;
  /** Probes refused because the only connection to the peer was relayed (its RTT is not the path's: issue #16). */
  relayedProbesRefused = 0;
  /** Samples accepted although the probe ran over a relayed connection: must stay 0 (what nat-check reports). */
  relayedSamples = 0;
  probesOk = 0;
  probesFailed = 0;
  /** Probes answered whose sample a stalled event loop spoiled (dropped). */
  probesSpoiled = 0;
  /** Of those, spoiled by the responder's stall rather than ours alone. */
  probesSpoiledRemote = 0;
  /** Probes and info queries that had to dial (no connection to the peer was open): each a handshake on both sides. */
  probeDials = 0;
  infoDials = 0;
  /** Peers that entered the neighbour set, and left it (any cause). */
  neighboursAdded = 0;
  neighboursRemoved = 0;
  private readonly lag: LagSource | undefined;

  constructor(opts: CoordServiceOptions) {
    this.o = opts;
    this.pace = new AdaptiveProbing(
      {
        ...opts.adaptive,
        ...(opts.intervalMs !== undefined ? { minIntervalMs: opts.intervalMs } : {}),
        ...(opts.fanout !== undefined ? { fastFanout: opts.fanout } : {}),
        ...(opts.intervalMs !== undefined && opts.adaptive?.maxIntervalMs === undefined && opts.intervalMs > 30_000 ? { maxIntervalMs: opts.intervalMs } : {}),
      },
      opts.rng,
    );
    this.neighbours = new NeighbourSet(opts.neighbours ?? {}, opts.rng);
    this.lag = opts.lag === false ? undefined : (opts.lag ?? processLag());
    this.windows = new RttWindows(opts.minWindow, opts.windowMs);
    this.responder = new CoordResponder({
      peers: opts.peers,
      crawler: opts.crawler,
      load: opts.load,
      coord: () => this.myCoord(),
      sys: () => this.mySys(),
      probeDelay: opts.probeDelay,
      timeoutMs: opts.timeoutMs,
      lag: this.lag,
      log: opts.log,
    });
  }

  /** Whether this process's event loop stalled lately (the pace holds its busy gap). */
  get busy(): boolean {
    return this.lag?.lag.busy(performance.now()) ?? false;
  }

  async start(): Promise<void> {
    await this.o.libp2p.handle(COORD_PROTOCOL, (stream, conn) => this.responder.handle(stream, conn), {
      maxInboundStreams: 64,
      maxOutboundStreams: 64,
    });
    this.running = true;
    if (this.o.vivaldi !== undefined) {
      this.schedule(0);
      this.o.libp2p.addEventListener('peer:disconnect', this.onDisconnect);
    }
    // A node without coordinates (the manager) never probes, and crawlers stop
    // probing a peer once they know it is not a crawler, so after a restart it
    // would never hear from them again: it asks each peer that connects instead.
    else this.o.libp2p.addEventListener('peer:identify', this.onIdentify);
  }

  private readonly onIdentify = (evt: CustomEvent<IdentifyResult>): void => {
    const { peerId, protocols } = evt.detail;
    const id = peerId.toString();
    const known = this.o.peers.get(id);
    if (!this.running || !protocols.includes(COORD_PROTOCOL) || (known !== undefined && !known.down)) return;
    this.info(id).catch((err: unknown) => this.o.log?.debug({ peer: id, err: String(err) }, 'info on connect failed'));
  };

  /** A neighbour whose connection closed is probed at the next short gap: if
   * it is gone, the failed probe drops it from the set at once instead of
   * after several slow rounds. */
  private readonly onDisconnect = (evt: CustomEvent<PeerId>): void => {
    const id = evt.detail.toString();
    if (!this.running || !this.neighbours.has(id)) return;
    this.verify.add(id);
    this.wake(this.pace.opts.minIntervalMs);
  };

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.o.libp2p.removeEventListener('peer:identify', this.onIdentify);
    this.o.libp2p.removeEventListener('peer:disconnect', this.onDisconnect);
    this.responder.close();
    this.lag?.release();
    await this.o.libp2p.unhandle(COORD_PROTOCOL).catch(() => undefined);
  }

  /** Whether `peer` probed this node lately: its neighbour set holds us, so
   * closing our connection to it would only make it dial again. "Lately" is
   * twice the time a settled peer with our own settings takes to come round
   * its whole set (every member once per set-size probes at the longest gap). */
  probesUs(peer: string): boolean {
    const o = this.neighbours.opts;
    return this.responder.probedWithin(peer, 2 * (o.near + o.far) * this.pace.opts.maxIntervalMs);
  }

  /** The probing pace has backed off: samples agree with this node's coordinate. */
  get settled(): boolean {
    return this.pace.settled;
  }

  /** The coordinate this node publishes (what peers store, route on and
   * check): the application-level one when there is a filter, else Vivaldi's. */
  get published(): Coordinate | undefined {
    const viv = this.o.vivaldi;
    if (viv === undefined) return undefined;
    // Until the filter publishes its own (first window full; never when off), Vivaldi's as it is.
    return this.o.app?.filtering === true ? this.o.app.coord! : viv.coord;
  }

  private myCoord() {
    const c = this.published;
    return c !== undefined ? toWireCoord(c) : undefined;
  }

  /** Vivaldi's own coordinate for a probe reply, when the published one differs. */
  private mySys() {
    const viv = this.o.vivaldi;
    if (viv === undefined || this.o.app?.filtering !== true) return undefined;
    return toWireCoord(viv.coord);
  }

  private schedule(ms: number): void {
    if (!this.running) return;
    this.nextAt = performance.now() + ms;
    this.timer = setTimeout(() => this.round(), ms);
    this.timer.unref?.();
  }

  /** Brings the next round forward to within `ms`. */
  private wake(ms: number): void {
    if (!this.running || this.timer === undefined || this.nextAt - performance.now() <= ms) return;
    clearTimeout(this.timer);
    this.schedule(ms);
  }

  /** Crawlers this node could measure: every live crawler it has heard of,
   * plus connected peers not known to be something else (a connection is
   * news of life: a crawler marked down after one failed exchange comes back). */
  private candidates(): Candidate[] {
    const self = this.o.libp2p.peerId.toString();
    const out = new Map<string, Candidate>();
    for (const p of this.o.peers.all()) if (p.crawler && !p.down) out.set(p.id, { id: p.id, coord: p.coord });
    for (const peer of this.o.libp2p.getPeers()) {
      const id = peer.toString();
      const known = this.o.peers.get(id);
      if (!out.has(id) && known?.crawler !== false) out.set(id, { id, coord: known?.coord });
    }
    out.delete(self);
    return [...out.values()];
  }

  /** Refreshes the neighbour set and picks this round's targets: neighbours
   * to verify first, then the set's own choice. */
  private pick(): string[] {
    const me = this.o.vivaldi?.coord;
    const error = me?.error ?? Infinity;
    const cands = this.candidates();
    // Near and far only mean something once our own estimate is settling.
    const updated = this.neighbours.update(cands, me !== undefined && (error < 0.6 || this.pace.settled) ? me : undefined);
    const rotated = this.neighbours.rotate(cands, performance.now());
    this.retag(updated);
    this.retag(rotated);
    // A member new to the set is measured in the round that adds it (as SWIM
    // probes a new member first): a crawler heard of but gone since — a
    // candidate until someone fails to reach it — is then dropped at once,
    // instead of sitting in the set until a random pick of the slow, settled
    // pace happens to land on it (minutes with 16 members at one probe a 30 s
    // round), and a live newcomer gets its first sample without waiting.
    for (const id of [...updated.added, ...rotated.added]) this.verify.add(id);
    const verify = [...this.verify].filter((id) => this.neighbours.has(id));
    this.verify.clear();
    const picked = this.neighbours.pick(this.pace.fanout(this.busy));
    return [...new Set([...verify, ...picked])];
  }

  /** Tags new neighbours and untags old ones in the peer store (connection pruning keeps tagged peers). */
  private retag(change: NeighbourChange): void {
    const tag = (id: string, on: boolean) => {
      let pid: PeerId;
      try {
        pid = peerIdFromString(id);
      } catch {
        return;
      }
      this.o.libp2p.peerStore
        .merge(pid, { tags: { [NEIGHBOUR_TAG]: on ? { value: NEIGHBOUR_TAG_VALUE } : undefined } })
        .catch((err: unknown) => this.o.log?.debug({ peer: id, err: String(err) }, 'neighbour tag failed'));
    };
    this.neighboursAdded += change.added.length;
    this.neighboursRemoved += change.removed.length;
    for (const id of change.added) tag(id, true);
    for (const id of change.removed) {
      tag(id, false);
      this.windows.forget(id);
    }
  }

  private round(): void {
    if (!this.running) return;
    const maxInflight = this.pace.opts.fastFanout * 4;
    for (const id of this.pick()) {
      // Past the in-flight bound, a member owed a probe keeps it for the next round.
      if (this.inflight >= maxInflight) {
        if (this.neighbours.has(id)) this.verify.add(id);
        continue;
      }
      this.inflight++;
      void this.probe(id)
        .then(() => this.probesOk++)
        .catch((err: unknown) => {
          this.probesFailed++;
          if (this.neighbours.remove(id)) this.retag({ added: [], removed: [id] });
          this.o.log?.debug({ peer: id, err: String(err) }, 'coordinate probe failed');
        })
        .finally(() => this.inflight--);
    }
    this.schedule(this.pace.nextDelay(this.busy));
  }

  /** Measures the RTT to `peer`, learns its coordinate and load, updates Vivaldi. */
  async probe(peer: string): Promise<number> {
    const { reply, rttMs, relayed, to } = await this.request(peer, 'probe');
    // A stall that ended as the reply came in is known once the tracker ticks.
    if (this.lag !== undefined) {
      await this.lag.nextTick();
      if (this.lag.lag.spoils(to, rttMs, reply.stallMs ?? 0)) {
        this.probesSpoiled++;
        if (!this.lag.lag.spoils(to, rttMs, 0)) this.probesSpoiledRemote++;
        return rttMs;
      }
    }
    this.o.peers.note(peer, { rttMs });
    // Vivaldi gets the minimum of the peer's recent samples (rtt-window.ts), not the latest.
    const now = performance.now();
    const best = this.windows.add(peer, now, rttMs);
    const viv = this.o.vivaldi;
    const theirs = reply.sys ?? reply.coord;
    if (viv !== undefined && theirs !== undefined && reply.crawler) {
      const remote = fromWireCoord(theirs);
      // The pace judges the sample against the prediction made before it counts.
      this.pace.observe(predictRtt(viv.coord, remote), best);
      if (viv.update(remote, best, peer)) {
        this.samples++;
        if (relayed) this.relayedSamples++;
        if (this.o.app?.observe(viv.coord, now) === true) this.o.log?.debug({ changes: this.o.app.changes }, 'published coordinate moved');
      }
      if (!this.settledOnce && this.pace.intervalMs >= this.pace.opts.maxIntervalMs) {
        this.settledOnce = true;
        this.o.log?.info({ samples: this.samples, error: viv.coord.error, probeEveryMs: this.pace.intervalMs }, 'coordinate settled');
      }
    }
    return best;
  }

  /** Asks `peer` for its coordinate and load without measuring. */
  async info(peer: string): Promise<CoordReply> {
    return (await this.request(peer, 'info')).reply;
  }

  /** Tells `peer` we are leaving. */
  async bye(peer: string): Promise<void> {
    await this.request(peer, 'bye', 2_000).catch(() => undefined);
  }

  private async request(peer: string, t: 'probe' | 'info' | 'bye', timeout?: number): Promise<{ reply: CoordReply; rttMs: number; relayed: boolean; from: number; to: number }> {
    const timeoutMs = timeout ?? this.o.timeoutMs ?? 10_000;
    let pid: PeerId;
    try {
      pid = peerIdFromString(peer);
    } catch {
      throw new Error(`bad peer id ${peer}`);
    }
    let stream: Stream;
    // The connection the stream runs on, seen as libp2p opens the stream: whether the sample is relayed is read
    // from it, not assumed from libp2p's refusal of limited connections.
    let relayed = false;
    const onProgress = (e: { type: string; detail?: unknown }): void => {
      if (e.type !== 'connection:open-stream') return;
      const c = (e.detail as { connection?: Connection } | undefined)?.connection;
      if (c !== undefined) relayed = c.limits !== undefined || c.remoteAddr.toString().includes('/p2p-circuit');
    };
    if (this.o.libp2p.getConnections(pid).length === 0) {
      if (t === 'probe') this.probeDials++;
      else if (t === 'info') this.infoDials++;
    }
    try {
      stream = await this.o.libp2p.dialProtocol(pid, COORD_PROTOCOL, { signal: AbortSignal.timeout(timeoutMs), onProgress });
    } catch (err) {
      if (t === 'probe' && (err as Error).name === 'LimitedConnectionError') this.relayedProbesRefused++;
      this.o.peers.markDown(peer);
      if ((err as Error).name === 'UnsupportedProtocolError') this.o.peers.note(peer, { crawler: false });
      throw err;
    }
    const ch = jsonChannel(stream, COORD_MAX_BYTES, timeoutMs);
    try {
      const load = this.o.load?.();
      const t0 = performance.now();
      await ch.write({ t, coord: this.myCoord(), load, crawler: this.o.crawler });
      const raw = await ch.read();
      const t1 = performance.now();
      const elapsed = t1 - t0;
      const reply = replySchema.parse(raw);
      const rttMs = Math.max(0.05, elapsed - Math.min(reply.turnaroundMs ?? 0, elapsed * 0.9));
      this.o.peers.note(peer, {
        coord: reply.coord !== undefined ? fromWireCoord(reply.coord) : undefined,
        load: reply.load,
        crawler: reply.crawler,
      });
      await ch.close();
      return { reply, rttMs, relayed, from: t0, to: t1 };
    } catch (err) {
      ch.abort('probe failed');
      throw err;
    }
  }
}
