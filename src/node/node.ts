// A volunteer node: the libp2p stack, the coordinate protocol feeding Vivaldi,
// coordinate-cell announcements, the task protocol in front of a task runner
// (src/crawler's TaskManager), a status snapshot and graceful shutdown with
// task migration. The parts with a life cycle are NodeServices, started in
// order and stopped in reverse; more can be plugged in
// (`VolunteerNodeOptions.services`). This module assembles them and runs the
// life cycle; the held tasks, their uploads and migration are task-custody.ts,
// bootstrap addresses bootstrap.ts, the types node-types.ts (re-exported here; the
// options stay here: they name the node their services are given).
import type { Multiaddr } from '@multiformats/multiaddr';
import type { Logger } from 'pino';
import type { AdaptiveProbeOptions, AppCoordOptions, Coordinate, VivaldiOptions } from '../coords/index.js';
import type { ResultSink, TaskResult } from '../crawler/task.js';
import type { Libp2pOptions } from '../dht/libp2p.js';
import type { CellOptions } from '../dht/cells.js';
import type { NeighbourOptions } from '../dht/neighbours.js';
import type { RateLimitOptions } from '../dht/rate-limit.js';
import { AppCoordinate, VivaldiNode } from '../coords/index.js';
import { claimingVivaldi } from './test-plugin.js';
import { createRng, deriveSeed } from '../rng.js';
import type { Task } from '../crawler/task.js';
import { parseTask } from '../crawler/task.js';
import { ConnectionTrimmer } from '../dht/connection-trim.js';
import { PeerKeeper } from '../dht/peer-keeper.js';
import { startLibp2pPeer, stopLibp2pQuietly, VOLUNTEER_MAX_CONNECTIONS, VOLUNTEER_PING_INTERVAL_MS, type VolcrawlLibp2p } from '../dht/libp2p.js';
import { ManagerLink } from './manager-link.js';
import { PeerTable } from '../dht/peers.js';
import { CoordService, NEIGHBOUR_TAG_VALUE } from '../dht/coord-protocol.js';
import { Announcer } from '../dht/announce.js';
import { TASK_PROTOCOL, TaskReceiver } from '../dht/task-protocol.js';
import { Router } from '../dht/router.js';
import { WitnessService } from '../dht/overlay-check.js';
import { UPLOAD_PROTOCOL } from '../dht/upload.js';
import { ARCHIVE_PROTOCOL } from '../dht/archive-upload.js';
import { HOLEPUNCH_PROTOCOL } from '../dht/holepunch/coordination.js';
import { dialBootstrap, parseBootstrap } from './bootstrap.js';
import type { NodeService, NodeStatus, TaskRunner } from './node-types.js';
import { TaskCustody } from './task-custody.js';

export { BootstrapError, parseBootstrap } from './bootstrap.js';
export type { NodeService, NodeStatus, TaskRunner } from './node-types.js';

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
  /** The tasks this node holds, their uploads and their hand-over on leave or pause. */
  private readonly custody: TaskCustody;
  private readonly o: VolunteerNodeOptions;
  private stopped = false;
  private pausedTasks = false;
  private readonly services: NodeService[] = [];
  /** Services started so far (a failed start stops only these). */
  private started = 0;
  private bwMark = { at: performance.now(), bytes: 0, rate: 0 };

  private constructor(libp2p: VolcrawlLibp2p, o: VolunteerNodeOptions) {
    this.o = o;
    this.libp2p = libp2p;
    const seed = o.seed ?? 1;
    this.vivaldi = new VivaldiNode(o.vivaldi ?? {}, createRng(deriveSeed(seed, `vivaldi:${libp2p.peerId.toString()}`)));
    this.custody = new TaskCustody({
      libp2p,
      privateKey: o.privateKey,
      coord: () => this.coords.published!,
      route: (envelope, order, opts) => this.router.route(envelope, order, opts),
      forget: (orderId) => this.receiver.forget(orderId),
      onUploaded: o.onUploaded,
      log: o.log,
    });
    this.runner = o.createRunner({ upload: (r) => this.custody.upload(r), archiveFor: (task) => this.custody.archiveFor(task) });
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
        this.custody.hold(task.id, order, envelope, handover);
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
      { name: 'bootstrap', start: () => (boot.length > 0 ? dialBootstrap(this.libp2p, boot, this.o.bootstrapTimeoutMs) : undefined) },
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

  get peerId(): string {
    return this.libp2p.peerId.toString();
  }

  multiaddrs(): string[] {
    return this.libp2p.getMultiaddrs().map(String);
  }

  /** Ids of tasks this node currently holds (accepted and not finished). */
  heldTasks(): string[] {
    return this.custody.ids();
  }

  status(): NodeStatus {
    const load = this.runner.load();
    const now = performance.now();
    const dt = (now - this.bwMark.at) / 1000;
    if (dt >= 1) {
      this.bwMark = { at: now, bytes: this.custody.bytes, rate: (this.custody.bytes - this.bwMark.bytes) / dt };
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
      pages: this.custody.pages,
      bytes: this.custody.bytes,
      bandwidth: this.bwMark.rate,
      uploadsOk: this.custody.uploadsOk,
      uploadsFailed: this.custody.uploadsFailed,
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
      this.custody.startDraining();
      const tasks = await this.runner.drain();
      drained = tasks.map((t) => t.id);
      await this.custody.handOn(tasks, result);
      // Let uploads of tasks that finished before the drain complete.
      await Promise.race([this.custody.uploadsSettled(), sleepUntil(deadline - 2_000)]);
      await Promise.all(this.peers.crawlers().map((p) => this.coords.bye(p.id)));
    })();
    await Promise.race([work.catch((err: unknown) => this.o.log.error({ err: String(err) }, 'shutdown step failed')), sleepUntil(deadline - 1_000)]);
    await this.kill();
    const { migrated, lost } = result;
    for (const id of drained) if (!migrated.includes(id) && !lost.includes(id)) lost.push(id);
    return { migrated: [...migrated], lost: [...lost] };
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
    const r = await this.custody.handOn(tasks);
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
