// A local test network: N real libp2p volunteer nodes on loopback in this
// process, joined through one bootstrap node, with the latency dataset imposed
// on the coordinate protocol (each node holds its reply to a probe from node j
// for rtt(i, j) ms), plus a manager node (signs and routes orders) and a storage
// node (receives uploads). The dataset side, identities and the manager and
// storage nodes are NetBase's (net-base.ts), shared with ProcessNet.
import type { Coordinate } from '../../src/coords/index.js';
import type { ResultSink, Task } from '../../src/crawler/task.js';
import { VolunteerNode, type TaskRunner } from '../../src/node/node.js';
import { FakeRunner, type FakeRunnerOptions } from './fake-runner.js';
import { NetBase, probeDelayFrom, volunteerOptions, type NetOptions } from './net-base.js';

export interface TestNetOptions extends NetOptions {
  /** Runner per node; default a FakeRunner with `runner` options. */
  createRunner?: (i: number, sink: ResultSink) => TaskRunner;
  runner?: FakeRunnerOptions | ((i: number) => FakeRunnerOptions);
  /** The last `deferred` nodes are not started by start(): startNode(i) joins them later (churn). */
  deferred?: number;
}

export class TestNet extends NetBase {
  readonly nodes: VolunteerNode[] = [];
  readonly runners: TaskRunner[] = [];
  declare readonly o: TestNetOptions;

  constructor(o: TestNetOptions) {
    super(o);
  }

  nodeById(peer: string): VolunteerNode | undefined {
    const i = this.nodeOf(peer);
    return i === undefined ? undefined : this.nodes[i];
  }

  async start(): Promise<void> {
    await this.generateKeys();
    const first = await this.startOne(0, []);
    const boot = first.multiaddrs().filter((a) => a.includes('127.0.0.1'));
    const n = this.index.length - (this.o.deferred ?? 0);
    for (let b = 1; b < n; b += 4) {
      const batch = [];
      for (let i = b; i < Math.min(b + 4, n); i++) batch.push(this.startOne(i, boot));
      await Promise.all(batch);
    }
    await this.startServices(this.nodes.filter((x) => x !== undefined).map((x) => x.multiaddrs()[0]!));
  }

  /** Starts node i (a deferred one, or one that was stopped), joining through `via` (default node 0). */
  async startNode(i: number, via: VolunteerNode = this.nodes[0]!): Promise<VolunteerNode> {
    return this.startOne(i, via.multiaddrs().filter((a) => a.includes('127.0.0.1')));
  }

  private async startOne(i: number, bootstrap: string[]): Promise<VolunteerNode> {
    const node = await VolunteerNode.start(
      volunteerOptions(this.o, i, {
        privateKey: this.keys[i]!,
        manager: this.managerId,
        bootstrap,
        probeDelay: probeDelayFrom(this.probeDelays(i)),
        createRunner: (sink) => {
          const r =
            this.o.createRunner?.(i, sink) ??
            new FakeRunner(sink, typeof this.o.runner === 'function' ? this.o.runner(i) : this.o.runner ?? {});
          this.runners[i] = r;
          return r;
        },
        log: this.log.child({ node: i }),
      }),
    );
    this.nodes[i] = node;
    return node;
  }

  coord(i: number): Coordinate {
    return this.nodes[i]!.vivaldi.coord;
  }

  published(i: number): Coordinate {
    return this.nodes[i]!.coords.published!;
  }

  publishedChanges(i: number): number {
    return this.nodes[i]!.app.changes;
  }

  announcements(i: number): number {
    return this.nodes[i]!.announcer.announcements;
  }

  announcedCells(i: number): string[] {
    return this.nodes[i]!.announcer.cells().map((c) => c.name);
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.filter((n) => n !== undefined).map((n) => n.kill()));
    await this.stopServices();
  }
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
