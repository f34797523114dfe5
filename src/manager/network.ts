// The manager's libp2p side: a bootstrap peer of the overlay (kad-dht server
// mode, the coordinate protocol as a non-crawler so routers learn crawlers'
// coordinates and loads), signs every task order with its persistent key, routes
// orders with src/dht's Router, and serves the upload protocol (src/dht's
// UploadReceiver: size-bounded, rate-limited, sender checked) into the storage
// module, and with `--archive full` the archive upload protocol into the
// archive service.
import type { Logger } from 'pino';
import { startLibp2pPeer, stopLibp2pQuietly, type Libp2pOptions, type VolcrawlLibp2p } from '../dht/libp2p.js';
import { CoordService } from '../dht/coord-protocol.js';
import { PeerTable, type PeerState } from '../dht/peers.js';
import { Router } from '../dht/router.js';
import { OverlayChecker, type OverlayVerdict } from '../dht/overlay-check.js';
import { signOrder, type StorageEndpoint, type TaskOrder } from '../dht/signing.js';
import { NO_FORWARD_HOPS, sendTask } from '../dht/task-protocol.js';
import { PullDesk, type PullOutcome } from '../dht/task-pull.js';
import { PushFailures } from '../dht/push-failures.js';
import { predictRtt } from '../coords/index.js';
import { fromWireCoord } from '../dht/peers.js';
import { UPLOAD_PROTOCOL, UploadReceiver } from '../dht/upload.js';
import { ArchiveReceiver } from '../dht/archive-upload.js';
import { signOperatorConfig, StateReceiver } from '../dht/volunteer-state.js';
import { createRng, deriveSeed } from '../rng.js';
import type { Manager } from './manager.js';
import type { DispatchResult, IssuedTask } from './services/tasks.js';
import { VolunteerStates } from './volunteer-states.js';
import { OwnerBlocks } from './owner-blocks.js';
import { aggregateLoad, DEFAULT_CRAWLER_LOAD, type CrawlerLoad, type CrawlerLoadOptions } from './crawler-load.js';
import { LoadSurvey } from './load-survey.js';

/** The libp2p options the manager takes; its connection limit and timeouts
 * stay at createVolcrawlLibp2p's defaults. */
type ManagerLibp2pOptions = Pick<Libp2pOptions, 'privateKey' | 'listen' | 'announce' | 'allowPrivateAddrs' | 'providerTtlMs' | 'inboundConnectionThreshold' | 'nat'>;

export interface ManagerNodeOptions extends ManagerLibp2pOptions {
  manager: Manager;
  /** Orders being signed and routed at once. */
  routeConcurrency?: number;
  routerCacheTtlMs?: number;
  /** The operator's contact URL, sent to volunteers in the signed configuration (their User-Agent carries it). */
  contactUrl?: string | null;
  /** How long a crawler's overlay verdict (coordinate claim and cells) holds before it is checked again, ms. */
  overlayCheckTtlMs?: number;
  /** How often every known crawler is looked at for an overlay check that is due, ms. */
  overlaySweepMs?: number;
  /** How often crawlers whose load copy is older than this are asked for it (load-survey.ts), ms. */
  loadSurveyMs?: number;
  /** The bounds on the crawlers' load reports CAF steers on (crawler-load.ts). */
  crawlerLoad?: Partial<CrawlerLoadOptions>;
  /** An order that has less than this share of its time left when a routing slot frees up is not sent (default 0.25). */
  minLifeLeft?: number;
  log: Logger;
}

/** Share of an order's time it must have left when its turn to be routed comes (ManagerNodeOptions.minLifeLeft). */
export const DEFAULT_MIN_LIFE_LEFT = 0.25;

/**
 * Why an order queued for a routing slot at `queuedAt` is, at `now`, no longer
 * worth sending (past its deadline, or with less than `minLifeLeft` of its time
 * left), or null. A dead order costs a route (lookups, a push, the volunteer's
 * signature check) and comes back rejected; when routes are slow and the queue
 * is long, every order behind the first few dies on its way, its channel is
 * issued again behind them, and idle volunteers see nothing but expired orders
 * (issue 13's 48-site run under load: 1096 of them in 340 s, 17 tasks done). So
 * the deadline is looked at when the order's turn comes, before it is signed.
 */
export function staleOrder(deadline: number, queuedAt: number, now: number, minLifeLeft: number): string | null {
  const left = deadline - now;
  const span = deadline - queuedAt;
  if (left > 0 && left >= span * minLifeLeft) return null;
  return `order not sent: ${Math.max(0, Math.round(left))} ms of its ${Math.max(0, Math.round(span))} ms left after ${Math.round(now - queuedAt)} ms waiting for a routing slot`;
}

export class ManagerNode {
  readonly libp2p: VolcrawlLibp2p;
  readonly peers = new PeerTable();
  readonly coords: CoordService;
  readonly router: Router;
  /** Checks candidates' coordinate claims and cells through witnesses before the router uses them. */
  readonly overlay: OverlayChecker;
  private overlayTimer: ReturnType<typeof setInterval> | undefined;
  readonly receiver: UploadReceiver;
  /** The archive upload protocol, served with `--archive full` only. */
  readonly archiveReceiver: ArchiveReceiver | null;
  /** Each volunteer's state as its owner's controls set it (running, or paused and why). */
  readonly ownerStates = new VolunteerStates();
  /** Orders waiting for volunteers nobody can dial, which pull them (src/dht/task-pull.ts). */
  readonly pulls: PullDesk;
  /** Volunteers whose pushes failed: told to pull when they next report their state (src/dht/push-failures.ts). */
  readonly pushFailures = new PushFailures();
  /** (host, volunteer) pairs whose owner blocks the host: no order for it goes there. */
  readonly ownerBlocks = new OwnerBlocks();
  /** Keeps the copies of the crawlers' loads current (CAF steers on their sum). */
  readonly loadSurvey: LoadSurvey;
  private stateReceiver: StateReceiver | undefined;
  private readonly o: ManagerNodeOptions;
  private running = 0;
  private readonly waiters: (() => void)[] = [];
  /** Orders routed, and (`stale`) orders dropped before routing because too little of their time was left. */
  routed = { accepted: 0, failed: 0, stale: 0 };

  private constructor(libp2p: VolcrawlLibp2p, o: ManagerNodeOptions) {
    this.libp2p = libp2p;
    this.o = o;
    this.coords = new CoordService({
      libp2p,
      peers: this.peers,
      crawler: false,
      rng: createRng(deriveSeed(1, `manager:${libp2p.peerId.toString()}`)),
      log: o.log,
    });
    this.overlay = new OverlayChecker({
      libp2p,
      peers: this.peers,
      rng: createRng(deriveSeed(1, `overlay:${libp2p.peerId.toString()}`)),
      ttlMs: o.overlayCheckTtlMs ?? 120_000,
      onVerdict: (v) => void this.overlayOutcome(v),
      log: o.log,
    });
    this.loadSurvey = new LoadSurvey({ peers: this.peers, coords: this.coords, ...(o.loadSurveyMs !== undefined ? { periodMs: o.loadSurveyMs } : {}) });
    // A pull shows the volunteer alive (a failed push marked it down): listed again, never pushed to while it pulls.
    this.pulls = new PullDesk({ libp2p, coordOf: (peer) => this.peers.get(peer)?.coord, onPull: (peer) => this.peers.note(peer, { crawler: true }), log: o.log });
    this.router = new Router({ libp2p, peers: this.peers, coords: this.coords, cacheTtlMs: o.routerCacheTtlMs, overlay: this.overlay, onPush: (peer, answered) => this.pushed(peer, answered), log: o.log });
    this.receiver = new UploadReceiver({
      libp2p,
      onUpload: async (msg, from) => {
        await o.manager.ingest.ingest(msg, from);
        const r = msg.result as { final: boolean; status: string; outcomes?: Record<string, number> };
        if (r.final && r.status === 'refused' && (r.outcomes?.['owner-blocked'] ?? 0) > 0) this.ownerBlocks.note(msg.host, from);
      },
      log: o.log,
    });
    const archive = o.manager.archive;
    this.archiveReceiver =
      archive === null
        ? null
        : new ArchiveReceiver({
            libp2p,
            onBatch: async (header, raw, from) => {
              await archive.receive(header, raw, from);
            },
            log: o.log,
          });
  }

  static async start(o: ManagerNodeOptions): Promise<ManagerNode> {
    const node = await startLibp2pPeer(o, {
      build: (libp2p) => new ManagerNode(libp2p, o),
      start: async (n) => {
        await n.coords.start();
        await n.receiver.start();
        await n.pulls.start();
        await n.archiveReceiver?.start();
        const config = await signOperatorConfig({ v: 1, issuer: n.peerId, issuedAt: Date.now(), contactUrl: o.contactUrl ?? null }, o.privateKey);
        n.stateReceiver = new StateReceiver({ libp2p: n.libp2p, config, onReport: (from, r) => n.stateReported(from, r), log: o.log });
        await n.stateReceiver.start();
      },
    });
    o.manager.tasks.dispatch = (t) => node.dispatch(t);
    o.manager.tasks.loadSource = () => node.crawlerLoad().load;
    // Only CAF steers on the load: the other strategies spare the crawlers the queries.
    if (o.manager.sched.state.options.strategy === 'caf') node.loadSurvey.start();
    o.manager.trust.network = { candidates: () => node.volunteers(), dispatchTo: (t, peer, opts) => node.dispatchTo(t, peer, opts) };
    o.manager.trust.checks.startSweep();
    node.overlayTimer = setInterval(() => {
      const ids = node.crawlers().map((p) => p.id);
      const started = node.overlay.sweep(ids);
      if (started > 0) o.log.debug({ crawlers: ids.length, started }, 'overlay checks due');
    }, o.overlaySweepMs ?? 15_000);
    node.overlayTimer.unref?.();
    return node;
  }

  get peerId(): string {
    return this.libp2p.peerId.toString();
  }

  multiaddrs(): string[] {
    return this.libp2p.getMultiaddrs().map(String);
  }

  storageEndpoint(): StorageEndpoint {
    return { peer: this.peerId, protocol: UPLOAD_PROTOCOL, addrs: this.multiaddrs().slice(0, 16) };
  }

  /** Crawlers this node has heard from (coordinate probes, info replies, task replies). */
  crawlers(): PeerState[] {
    return this.peers.all().filter((p) => p.crawler && !p.down);
  }

  /** The crawlers' load summed over those heard from recently, each report bounded (crawler-load.ts). */
  crawlerLoad(now = performance.now()): CrawlerLoad {
    return aggregateLoad(this.peers.all(), now, { ...DEFAULT_CRAWLER_LOAD, ...this.o.crawlerLoad });
  }

  private async slot(): Promise<void> {
    const max = this.o.routeConcurrency ?? 16;
    if (this.running < max) {
      this.running++;
      return;
    }
    await new Promise<void>((resolve) => this.waiters.push(resolve));
    this.running++;
  }

  private release(): void {
    this.running--;
    this.waiters.shift()?.();
  }

  /** staleOrder for a task about to be routed, counted in `routed.stale`. */
  private staleReason(t: IssuedTask, queuedAt: number): string | null {
    const why = staleOrder(t.task.deadline, queuedAt, this.o.manager.clock(), this.o.minLifeLeft ?? DEFAULT_MIN_LIFE_LEFT);
    if (why !== null) this.routed.stale++;
    return why;
  }

  private async sign(t: IssuedTask): Promise<{ envelope: Awaited<ReturnType<typeof signOrder>>; order: TaskOrder }> {
    const now = this.o.manager.clock();
    const order: TaskOrder = {
      v: 1,
      id: t.task.id,
      issuer: this.peerId,
      issuedAt: Math.floor(now),
      expiresAt: Math.floor(t.task.deadline),
      host: t.channel.host,
      ...(t.hostCoord !== undefined ? { hostCoord: t.hostCoord } : {}),
      storage: this.storageEndpoint(),
      task: t.task,
    };
    return { envelope: await signOrder(order, this.o.privateKey), order };
  }

  /** Volunteers no order goes to: quarantined or banned ones, those whose owner paused them, and for `host` those whose owner blocks it. */
  private excluded(host?: string): Set<string> {
    const out = new Set(this.o.manager.trust.excluded());
    for (const id of this.ownerStates.paused()) out.add(id);
    if (host !== undefined) for (const id of this.ownerBlocks.refusers(host)) out.add(id);
    return out;
  }

  /** A state report; the answer is how long the volunteer should pull its tasks (its pushes failed lately), ms. */
  private stateReported(from: string, r: Parameters<VolunteerStates['note']>[1]): number {
    const before = this.ownerStates.get(from);
    this.ownerStates.note(from, r);
    if (before?.state !== r.state || before.reasons.join() !== r.reasons.join()) this.o.log.info({ volunteer: from, state: r.state, reasons: r.reasons }, 'volunteer state');
    const pullForMs = this.pushFailures.advise(from);
    if (pullForMs > 0) this.o.log.info({ volunteer: from, pullForMs }, 'pushes to the volunteer failed: told it to pull its tasks');
    return pullForMs;
  }

  private pushed(peer: string, answered: boolean): void {
    if (answered) this.pushFailures.succeeded(peer);
    else this.pushFailures.failed(peer);
  }

  /** A crawler's coordinate claim or cells checked by witnesses: the verdict goes into its overlay ledger. */
  private async overlayOutcome(v: OverlayVerdict): Promise<void> {
    const reason = v.verdict === 'bad' ? `coordinate ${v.claim}${v.claimReasons.length > 0 ? ` (${v.claimReasons.join(', ')})` : ''}, cells ${v.announcement?.verdict ?? 'not checked'}, ${v.witnesses} witnesses` : undefined;
    await this.o.manager.trust
      .apply(v.peer, { kind: v.verdict === 'bad' ? 'coordinate' : 'coordinate-ok', at: this.o.manager.clock(), ...(reason !== undefined ? { reason } : {}) })
      .catch((err: unknown) => this.o.log.warn({ peer: v.peer, err: String(err) }, 'could not record an overlay verdict'));
  }

  /** Signs the task's order and routes it to a crawler near its host (never to a quarantined, banned or paused one).
   * A volunteer nobody can dial pulls its orders (task-pull.ts): when it is the crawler nearest the host the order
   * waits for its pull; pushes never go to it; and an order no push placed waits for any pull. */
  async dispatch(t: IssuedTask): Promise<DispatchResult> {
    let parked: Promise<PullOutcome> | null = null;
    let r: Awaited<ReturnType<Router['route']>> | undefined;
    const queuedAt = this.o.manager.clock();
    await this.slot();
    try {
      const stale = this.staleReason(t, queuedAt);
      if (stale !== null) {
        this.routed.failed++;
        return { status: 'no-crawler', reason: stale };
      }
      const { envelope, order } = await this.sign(t);
      const exclude = this.excluded(t.channel.host);
      const pullers = this.pulls.live();
      const nearest = pullers.size > 0 ? this.nearestPuller(t, exclude) : null;
      if (nearest !== null) parked = this.pulls.offer(envelope, { ...(t.hostCoord !== undefined ? { host: t.hostCoord } : {}), for: nearest });
      else {
        r = await this.router.route(envelope, order, { exclude: new Set([...exclude, ...pullers]) });
        if (r.status !== 'accepted' && pullers.size > 0) parked = this.pulls.offer(envelope, { ...(t.hostCoord !== undefined ? { host: t.hostCoord } : {}), exclude });
      }
      this.o.log.debug({ task: t.task.id, status: r?.status ?? 'parked', by: r?.by, attempts: r?.attempts, level: r?.level, pull: nearest }, 'task routed');
    } finally {
      this.release();
    }
    // A parked order holds no routing slot while it waits.
    const pulled = parked !== null ? await parked : null;
    const out: DispatchResult =
      pulled !== null
        ? { status: pulled.status, by: pulled.by }
        : r !== undefined && (r.status === 'accepted' || parked === null)
          ? { status: r.status, ...(r.by !== undefined ? { by: r.by } : {}), ...(r.reason !== undefined ? { reason: r.reason } : {}) }
          : { status: r?.status ?? 'no-crawler', reason: r !== undefined ? `${r.reason ?? r.status}; and no volunteer pulled it` : 'the crawler nearest the host pulls its tasks and did not pull this one in time' };
    if (out.status === 'accepted') this.routed.accepted++;
    else this.routed.failed++;
    return out;
  }

  /** The pulling volunteer nearest the task's host with room, if it is nearer than every crawler a push could reach. */
  private nearestPuller(t: IssuedTask, exclude: ReadonlySet<string>): string | null {
    if (t.hostCoord === undefined) return null;
    const host = fromWireCoord(t.hostCoord);
    let best: { id: string; d: number; pull: boolean } | null = null;
    const consider = (id: string, coord: Parameters<typeof predictRtt>[0] | undefined, pull: boolean): void => {
      if (coord === undefined || exclude.has(id)) return;
      const d = predictRtt(host, coord);
      if (best === null || d < best.d) best = { id, d, pull };
    };
    const pullers = this.pulls.live();
    for (const id of pullers) {
      const p = this.pulls.puller(id);
      if (p !== null && p.room > 0) consider(id, p.coord, true);
    }
    for (const p of this.crawlers()) if (!pullers.has(p.id)) consider(p.id, p.coord, false);
    const b = best as { id: string; pull: boolean } | null;
    return b !== null && b.pull ? b.id : null;
  }

  /** Signs the task's order and sends it to one chosen crawler (spot checks and re-crawls);
   * with `forward: false` the crawler runs it or refuses it, never hands it on. */
  async dispatchTo(t: IssuedTask, peer: string, opts: { forward?: boolean } = {}): Promise<DispatchResult> {
    if (this.pulls.live().has(peer)) {
      // A volunteer nobody can dial gets its spot checks by pull too (it pulls only with a free slot, so it runs them).
      const { envelope } = await this.sign(t);
      const p = await this.pulls.offer(envelope, { ...(t.hostCoord !== undefined ? { host: t.hostCoord } : {}), for: peer });
      return p !== null ? { status: p.status, by: p.by } : { status: 'no-crawler', reason: 'the volunteer pulls its tasks and did not pull this one in time' };
    }
    const queuedAt = this.o.manager.clock();
    await this.slot();
    try {
      const stale = this.staleReason(t, queuedAt);
      if (stale !== null) return { status: 'no-crawler', reason: stale };
      const { envelope } = await this.sign(t);
      let r: Awaited<ReturnType<typeof sendTask>>;
      try {
        r = await sendTask(this.libp2p, peer, envelope, opts.forward === false ? NO_FORWARD_HOPS : 0);
      } catch (err) {
        this.pushed(peer, false);
        throw err;
      }
      this.pushed(peer, true);
      if (r.load !== undefined) this.peers.note(peer, { load: r.load });
      return { status: r.status, ...(r.by !== undefined ? { by: r.by } : { by: peer }), ...(r.reason !== undefined ? { reason: r.reason } : {}) };
    } catch (err) {
      return { status: 'no-crawler', reason: String(err) };
    } finally {
      this.release();
    }
  }

  /** Live crawlers with the IP address they connect from and their coordinate (who may verify whom). */
  volunteers(): { id: string; address: string | null; coord: number[] | null }[] {
    const paused = this.ownerStates.paused();
    return this.crawlers().filter((p) => !paused.has(p.id)).map((p) => {
      const conn = this.libp2p.getConnections().find((c) => c.remotePeer.toString() === p.id);
      const m = conn === undefined ? null : /^\/ip[46]\/([^/]+)/.exec(conn.remoteAddr.toString());
      return { id: p.id, address: m?.[1] ?? null, coord: p.coord !== undefined ? [...p.coord.vec] : null };
    });
  }

  async stop(): Promise<void> {
    this.o.manager.tasks.dispatch = null;
    this.o.manager.tasks.loadSource = null;
    this.loadSurvey.stop();
    this.o.manager.trust.network = null;
    this.o.manager.trust.checks.stopSweep();
    if (this.overlayTimer !== undefined) clearInterval(this.overlayTimer);
    await this.receiver.stop().catch(() => undefined);
    await this.pulls.stop();
    await this.archiveReceiver?.stop().catch(() => undefined);
    await this.stateReceiver?.stop().catch(() => undefined);
    await this.coords.stop().catch(() => undefined);
    await stopLibp2pQuietly(this.libp2p);
  }
}
