// A test network whose volunteers run in child processes (node-child.ts), a
// few per process, so that no single event loop hosts them all: on a small
// machine, one loop carrying 50 libp2p nodes lags by hundreds of ms and that
// queueing inflates every probe RTT. The dataset side, identities (generated
// here and handed to the children) and the manager and storage nodes (in this
// process) are NetBase's, as in TestNet. Crawlers run FakeRunners.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { privateKeyToProtobuf } from '@libp2p/crypto/keys';
import type { Coordinate } from '../../src/coords/index.js';
import { fromWireCoord } from '../../src/dht/peers.js';
import type { WireCoord } from '../../src/dht/signing.js';
import type { FakeRunnerOptions } from './fake-runner.js';
import { sumActivity, type Activity } from './activity.js';
import { NetBase, type NetOptions, type VolunteerTuning } from './net-base.js';

// The IPC protocol between ProcessNet and node-child.ts.
export interface StartRequest {
  t: 'start';
  manager: string;
  tuning: VolunteerTuning;
  runner: FakeRunnerOptions;
  log: string;
  /** Empty for the process holding node 0: its first node starts the network. */
  bootstrap: string[];
  /** Protobuf-marshalled private key (base64) and imposed probe delays by peer id. */
  nodes: { i: number; key: string; delays: Record<string, number> }[];
}
export type ChildRequest = StartRequest | { t: 'status'; id: number } | { t: 'stop' };
export interface NodeReport {
  i: number;
  coord: WireCoord;
  /** The coordinate it publishes, and how often that moved. */
  published: WireCoord;
  publishedChanges: number;
  announcements: number;
  /** The cells it has announced (names), at the last status. */
  cells: string[];
}
export interface ProcessReport {
  rssMB: number;
  maxRssMB: number;
  /** p99 event-loop delay since the previous status request. */
  lagP99Ms: number;
  /** User + system CPU time of the process so far. */
  cpuSeconds: number;
  /** Connections, streams per protocol and the nodes' own counters so far (activity.ts). */
  activity: Activity;
}
export type ChildReport =
  | { t: 'ready' }
  | { t: 'started'; nodes: { i: number; peerId: string; addrs: string[] }[] }
  /** One node has joined (progress while the process starts its others). */
  | { t: 'joined'; i: number }
  | { t: 'failed'; error: string }
  | ({ t: 'status'; id: number; nodes: NodeReport[] } & ProcessReport);

export interface ProcessNetOptions extends NetOptions {
  /** Volunteers per child process (default 1). */
  perProcess?: number;
  /** Child processes starting their nodes at once (default 4). */
  startConcurrency?: number;
  runner?: FakeRunnerOptions;
  /** Told each time a node has joined: nodes joined so far, and the total. */
  onJoined?: (joined: number, total: number) => void;
}

/** A child process (or one of its nodes) failed to start: says which, and why. */
export class StartError extends Error {
  override name = 'StartError';
}

interface Child {
  proc: ChildProcess;
  nodes: number[];
}

/** The child, compiled (`npm run build`; the benchmarks and the tests' global
 * setup rebuild it when stale): a child that ran TypeScript through tsx would
 * carry its loader thread and compiler, tens of MB each. */
const CHILD = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? '../../dist/testbed/net/node-child.js' : './node-child.js', import.meta.url));

export class ProcessNet extends NetBase {
  declare readonly o: ProcessNetOptions;
  private readonly children: Child[] = [];
  private readonly reports: NodeReport[] = [];
  private processes: ProcessReport[] = [];
  /** First listen address of node i. */
  private readonly addrs: string[] = [];
  private statusSeq = 0;
  private joined = 0;

  constructor(o: ProcessNetOptions) {
    super(o);
  }

  async start(): Promise<void> {
    await this.generateKeys();
    const k = Math.max(1, this.o.perProcess ?? 1);
    for (let b = 0; b < this.index.length; b += k) {
      const nodes = Array.from({ length: Math.min(k, this.index.length - b) }, (_, j) => b + j);
      // The child's stdout (its pino log) goes to our stderr: stdout may carry --json.
      // VOLCRAWL_CHILD_PROF=<dir> writes a V8 CPU profile of the second child (not node 0's: a typical one) on exit.
      const prof = process.env.VOLCRAWL_CHILD_PROF;
      const execArgv = prof !== undefined && prof !== '' && this.children.length === 1 ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : [];
      const proc = fork(CHILD, [], { stdio: ['ignore', 2, 'inherit', 'ipc'], execArgv });
      // A send to a child that died emits 'error'; its exit already fails what waits on it.
      proc.on('error', (err) => this.log.warn({ pid: proc.pid, err: String(err) }, 'volunteer process'));
      const child: Child = { proc, nodes };
      proc.on('message', (m: ChildReport) => {
        if (m.t === 'joined') this.o.onJoined?.(++this.joined, this.index.length);
      });
      this.children.push(child);
    }
    // Every child loads its modules before any node starts, so that loading
    // does not distort the first probes.
    await Promise.all(this.children.map((c) => nextReport(c.proc, 'ready', 300_000).catch((err: unknown) => Promise.reject(this.startError(c, err)))));
    await this.startChild(this.children[0]!, []);
    // The other processes start in parallel, a few at a time (each starts its
    // own nodes a few at a time): one after another, a 100-node network took
    // 13–15 s per join on a loaded 2-core machine. Each joins through nodes
    // drawn from those already up, so that node 0's process (no more CPU than
    // any other) does not take every handshake.
    const queue = this.children.slice(1);
    const worker = async (): Promise<void> => {
      for (let c = queue.shift(); c !== undefined; c = queue.shift()) {
        // Up to 8 nodes already up (node 0 first); the child tries 3 at a time, the next 3 on a retry.
        const started = this.addrs.filter((a) => a !== undefined);
        const picks = new Set([started[0]!]);
        for (let tries = 0; picks.size < Math.min(8, started.length) && tries < 50; tries++) picks.add(started[Math.floor(this.rng.next() * started.length)]!);
        await this.startChild(c, [...picks]);
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, this.o.startConcurrency ?? 4) }, worker));
    await this.startServices(this.addrs);
    await this.refresh();
  }

  private startError(c: Child, err: unknown): StartError {
    const first = c.nodes[0]!;
    const last = c.nodes[c.nodes.length - 1]!;
    return new StartError(`volunteer process ${c.proc.pid ?? '?'} (nodes ${first}${last !== first ? `–${last}` : ''}) failed to start: ${(err as Error).message ?? String(err)}`);
  }

  private async startChild(c: Child, bootstrap: string[]): Promise<void> {
    const req: StartRequest = {
      t: 'start',
      manager: this.managerId,
      tuning: tuningOf(this.o),
      runner: this.o.runner ?? {},
      log: this.log.level,
      bootstrap,
      nodes: c.nodes.map((i) => ({ i, key: Buffer.from(privateKeyToProtobuf(this.keys[i]!)).toString('base64'), delays: this.probeDelays(i) })),
    };
    c.proc.send(req);
    const m = await nextReport(c.proc, 'started', 600_000).catch((err: unknown) => Promise.reject(this.startError(c, err)));
    for (const n of m.nodes) this.addrs[n.i] = n.addrs.find((a) => a.includes('127.0.0.1')) ?? n.addrs[0]!;
  }

  override async refresh(): Promise<void> {
    this.processes = await Promise.all(
      this.children.map(async (c) => {
        const id = ++this.statusSeq;
        c.proc.send({ t: 'status', id } satisfies ChildRequest);
        const m = await nextReport(c.proc, 'status', 60_000, (r) => r.id === id);
        for (const n of m.nodes) this.reports[n.i] = n;
        return { rssMB: m.rssMB, maxRssMB: m.maxRssMB, lagP99Ms: m.lagP99Ms, cpuSeconds: m.cpuSeconds, activity: m.activity };
      }),
    );
  }

  coord(i: number): Coordinate {
    return fromWireCoord(this.reports[i]!.coord);
  }

  published(i: number): Coordinate {
    return fromWireCoord(this.reports[i]!.published);
  }

  publishedChanges(i: number): number {
    return this.reports[i]!.publishedChanges;
  }

  announcements(i: number): number {
    return this.reports[i]!.announcements;
  }

  announcedCells(i: number): string[] {
    return this.reports[i]!.cells;
  }

  /** Children's process figures at the last refresh. */
  usage(): { processes: number; rssSumMB: number; peakRssSumMB: number; cpuSeconds: number; lagP99Ms: number[]; activity: Activity } {
    return {
      activity: sumActivity(this.processes.map((p) => p.activity)),
      processes: this.processes.length,
      cpuSeconds: this.processes.reduce((s, p) => s + p.cpuSeconds, 0),
      rssSumMB: this.processes.reduce((s, p) => s + p.rssMB, 0),
      peakRssSumMB: this.processes.reduce((s, p) => s + p.maxRssMB, 0),
      lagP99Ms: this.processes.map((p) => p.lagP99Ms),
    };
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.children.map(async (c) => {
        if (c.proc.exitCode !== null || c.proc.signalCode !== null) return;
        const exited = new Promise<void>((resolve) => c.proc.once('exit', () => resolve()));
        if (c.proc.connected) c.proc.send({ t: 'stop' } satisfies ChildRequest);
        const timer = setTimeout(() => c.proc.kill('SIGKILL'), 20_000);
        await exited;
        clearTimeout(timer);
      }),
    );
    await this.stopServices();
  }
}

/** The plain-data volunteer settings of `o` (not the matrix: the children get delays). */
function tuningOf(o: VolunteerTuning): VolunteerTuning {
  const { seed, coordIntervalMs, coordFanout, coordPace, neighbours, maxConnections, connectionGraceMs, providerTtlMs, vivaldi, appCoord, cells, taskRateLimit, routerCacheTtlMs } = o;
  return { seed, coordIntervalMs, coordFanout, coordPace, neighbours, maxConnections, connectionGraceMs, providerTtlMs, vivaldi, appCoord, cells, taskRateLimit, routerCacheTtlMs };
}

/** The child's next report of type `t` (matching `match`); rejects when the
 * child reports a failure, exits, or stays silent for `timeoutMs`. */
function nextReport<T extends ChildReport['t']>(
  proc: ChildProcess,
  t: T,
  timeoutMs: number,
  match: (m: Extract<ChildReport, { t: T }>) => boolean = () => true,
): Promise<Extract<ChildReport, { t: T }>> {
  return new Promise((resolve, reject) => {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      reject(new Error(`volunteer process ${proc.pid} has exited`));
      return;
    }
    const done = (err: Error | undefined, m?: Extract<ChildReport, { t: T }>) => {
      clearTimeout(timer);
      proc.off('message', onMessage);
      proc.off('exit', onExit);
      if (err !== undefined) reject(err);
      else resolve(m!);
    };
    const onMessage = (m: ChildReport) => {
      if (m.t === 'failed') done(new Error(`volunteer process ${proc.pid}: ${m.error}`));
      else if (m.t === t && match(m as Extract<ChildReport, { t: T }>)) done(undefined, m as Extract<ChildReport, { t: T }>);
    };
    const onExit = (code: number | null) => done(new Error(`volunteer process ${proc.pid} exited (${code}) before '${t}'`));
    const timer = setTimeout(() => done(new Error(`volunteer process ${proc.pid}: no '${t}' within ${timeoutMs} ms`)), timeoutMs);
    proc.on('message', onMessage);
    proc.on('exit', onExit);
  });
}
