// What the in-process TestNet (harness.ts) and the multi-process ProcessNet
// (process-net.ts) share: which dataset rows are crawlers and which are hosts,
// identities generated up front (so every node's imposed probe delays are known
// before any node starts, wherever it runs), the volunteer options, the manager
// (signs and routes orders) and storage (receives uploads) nodes in this
// process, and the dataset-side helpers (RTTs, nearest crawler, host placement,
// signed orders). Subclasses say where the crawlers run and how to read their
// coordinates.
import pino, { type Logger } from 'pino';
import { generateKeyPair } from '@libp2p/crypto/keys';
import { peerIdFromPrivateKey } from '@libp2p/peer-id';
import { multiaddr } from '@multiformats/multiaddr';
import type { PrivateKey } from '@libp2p/interface';
import { loadDefaultLatency, placeHost, type AdaptiveProbeOptions, type AppCoordOptions, type Coordinate, type LatencyMatrix, type VivaldiOptions } from '../../src/coords/index.js';
import { createRng, deriveSeed, type Rng } from '../../src/rng.js';
import type { ResultSink } from '../../src/crawler/task.js';
import type { TaskRunner, VolunteerNodeOptions } from '../../src/node/node.js';
import { createVolcrawlLibp2p, type VolcrawlLibp2p } from '../../src/dht/libp2p.js';
import { CoordService } from '../../src/dht/coord-protocol.js';
import { PeerTable, toWireCoord } from '../../src/dht/peers.js';
import { Router, type RouteResult } from '../../src/dht/router.js';
import { signOrder, type SignedEnvelope, type TaskOrder } from '../../src/dht/signing.js';
import { UPLOAD_PROTOCOL, UploadReceiver, type UploadMessage } from '../../src/dht/upload.js';
import type { CellOptions } from '../../src/dht/cells.js';
import type { NeighbourOptions } from '../../src/dht/neighbours.js';

/** Volunteer settings that are plain data, so a child process can take them too. */
export interface VolunteerTuning {
  seed?: number;
  coordIntervalMs?: number;
  coordFanout?: number;
  /** The probing pace (src/coords/adaptive.ts). */
  coordPace?: Partial<AdaptiveProbeOptions>;
  /** Bounds of each volunteer's neighbour set (src/dht/neighbours.ts). */
  neighbours?: Partial<NeighbourOptions>;
  /** Connections each volunteer keeps at most. */
  maxConnections?: number;
  /** Connections younger than this are not trimmed, ms. */
  connectionGraceMs?: number;
  providerTtlMs?: number;
  vivaldi?: Partial<VivaldiOptions>;
  /** The published coordinate's filter (src/coords/app-coord.ts). */
  appCoord?: Partial<AppCoordOptions>;
  cells?: CellOptions;
  taskRateLimit?: { perSecond: number; burst: number };
  routerCacheTtlMs?: number;
}

export interface NetOptions extends VolunteerTuning {
  nodes: number;
  /** The manager's Router's confirmTop (router.ts; default: the Router's). */
  routerConfirmTop?: number;
  matrix?: LatencyMatrix;
  /** Scale imposed delays (1 = the dataset). */
  delayScale?: number;
  log?: string;
}

export interface ManagerSide {
  key: PrivateKey;
  id: string;
  libp2p: VolcrawlLibp2p;
  peers: PeerTable;
  coords: CoordService;
  router: Router;
}

/** The options a test-network volunteer runs with, wherever it runs. */
export function volunteerOptions(
  t: VolunteerTuning,
  i: number,
  p: {
    privateKey: PrivateKey;
    manager: string;
    bootstrap: string[];
    probeDelay: (remote: string) => number;
    createRunner: (sink: ResultSink) => TaskRunner;
    log: Logger;
    metrics?: VolunteerNodeOptions['metrics'];
  },
): VolunteerNodeOptions {
  return {
    ...p,
    listen: ['/ip4/127.0.0.1/tcp/0'],
    allowPrivateAddrs: true,
    seed: deriveSeed(t.seed ?? 7, `node${i}`),
    vivaldi: t.vivaldi,
    ...(t.appCoord !== undefined ? { appCoord: t.appCoord } : {}),
    coordIntervalMs: t.coordIntervalMs ?? 1000,
    coordFanout: t.coordFanout ?? 2,
    coordPace: t.coordPace,
    neighbours: t.neighbours,
    ...(t.maxConnections !== undefined ? { maxConnections: t.maxConnections } : {}),
    ...(t.connectionGraceMs !== undefined ? { connectionGraceMs: t.connectionGraceMs } : {}),
    // Test nodes share CPUs (one process, or many processes on few cores): the
    // queueing that adds only ever inflates an RTT, so a longer min-filter
    // window removes it.
    coordMinWindow: 8,
    providerTtlMs: t.providerTtlMs ?? 300_000,
    announceCheckMs: 1000,
    announceMinGapMs: 20_000,
    cells: t.cells,
    taskRateLimit: t.taskRateLimit,
    routerCacheTtlMs: t.routerCacheTtlMs,
    inboundConnectionThreshold: 10_000,
    bootstrapTimeoutMs: 120_000,
    timeoutScale: 6,
  };
}

/** The probe-delay hook over delays precomputed per remote peer id. */
export function probeDelayFrom(delays: Record<string, number>): (remote: string) => number {
  return (remote) => delays[remote] ?? 0;
}

export abstract class NetBase {
  /** Dataset index of node i. */
  readonly index: number[] = [];
  /** Dataset indices not used by crawlers: hosts. */
  readonly hosts: number[] = [];
  readonly uploads: UploadMessage[] = [];
  manager!: ManagerSide;
  storage!: { libp2p: VolcrawlLibp2p; receiver: UploadReceiver; id: string };
  readonly matrix: LatencyMatrix;
  readonly rng: Rng;
  readonly log: Logger;
  /** Identity of node i, generated before any node starts. */
  protected keys: PrivateKey[] = [];
  protected managerKey!: PrivateKey;
  private readonly datasetByPeer = new Map<string, number>();
  private readonly nodeByPeer = new Map<string, number>();
  private seq = 0;

  constructor(readonly o: NetOptions) {
    this.matrix = o.matrix ?? loadDefaultLatency();
    this.rng = createRng(o.seed ?? 7);
    this.log = pino({ level: o.log ?? process.env.VOLCRAWL_TEST_LOG ?? 'silent' });
    // Pick crawler and host indices among nodes with complete rows.
    const n = this.matrix.n;
    const order = Array.from({ length: n }, (_, i) => i);
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(this.rng.next() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    this.index.push(...order.slice(0, o.nodes));
    this.hosts.push(...order.slice(o.nodes));
  }

  /** Live (Vivaldi, system-level) coordinate of node i. */
  abstract coord(i: number): Coordinate;

  /** The coordinate node i publishes (what peers store and route on; app-coord.ts). */
  abstract published(i: number): Coordinate;

  /** How many times node i's published coordinate moved (after its first window). */
  abstract publishedChanges(i: number): number;

  /** How many times node i has announced its cells. */
  abstract announcements(i: number): number;

  /** The names of the cells node i has announced (at the last refresh). */
  abstract announcedCells(i: number): string[];

  /** Brings `coord` and `announcements` up to date (they are live in-process). */
  async refresh(): Promise<void> {}

  get managerId(): string {
    return peerIdFromPrivateKey(this.managerKey).toString();
  }

  /** Generates the manager's and every crawler's key. */
  protected async generateKeys(): Promise<void> {
    this.managerKey = await generateKeyPair('Ed25519');
    this.keys = await Promise.all(this.index.map(() => generateKeyPair('Ed25519')));
    this.keys.forEach((k, i) => {
      const peer = peerIdFromPrivateKey(k).toString();
      this.datasetByPeer.set(peer, this.index[i]!);
      this.nodeByPeer.set(peer, i);
    });
  }

  /** The delay node i imposes on its reply to a probe from each other crawler. */
  protected probeDelays(i: number): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [peer, j] of this.datasetByPeer) {
      const d = this.rtt(this.index[i]!, j);
      if (Number.isFinite(d) && d > 0) out[peer] = d * (this.o.delayScale ?? 1);
    }
    return out;
  }

  /** Starts the manager and storage nodes, each dialling some of `crawlerAddrs`. */
  protected async startServices(crawlerAddrs: string[]): Promise<void> {
    const key = this.managerKey;
    const mlibp2p = await createVolcrawlLibp2p({ privateKey: key, listen: ['/ip4/127.0.0.1/tcp/0'], allowPrivateAddrs: true, providerTtlMs: this.o.providerTtlMs ?? 300_000, inboundConnectionThreshold: 10_000, timeoutScale: 6 });
    const peers = new PeerTable();
    const coords = new CoordService({ libp2p: mlibp2p, peers, crawler: false, rng: createRng(1), log: this.log });
    await coords.start();
    const dialRng = createRng(deriveSeed(this.o.seed ?? 7, 'service dials'));
    await dialAny(mlibp2p, crawlerAddrs, dialRng);
    const router = new Router({ libp2p: mlibp2p, peers, coords, cells: this.o.cells, cacheTtlMs: this.o.routerCacheTtlMs, ...(this.o.routerConfirmTop !== undefined ? { confirmTop: this.o.routerConfirmTop } : {}), log: this.log });
    this.manager = { key, id: this.managerId, libp2p: mlibp2p, peers, coords, router };
    const skey = await generateKeyPair('Ed25519');
    const slibp2p = await createVolcrawlLibp2p({ privateKey: skey, listen: ['/ip4/127.0.0.1/tcp/0'], allowPrivateAddrs: true, inboundConnectionThreshold: 10_000, timeoutScale: 6 });
    const receiver = new UploadReceiver({ libp2p: slibp2p, onUpload: (m) => void this.uploads.push(m), log: this.log });
    await receiver.start();
    await dialAny(slibp2p, crawlerAddrs, dialRng);
    this.storage = { libp2p: slibp2p, receiver, id: slibp2p.peerId.toString() };
  }

  protected async stopServices(): Promise<void> {
    await this.manager?.coords.stop();
    await this.manager?.libp2p.stop();
    await this.storage?.libp2p.stop();
  }

  rtt(a: number, b: number): number {
    return this.matrix.rtt[a * this.matrix.n + b]!;
  }

  /** Peer id of node i. */
  peerIdOf(i: number): string {
    return peerIdFromPrivateKey(this.keys[i]!).toString();
  }

  /** Dataset index of a peer, if it is one of the crawlers. */
  indexOf(peer: string): number | undefined {
    return this.datasetByPeer.get(peer);
  }

  /** Node number of a peer, if it is one of the crawlers. */
  nodeOf(peer: string): number | undefined {
    return this.nodeByPeer.get(peer);
  }

  /** Places dataset host `h` from its RTTs to the live crawlers, as the
   * manager would: from the coordinates they publish (their uploads carry
   * those), or from `coordOf`. */
  placeHost(h: number, alive: (i: number) => boolean = () => true, coordOf: (i: number) => Coordinate = (i) => this.published(i)): Coordinate {
    const landmarks = this.index
      .map((d, i) => ({ coord: coordOf(i), rttMs: this.rtt(h, d), i }))
      .filter((l) => alive(l.i) && l.rttMs > 0);
    return placeHost(landmarks, this.o.vivaldi ?? {}, createRng(deriveSeed(this.o.seed ?? 7, `host${h}`)));
  }

  hostName(h: number): string {
    return `h${h}.volcrawl.test`;
  }

  makeTask(h: number, id?: string): Record<string, unknown> {
    const tid = id ?? `t${++this.seq}-${h}`;
    const origin = `http://${this.hostName(h)}`;
    return { id: tid, scope: { origin, pathPrefixes: ['/'] }, seeds: [`${origin}/`], maxDepth: 1, deadline: Date.now() + 3_600_000 };
  }

  /** A signed order for host `h` (coordinate placed from live crawlers unless `coord` is false). */
  async order(h: number, opts: { coord?: boolean; id?: string; key?: PrivateKey; issuer?: string; task?: unknown } = {}): Promise<{ order: TaskOrder; envelope: SignedEnvelope }> {
    const task = opts.task ?? this.makeTask(h, opts.id);
    const order: TaskOrder = {
      v: 1,
      id: (task as { id?: string }).id ?? `o${++this.seq}`,
      issuer: opts.issuer ?? this.manager.id,
      issuedAt: Date.now(),
      expiresAt: Date.now() + 3_600_000,
      host: this.hostName(h),
      ...(opts.coord === false ? {} : { hostCoord: toWireCoord(this.placeHost(h)) }),
      storage: { peer: this.storage.id, protocol: UPLOAD_PROTOCOL, addrs: this.storage.libp2p.getMultiaddrs().map(String) },
      task,
    };
    return { order, envelope: await signOrder(order, opts.key ?? this.manager.key) };
  }

  async route(h: number, opts: { coord?: boolean; hash?: boolean } = {}): Promise<RouteResult & { order: TaskOrder }> {
    const { order, envelope } = await this.order(h, opts);
    const r = await this.manager.router.route(envelope, order, { hash: opts.hash });
    return { ...r, order };
  }

  /** The live crawler with the smallest true RTT to host h. */
  nearest(h: number, alive: (i: number) => boolean = () => true): { i: number; rtt: number } {
    let best = { i: -1, rtt: Infinity };
    this.index.forEach((d, i) => {
      const r = this.rtt(h, d);
      if (alive(i) && r > 0 && r < best.rtt) best = { i, rtt: r };
    });
    return best;
  }
}

/** Dials three crawlers drawn at random, at once, until one answers (up to ten
 * rounds): a loaded loopback network drops some dials, and the first nodes
 * (every joiner's bootstrap peers) are the busiest. */
async function dialAny(libp2p: VolcrawlLibp2p, addrs: string[], rng: Rng): Promise<void> {
  let lastErr: unknown;
  for (let attempt = 0; attempt < 10; attempt++) {
    const picks = new Set<string>();
    for (let tries = 0; picks.size < Math.min(3, addrs.length) && tries < 30; tries++) picks.add(addrs[Math.floor(rng.next() * addrs.length)]!);
    try {
      await Promise.any([...picks].map((a) => libp2p.dial(multiaddr(a), { signal: AbortSignal.timeout(60_000) })));
      return;
    } catch (err) {
      lastErr = err instanceof AggregateError ? err.errors[0] : err;
    }
  }
  throw lastErr instanceof Error ? lastErr : new Error('could not dial the test network');
}
