// A local test network: N real libp2p volunteer nodes on loopback in this
// process, joined through one bootstrap node, with the latency dataset imposed
// on the coordinate protocol (each node holds its reply to a probe from node j
// for rtt(i, j) ms), plus a manager node (signs and routes orders) and a storage
// node (receives uploads).
import pino from 'pino';
import { generateKeyPair } from '@libp2p/crypto/keys';
import { peerIdFromPrivateKey } from '@libp2p/peer-id';
import type { PrivateKey } from '@libp2p/interface';
import { loadDefaultLatency, placeHost, type Coordinate, type LatencyMatrix, type VivaldiOptions } from '../../src/coords/index.js';
import { createRng, deriveSeed, type Rng } from '../../src/rng.js';
import type { ResultSink, Task } from '../../src/crawler/task.js';
import { VolunteerNode, type TaskRunner } from '../../src/node/node.js';
import { createVolcrawlLibp2p, type VolcrawlLibp2p } from '../../src/dht/libp2p.js';
import { CoordService } from '../../src/dht/coord-protocol.js';
import { PeerTable, toWireCoord } from '../../src/dht/peers.js';
import { Router, type RouteResult } from '../../src/dht/router.js';
import { signOrder, type SignedEnvelope, type TaskOrder } from '../../src/dht/signing.js';
import { UPLOAD_PROTOCOL, UploadReceiver, type UploadMessage } from '../../src/dht/upload.js';
import type { CellOptions } from '../../src/dht/cells.js';
import { FakeRunner, type FakeRunnerOptions } from './fake-runner.js';

export interface TestNetOptions {
  nodes: number;
  seed?: number;
  /** Runner per node; default a FakeRunner with `runner` options. */
  createRunner?: (i: number, sink: ResultSink) => TaskRunner;
  runner?: FakeRunnerOptions | ((i: number) => FakeRunnerOptions);
  coordIntervalMs?: number;
  coordFanout?: number;
  providerTtlMs?: number;
  vivaldi?: Partial<VivaldiOptions>;
  cells?: CellOptions;
  matrix?: LatencyMatrix;
  /** Scale imposed delays (1 = the dataset). */
  delayScale?: number;
  log?: string;
  taskRateLimit?: { perSecond: number; burst: number };
  routerCacheTtlMs?: number;
}

export interface ManagerSide {
  key: PrivateKey;
  id: string;
  libp2p: VolcrawlLibp2p;
  peers: PeerTable;
  coords: CoordService;
  router: Router;
}

export class TestNet {
  readonly nodes: VolunteerNode[] = [];
  readonly runners: TaskRunner[] = [];
  /** Dataset index of node i. */
  readonly index: number[] = [];
  /** Dataset indices not used by crawlers: hosts. */
  readonly hosts: number[] = [];
  readonly uploads: UploadMessage[] = [];
  manager!: ManagerSide;
  storage!: { libp2p: VolcrawlLibp2p; receiver: UploadReceiver; id: string };
  readonly matrix: LatencyMatrix;
  readonly rng: Rng;
  private readonly byPeer = new Map<string, number>();
  private seq = 0;
  readonly log;

  constructor(readonly o: TestNetOptions) {
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

  rtt(a: number, b: number): number {
    return this.matrix.rtt[a * this.matrix.n + b]!;
  }

  /** Dataset index of a peer, if it is one of the crawlers. */
  indexOf(peer: string): number | undefined {
    return this.byPeer.get(peer);
  }

  nodeById(peer: string): VolunteerNode | undefined {
    const i = this.nodes.findIndex((n) => n.peerId === peer);
    return i >= 0 ? this.nodes[i] : undefined;
  }

  private probeDelay(i: number): (remote: string) => number {
    return (remote) => {
      const j = this.byPeer.get(remote);
      if (j === undefined) return 0;
      const d = this.rtt(this.index[i]!, j);
      return Number.isFinite(d) && d > 0 ? d * (this.o.delayScale ?? 1) : 0;
    };
  }

  async start(): Promise<void> {
    const mkey = await generateKeyPair('Ed25519');
    const mid = peerIdFromPrivateKey(mkey).toString();
    const keys = await Promise.all(this.index.map(() => generateKeyPair('Ed25519')));
    keys.forEach((k, i) => this.byPeer.set(peerIdFromPrivateKey(k).toString(), this.index[i]!));
    const mk = (i: number, bootstrap: string[]) =>
      VolunteerNode.start({
        privateKey: keys[i]!,
        manager: mid,
        createRunner: (sink) => {
          const r =
            this.o.createRunner?.(i, sink) ??
            new FakeRunner(sink, typeof this.o.runner === 'function' ? this.o.runner(i) : this.o.runner ?? {});
          this.runners[i] = r;
          return r;
        },
        listen: ['/ip4/127.0.0.1/tcp/0'],
        bootstrap,
        allowPrivateAddrs: true,
        seed: deriveSeed(this.o.seed ?? 7, `node${i}`),
        vivaldi: this.o.vivaldi,
        probeDelay: this.probeDelay(i),
        coordIntervalMs: this.o.coordIntervalMs ?? 1000,
        coordFanout: this.o.coordFanout ?? 2,
        // One process hosts every node: its event loop adds queueing delay, which
        // only ever inflates an RTT, so a longer min-filter window removes it.
        coordMinWindow: 8,
        providerTtlMs: this.o.providerTtlMs ?? 300_000,
        announceCheckMs: 1000,
        announceMinGapMs: 20_000,
        announceMaxError: process.env.NOANN ? -1 : undefined,
        cells: this.o.cells,
        taskRateLimit: this.o.taskRateLimit,
        routerCacheTtlMs: this.o.routerCacheTtlMs,
        inboundConnectionThreshold: 10_000,
        bootstrapTimeoutMs: 120_000,
        timeoutScale: 6,
        log: this.log.child({ node: i }),
      });
    const first = await mk(0, []);
    this.nodes[0] = first;
    const boot = first.multiaddrs().filter((a) => a.includes('127.0.0.1'));
    for (let b = 1; b < this.index.length; b += 4) {
      const batch = [];
      for (let i = b; i < Math.min(b + 4, this.index.length); i++) batch.push(mk(i, boot).then((n) => (this.nodes[i] = n)));
      await Promise.all(batch);
    }
    // Manager: signs orders, routes them; not a crawler.
    const mlibp2p = await createVolcrawlLibp2p({ privateKey: mkey, listen: ['/ip4/127.0.0.1/tcp/0'], allowPrivateAddrs: true, providerTtlMs: this.o.providerTtlMs ?? 300_000, inboundConnectionThreshold: 10_000, timeoutScale: 6 });
    const peers = new PeerTable();
    const coords = new CoordService({ libp2p: mlibp2p, peers, crawler: false, rng: createRng(1), log: this.log });
    await coords.start();
    await dialAny(mlibp2p, this.nodes);
    const router = new Router({ libp2p: mlibp2p, peers, coords, cells: this.o.cells, cacheTtlMs: this.o.routerCacheTtlMs ?? 2_000, log: this.log });
    this.manager = { key: mkey, id: mid, libp2p: mlibp2p, peers, coords, router };
    // Storage: receives uploads.
    const skey = await generateKeyPair('Ed25519');
    const slibp2p = await createVolcrawlLibp2p({ privateKey: skey, listen: ['/ip4/127.0.0.1/tcp/0'], allowPrivateAddrs: true, inboundConnectionThreshold: 10_000, timeoutScale: 6 });
    const receiver = new UploadReceiver({ libp2p: slibp2p, onUpload: (m) => void this.uploads.push(m), log: this.log });
    await receiver.start();
    await dialAny(slibp2p, this.nodes);
    this.storage = { libp2p: slibp2p, receiver, id: slibp2p.peerId.toString() };
  }

  /** Live coordinates of node i. */
  coord(i: number): Coordinate {
    return this.nodes[i]!.vivaldi.coord;
  }

  /** Places dataset host `h` from its RTTs to the live crawlers, as the manager would. */
  placeHost(h: number, alive: (i: number) => boolean = () => true): Coordinate {
    const landmarks = this.nodes
      .map((n, i) => ({ coord: n.vivaldi.coord, rttMs: this.rtt(h, this.index[i]!), i }))
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

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.kill()));
    await this.manager?.coords.stop();
    await this.manager?.libp2p.stop();
    await this.storage?.libp2p.stop();
  }
}

/** Dials a few of the nodes, retrying: a loaded loopback network drops some dials. */
async function dialAny(libp2p: VolcrawlLibp2p, nodes: VolunteerNode[]): Promise<void> {
  let ok = 0;
  let lastErr: unknown;
  for (let attempt = 0; attempt < 10 && ok === 0; attempt++) {
    for (const n of nodes.slice(attempt % nodes.length, (attempt % nodes.length) + 3)) {
      try {
        await libp2p.dial(n.libp2p.getMultiaddrs()[0]!, { signal: AbortSignal.timeout(60_000) });
        ok++;
      } catch (err) {
        lastErr = err;
      }
    }
  }
  if (ok === 0) throw lastErr instanceof Error ? lastErr : new Error('could not dial the test network');
}

export async function waitFor(cond: () => boolean | Promise<boolean>, timeoutMs: number, what = 'condition', stepMs = 200): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await cond()) return;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

export type { Task };
