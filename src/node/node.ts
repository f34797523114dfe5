// A volunteer node: the libp2p stack, the coordinate protocol feeding Vivaldi,
// coordinate-cell announcements, the task protocol in front of a task runner
// (src/crawler's TaskManager), result uploads, a status snapshot and graceful
// shutdown with task migration. The parts with a life cycle are NodeServices,
// started in order and stopped in reverse; more can be plugged in
// (`VolunteerNodeOptions.services`).
import type { Logger } from 'pino';
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr';
import { peerIdFromString } from '@libp2p/peer-id';
import { AppCoordinate, VivaldiNode, type AppCoordOptions, type Coordinate, type VivaldiOptions } from '../coords/index.js';
import { claimingVivaldi } from './test-plugin.js';
import { createRng, deriveSeed } from '../rng.js';
import type { ResultSink, Task, TaskLoad, TaskResult } from '../crawler/task.js';
import { emptyResult, parseTask } from '../crawler/task.js';
import { ConnectionTrimmer } from '../dht/connection-trim.js';
import { PeerKeeper } from '../dht/peer-keeper.js';
import { startLibp2pPeer, stopLibp2pQuietly, VOLUNTEER_MAX_CONNECTIONS, VOLUNTEER_PING_INTERVAL_MS, type Libp2pOptions, type VolcrawlLibp2p } from '../dht/libp2p.js';
import { ManagerLink } from './manager-link.js';
import { PeerTable, toWireCoord } from '../dht/peers.js';
import { CoordService, NEIGHBOUR_TAG_VALUE } from '../dht/coord-protocol.js';
import { Announcer } from '../dht/announce.js';
import { TASK_PROTOCOL, TaskReceiver } from '../dht/task-protocol.js';
import { Router, type RouteResult } from '../dht/router.js';
import { WitnessService } from '../dht/overlay-check.js';
import { UPLOAD_PROTOCOL, uploadResult } from '../dht/upload.js';
import { ARCHIVE_PROTOCOL, uploadArchiveBatch } from '../dht/archive-upload.js';
import { HOLEPUNCH_PROTOCOL } from '../dht/holepunch/coordination.js';
import { TaskArchive, type SendBatch } from './task-archive.js';
import type { CellOptions } from '../dht/cells.js';
import type { AdaptiveProbeOptions } from '../coords/index.js';
import type { NeighbourOptions } from '../dht/neighbours.js';
import { MAX_HANDOVER_LINKS, signHandover, type Handover, type SignedEnvelope, type TaskOrder } from '../dht/signing.js';
import type { RateLimitOptions } from '../dht/rate-limit.js';

/** What the node needs of a task runner; src/crawler's TaskManager fits. */
export interface TaskRunner {
  submit(task: Task): 'accepted' | 'full';
  load(): TaskLoad;
  /** Stop accepting, abort running tasks, return queued + running ones. */
  drain(): Promise<Task[]>;
  close(): Promise<void>;
  /** Like drain(), but tasks are taken again after resume() (the owner's pause). */
  pause?(): Promise<Task[]>;
  resume?(): void;
}

/** A part of the node with a life cycle (the coordinate service, announcements,
 * the manager link…): started in order once the libp2p stack runs, stopped in
 * reverse order on shutdown. */
export interface NodeService {
  readonly name: string;
  start(): Promise<void> | void;
  stop?(): Promise<void> | void;
}

export class BootstrapError extends Error {
  override name = 'BootstrapError';
}

/** Parses bootstrap addresses; each must be a multiaddr ending in /p2p/<peer id>. */
export function parseBootstrap(addrs: string[]): Multiaddr[] {
  return addrs.map((s) => {
    let ma: Multiaddr;
    try {
      ma = multiaddr(s);
    } catch (err) {
      throw new BootstrapError(`malformed bootstrap address ${JSON.stringify(s)}: ${(err as Error).message}`);
    }
    const p2p = ma.getComponents().find((c) => c.name === 'p2p');
    if (p2p?.value === undefined) throw new BootstrapError(`bootstrap address ${s} lacks /p2p/<peer id>`);
    try {
      peerIdFromString(p2p.value);
    } catch {
      throw new BootstrapError(`bootstrap address ${s} has an invalid peer id`);
    }
    return ma;
  });
}

/** Every libp2p option, and the volunteer's own; `privateKey` also signs task hand-overs. */
export interface VolunteerNodeOptions extends Libp2pOptions {
  /** The manager's peer id: only orders it signed are run. */
  manager: string;
  createRunner: (sink: ResultSink) => TaskRunner;
  bootstrap?: string[];
  seed?: number;
  vivaldi?: Partial<VivaldiOptions>;
  /** The filter of the published (application-level) coordinate (src/coords/app-coord.ts). */
  appCoord?: Partial<AppCoordOptions>;
  /** Test hook: delay before answering a coordinate probe from `remote`. */
  probeDelay?: (remote: string) => number;
  /** Test hook (test-plugin.ts): the coordinate this node claims to others, from its true one. */
  claim?: (c: Coordinate) => Coordinate;
  /** Shortest gap between probing rounds (while the coordinate is unsettled), ms. */
  coordIntervalMs?: number;
  /** Longest gap between probing rounds (once settled), ms. */
  coordMaxIntervalMs?: number;
  /** Probes per round while unsettled. */
  coordFanout?: number;
  /** The rest of the probing pace (src/coords/adaptive.ts). */
  coordPace?: Partial<AdaptiveProbeOptions>;
  /** Bounds of the neighbour set probed for Vivaldi (src/dht/neighbours.ts). */
  neighbours?: Partial<NeighbourOptions>;
  /** RTT samples per peer whose minimum feeds Vivaldi (default 4). */
  coordMinWindow?: number;
  announceCheckMs?: number;
  /** Announce once the Vivaldi error estimate is below this (or samples agree
   * with the coordinate), and `announceMinSamples` samples were taken. */
  announceMaxError?: number;
  /** Minimum gap between re-announcements when the cell changes, ms. */
  announceMinGapMs?: number;
  /** Vivaldi samples needed before the first announcement (default 10: the
   * probing pace backs off once samples agree, so waiting for many more would
   * delay a settled node by minutes). */
  announceMinSamples?: number;
  cells?: CellOptions;
  maxHops?: number;
  taskRateLimit?: RateLimitOptions;
  routerCacheTtlMs?: number;
  bootstrapTimeoutMs?: number;
  /** Connections younger than this are never trimmed, ms (connection-trim.ts; default 30 s). */
  connectionGraceMs?: number;
  /** Gap between checks of the connection to the manager, ms (see ManagerLink). */
  managerCheckMs?: number;
  /** Told of every result part and archive batch uploaded, with its size as sent (the owner's ledger counts it). */
  onUploaded?: (bytes: number, result?: TaskResult) => void;
  /** More services, started after the node's own (and stopped before them). */
  services?: (node: VolunteerNode) => NodeService[];
  log: Logger;
}

export interface NodeStatus {
  peerId: string;
  peers: number;
  crawlersKnown: number;
  coord: number[];
  height: number;
  error: number;
  running: number;
  queued: number;
  free: number;
  accepted: number;
  forwarded: number;
  rejected: number;
  pages: number;
  bytes: number;
  /** Bytes per second over the last status interval. */
  bandwidth: number;
  uploadsOk: number;
  uploadsFailed: number;
}

interface Held {
  order: TaskOrder;
  envelope: SignedEnvelope;
  /** The signed chain that handed the task to this node (migration), if any. */
  handover?: Handover[];
}

export class VolunteerNode {
  readonly libp2p: VolcrawlLibp2p;
  readonly peers = new PeerTable();
  readonly vivaldi: VivaldiNode;
  /** The coordinate this node publishes, filtered from Vivaldi's (app-coord.ts). */
  readonly app: AppCoordinate;
  readonly coords: CoordService;
  readonly announcer: Announcer;
  readonly receiver: TaskReceiver<Task>;
  readonly router: Router;
  /** Times the RTT to a crawler when a router checks that crawler's coordinate claim (overlay-check.ts). */
  readonly witness: WitnessService;
  readonly runner: TaskRunner;
  readonly managerLink: ManagerLink;
  readonly trimmer: ConnectionTrimmer;
  readonly keeper: PeerKeeper;
  private readonly o: VolunteerNodeOptions;
  private readonly held = new Map<string, Held>();
  private readonly migrated = new Set<string>();
  /** Tasks no crawler took on pause or leave, being reported back to the manager. */
  private readonly givenBack = new Set<string>();
  private readonly uploads = new Set<Promise<void>>();
  private draining = false;
  private stopped = false;
  private pausedTasks = false;
  private readonly services: NodeService[] = [];
  /** Services started so far (a failed start stops only these). */
  private started = 0;
  private pages = 0;
  private bytes = 0;
  private bwMark = { at: performance.now(), bytes: 0, rate: 0 };
  private uploadsOk = 0;
  private uploadsFailed = 0;

  private constructor(libp2p: VolcrawlLibp2p, o: VolunteerNodeOptions) {
    this.o = o;
    this.libp2p = libp2p;
    const seed = o.seed ?? 1;
    this.vivaldi = new VivaldiNode(o.vivaldi ?? {}, createRng(deriveSeed(seed, `vivaldi:${libp2p.peerId.toString()}`)));
    this.runner = o.createRunner({ upload: (r) => this.upload(r), archiveFor: (task) => this.archiveFor(task) });
    this.managerLink = new ManagerLink({ libp2p, manager: o.manager, bootstrap: parseBootstrap(o.bootstrap ?? []), checkMs: o.managerCheckMs, log: o.log });
    // What others hear: the coordinate, or with the test hook a false claim (Vivaldi itself still runs on the truth).
    const claimed = o.claim === undefined ? this.vivaldi : claimingVivaldi(this.vivaldi, o.claim);
    this.app = new AppCoordinate(o.appCoord ?? {});
    this.coords = new CoordService({
      libp2p,
      peers: this.peers,
      vivaldi: claimed,
      app: this.app,
      crawler: true,
      load: () => this.runner.load(),
      rng: createRng(deriveSeed(seed, `coord:${libp2p.peerId.toString()}`)),
      probeDelay: o.probeDelay,
      intervalMs: o.coordIntervalMs,
      fanout: o.coordFanout,
      adaptive: { ...o.coordPace, ...(o.coordMaxIntervalMs !== undefined ? { maxIntervalMs: o.coordMaxIntervalMs } : {}) },
      neighbours: o.neighbours,
      minWindow: o.coordMinWindow,
      log: o.log,
    });
    // Everything others read of this node's position is the published
    // coordinate: the witness's replies, the cells it announces, its own
    // position when forwarding, and the coordinate its uploads carry (the
    // manager places hosts from it) — the frame routers rank in.
    const coords = this.coords;
    const published = claimingVivaldi(claimed, () => coords.published!);
    this.witness = new WitnessService({ libp2p, peers: this.peers, vivaldi: published, log: o.log });
    this.announcer = new Announcer({
      libp2p,
      coord: () => published.coord,
      cells: o.cells,
      checkMs: o.announceCheckMs,
      minGapMs: o.announceMinGapMs,
      // Vivaldi's error estimate is relative: on a LAN, sub-millisecond RTTs
      // keep it high however right the coordinate is, so samples that agree
      // with the coordinate (the probing pace backed off) count as settled too.
      ready: () =>
        this.coords.samples >= (o.announceMinSamples ?? 10) &&
        (this.vivaldi.coord.error <= (o.announceMaxError ?? 0.5) || this.coords.settled),
      log: o.log,
    });
    this.receiver = new TaskReceiver<Task>({
      libp2p,
      manager: o.manager,
      parseTask,
      runner: this.runner,
      peers: this.peers,
      coord: () => published.coord,
      maxHops: o.maxHops,
      rateLimit: o.taskRateLimit,
      privateKey: o.privateKey,
      onAccepted: (order, envelope, task, handover) => {
        this.held.set(task.id, { order, envelope, ...(handover !== undefined ? { handover } : {}) });
        this.migrated.delete(task.id); // handed on earlier and back again: this node runs it now
        o.log.info({ task: task.id, host: order.host }, 'task accepted');
      },
      log: o.log,
    });
    // Trimming spares what depends on this node (connection-trim.ts): the
    // manager link, relays, tasks in flight; peers that probe us rank with our neighbours.
    const softMax = o.maxConnections ?? VOLUNTEER_MAX_CONNECTIONS;
    this.trimmer = new ConnectionTrimmer({
      libp2p,
      softMax,
      graceMs: o.connectionGraceMs,
      spare: (peer) => peer === o.manager,
      busyProtocols: [TASK_PROTOCOL, UPLOAD_PROTOCOL, ARCHIVE_PROTOCOL, HOLEPUNCH_PROTOCOL],
      value: (peer) => (this.coords.probesUs(peer) ? NEIGHBOUR_TAG_VALUE : 0),
      log: o.log,
    });
    // Below a floor of connections or known crawlers, the node re-bootstraps (peer-keeper.ts).
    const set = this.coords.neighbours.opts.near + this.coords.neighbours.opts.far;
    this.keeper = new PeerKeeper({
      libp2p,
      peers: this.peers,
      info: (peer) => this.coords.info(peer),
      bootstrap: parseBootstrap(o.bootstrap ?? []),
      minConnections: Math.max(1, Math.min(set, Math.floor(softMax / 2))),
      minCrawlers: set,
      rng: createRng(deriveSeed(seed, `keeper:${libp2p.peerId.toString()}`)),
      log: o.log,
    });
    this.router = new Router({
      libp2p,
      peers: this.peers,
      coords: this.coords,
      cells: o.cells,
      cacheTtlMs: o.routerCacheTtlMs,
      log: o.log,
    });
  }

  /** The node's services in start order: probing and the task protocol come
   * up before the bootstrap dial, so the first peers met can measure and task
   * this node at once; announcements and the manager link after it. */
  private ownServices(boot: Multiaddr[]): NodeService[] {
    return [
      { name: 'coordinates', start: () => this.coords.start(), stop: () => this.coords.stop() },
      { name: 'witness', start: () => this.witness.start(), stop: () => this.witness.stop() },
      { name: 'tasks', start: () => this.receiver.start(), stop: () => this.receiver.stopAccepting() },
      { name: 'bootstrap', start: () => (boot.length > 0 ? this.bootstrap(boot) : undefined) },
      { name: 'announcements', start: () => this.announcer.start(), stop: () => this.announcer.withdraw() },
      { name: 'manager link', start: () => this.managerLink.start(), stop: () => this.managerLink.stop() },
      { name: 'connection bound', start: () => this.trimmer.start(), stop: () => this.trimmer.stop() },
      { name: 'peer keeper', start: () => this.keeper.start(), stop: () => this.keeper.stop() },
    ];
  }

  /** Creates, starts and bootstraps a node. Throws BootstrapError when no
   * bootstrap peer can be reached (the node is stopped again first). */
  static async start(o: VolunteerNodeOptions): Promise<VolunteerNode> {
    const boot = parseBootstrap(o.bootstrap ?? []);
    // libp2p's bound is hard (it refuses inbound connections there): it gets
    // headroom, and the trimmer holds the soft bound (connection-trim.ts).
    const soft = o.maxConnections ?? VOLUNTEER_MAX_CONNECTIONS;
    const node = await startLibp2pPeer({ ...o, maxConnections: soft + connectionHeadroom(soft), pingIntervalMs: o.pingIntervalMs ?? VOLUNTEER_PING_INTERVAL_MS }, {
      build: (libp2p) => new VolunteerNode(libp2p, o),
      start: async (n) => {
        n.services.push(...n.ownServices(boot), ...(o.services?.(n) ?? []));
        for (const svc of n.services) {
          await svc.start();
          n.started++;
        }
      },
      // A volunteer also has its runner and announcements to stop.
      abandon: (n) => n.kill(),
    });
    o.log.info({ peerId: node.peerId, addrs: node.multiaddrs() }, 'node started');
    return node;
  }

  /** Dials every bootstrap peer at once and goes on as soon as one answers
   * (the others keep dialling in the background): waiting for all of them
   * held a join for the slowest — on a loaded machine, tens of seconds. */
  private async bootstrap(boot: Multiaddr[]): Promise<void> {
    const errors: string[] = [];
    const dials = boot.map((ma) =>
      this.libp2p.dial(ma, { signal: AbortSignal.timeout(this.o.bootstrapTimeoutMs ?? 15_000) }).then(
        () => undefined,
        (err: unknown) => {
          errors.push(`${ma.toString()}: ${(err as Error).message}`);
          throw err;
        },
      ),
    );
    try {
      await Promise.any(dials);
    } catch {
      throw new BootstrapError(`could not reach any bootstrap peer (${errors.join('; ')})`);
    }
    // kad-dht's own self-query then fills the routing table around our id.
  }

  get peerId(): string {
    return this.libp2p.peerId.toString();
  }

  multiaddrs(): string[] {
    return this.libp2p.getMultiaddrs().map(String);
  }

  /** Ids of tasks this node currently holds (accepted and not finished). */
  heldTasks(): string[] {
    return [...this.held.keys()];
  }

  /** A task whose order asks for its exchanges: they go to the order's storage node in batches. */
  private archiveFor(task: Task): TaskArchive {
    const send: SendBatch = async (batch, entries, raw) => {
      // Looked up when the first batch goes: the runner starts a task before the receiver records it as held.
      const h = this.held.get(task.id);
      if (h === undefined) throw new Error('task no longer held');
      await uploadArchiveBatch(this.libp2p, h.order.storage, { orderId: h.order.id, batch, ...(h.handover !== undefined ? { handover: h.handover } : {}), entries, raw });
      this.o.onUploaded?.(raw.byteLength);
    };
    return new TaskArchive(task.id, send, this.o.log);
  }

  private upload(result: TaskResult): Promise<void> {
    const p = this.doUpload(result);
    this.uploads.add(p);
    void p.catch(() => undefined).finally(() => this.uploads.delete(p));
    return p;
  }

  private async doUpload(result: TaskResult): Promise<void> {
    const back = this.givenBack.has(result.taskId);
    if (this.migrated.has(result.taskId) && !back) return; // completed elsewhere
    if (this.draining && result.status === 'cancelled' && !back) return; // aborted for migration
    const h = this.held.get(result.taskId);
    if (h === undefined) {
      this.o.log.warn({ task: result.taskId }, 'result for a task this node does not hold; dropped');
      return;
    }
    try {
      await uploadResult(this.libp2p, h.order.storage, {
        orderId: h.order.id,
        host: h.order.host,
        hostRttMs: result.stats?.rttMs ?? null,
        crawlerCoord: toWireCoord(this.coords.published!),
        ...(h.handover !== undefined ? { handover: h.handover } : {}),
        result,
      });
      this.uploadsOk++;
      // About what went up: the result as JSON (the wire adds framing and encryption, a few percent).
      if (this.o.onUploaded) this.o.onUploaded(Buffer.byteLength(JSON.stringify(result)), result);
    } catch (err) {
      this.uploadsFailed++;
      this.o.log.error({ task: result.taskId, err: String(err) }, 'upload failed');
      throw err;
    } finally {
      if (result.final) {
        this.held.delete(result.taskId);
        this.pages += result.stats?.pagesFetched ?? 0;
        this.bytes += result.stats?.bytes ?? 0;
      }
    }
  }

  status(): NodeStatus {
    const load = this.runner.load();
    const now = performance.now();
    const dt = (now - this.bwMark.at) / 1000;
    if (dt >= 1) {
      this.bwMark = { at: now, bytes: this.bytes, rate: (this.bytes - this.bwMark.bytes) / dt };
    }
    const c = this.vivaldi.coord;
    return {
      peerId: this.peerId,
      peers: this.libp2p.getPeers().length,
      crawlersKnown: this.peers.crawlers().length,
      coord: Array.from(c.vec),
      height: c.height,
      error: c.error,
      running: load.running,
      queued: load.queued,
      free: load.free,
      accepted: this.receiver.accepted,
      forwarded: this.receiver.forwarded,
      rejected: this.receiver.rejected,
      pages: this.pages,
      bytes: this.bytes,
      bandwidth: this.bwMark.rate,
      uploadsOk: this.uploadsOk,
      uploadsFailed: this.uploadsFailed,
    };
  }

  /** Graceful shutdown: stop accepting, migrate queued and running tasks to
   * nearby crawlers, withdraw announcements, say goodbye, stop — all within
   * `timeoutMs`. Returns what happened to each task. */
  async shutdown(timeoutMs = 20_000): Promise<{ migrated: string[]; lost: string[] }> {
    if (this.stopped) return { migrated: [], lost: [] };
    // Filled as each hand-over settles, so a shutdown cut short by its deadline
    // still reports what moved; what had not settled by then is reported lost
    // (the manager re-issues it after its deadline).
    const result = { migrated: [] as string[], lost: [] as string[] };
    let drained: string[] = [];
    const deadline = Date.now() + timeoutMs;
    const work = (async () => {
      this.receiver.stopAccepting();
      await this.announcer.withdraw();
      this.draining = true;
      const tasks = await this.runner.drain();
      drained = tasks.map((t) => t.id);
      await this.handOn(tasks, result);
      // Let uploads of tasks that finished before the drain complete.
      await Promise.race([Promise.allSettled([...this.uploads]), sleepUntil(deadline - 2_000)]);
      await Promise.all(this.peers.crawlers().map((p) => this.coords.bye(p.id)));
    })();
    await Promise.race([work.catch((err: unknown) => this.o.log.error({ err: String(err) }, 'shutdown step failed')), sleepUntil(deadline - 1_000)]);
    await this.kill();
    const { migrated, lost } = result;
    for (const id of drained) if (!migrated.includes(id) && !lost.includes(id)) lost.push(id);
    return { migrated: [...migrated], lost: [...lost] };
  }

  /** Routes each task to another crawler near this one, with a hand-over
   * signed by this node, exactly as on leave; a task no one takes is left to
   * the manager, which re-issues it after its deadline. */
  private async handOn(tasks: Task[], into?: { migrated: string[]; lost: string[] }): Promise<{ migrated: string[]; lost: string[] }> {
    const { migrated, lost } = into ?? { migrated: [], lost: [] };
    this.o.log.info({ tasks: tasks.length }, 'migrating tasks');
    await Promise.all(
      tasks.map(async (t) => {
        const h = this.held.get(t.id);
        if (h === undefined) {
          lost.push(t.id);
          return;
        }
        this.migrated.add(t.id);
        // A crawler near this one may forward the order straight back: the
        // receiver must then treat it as new (a paused node passes it on), not
        // answer "accepted" for a task it no longer holds.
        this.receiver.forget(h.order.id);
        let r: RouteResult | undefined;
        try {
          // The new holder gets a hand-over signed by this node (appended to the
          // chain that brought the task here), so the storage node accepts its upload.
          const handover = async (to: string): Promise<Handover[]> => [
            ...(h.handover ?? []).slice(-(MAX_HANDOVER_LINKS - 1)),
            await signHandover(this.o.privateKey, this.peerId, h.order.id, to),
          ];
          r = await this.router.route(h.envelope, h.order, { exclude: new Set([this.peerId]), handover });
        } catch (err) {
          this.o.log.warn({ task: t.id, err: String(err) }, 'migration failed');
        }
        if (r?.status === 'accepted') {
          migrated.push(t.id);
          this.held.delete(t.id);
          this.o.log.info({ task: t.id, to: r.by }, 'task migrated');
        } else {
          lost.push(t.id);
          // Told to the manager at once (a task ended 'cancelled' is failed and
          // reissued), instead of being left to its deadline.
          this.givenBack.add(t.id);
          const now = Date.now();
          const ok = await this.upload({ ...emptyResult(t, 'cancelled', now, now), reason: `the volunteer stepped aside and no crawler nearby took the task (${r?.status ?? 'error'})` }).then(
            () => true,
            () => false,
          );
          this.givenBack.delete(t.id);
          this.held.delete(t.id);
          this.o.log.warn({ task: t.id, status: r?.status, toldManager: ok }, ok ? 'task could not be migrated; given back to the manager' : 'task could not be migrated; the manager will reissue it after its deadline');
        }
      }),
    );
    return { migrated, lost };
  }

  /** Whether the node is paused (takeTasks(false)). */
  get paused(): boolean {
    return this.pausedTasks;
  }

  /**
   * The owner's pause and resume, without leaving the overlay. Paused, the
   * runner takes nothing (orders are forwarded to other crawlers, the load
   * this node reports has no free slot), its cell announcements are withdrawn
   * so routers stop finding it, and its running and queued tasks are handed
   * on as on leave; the coordinate service keeps probing (its pace backs off
   * once settled), so the identity and coordinate stay warm. Resumed, it
   * takes tasks and announces itself again.
   */
  async takeTasks(on: boolean): Promise<{ migrated: string[]; lost: string[] }> {
    if (this.stopped || on === !this.pausedTasks) return { migrated: [], lost: [] };
    if (on) {
      this.pausedTasks = false;
      this.runner.resume?.();
      this.announcer.start();
      this.o.log.info('taking tasks again');
      return { migrated: [], lost: [] };
    }
    this.pausedTasks = true;
    const tasks = (await this.runner.pause?.()) ?? [];
    await this.announcer.withdraw();
    const r = await this.handOn(tasks);
    this.o.log.info({ migrated: r.migrated.length, lost: r.lost.length }, 'paused: tasks handed on');
    return r;
  }

  /** Stops at once: nothing migrated, nothing acknowledged (tests use it as a crash). */
  async kill(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    // Orders arriving while the services stop are answered 'leaving'.
    this.receiver.stopAccepting();
    for (const svc of this.services.slice(0, this.started).reverse()) {
      try {
        await svc.stop?.();
      } catch (err) {
        this.o.log.debug({ service: svc.name, err: String(err) }, 'service stop failed');
      }
    }
    await this.runner.close().catch(() => undefined);
    await stopLibp2pQuietly(this.libp2p);
  }
}

function sleepUntil(at: number): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, Math.max(0, at - Date.now()));
    t.unref?.();
  });
}

/** Connections libp2p accepts above the soft bound before it refuses inbound
 * ones: room for joiners and for the DHT queries between two trims. */
export function connectionHeadroom(soft: number): number {
  return Math.max(16, Math.ceil(soft / 2));
}
