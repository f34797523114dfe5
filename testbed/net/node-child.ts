// One child process of ProcessNet (process-net.ts): hosts a few test-network
// volunteers so that no single event loop carries them all. Runs compiled
// (dist/testbed/net/node-child.js), the polyfill first. It takes its nodes' keys,
// probe delays and settings from the parent over IPC, answers status requests,
// and exits on `stop` or as soon as the parent is gone (IPC disconnect).
import '../../src/polyfill.js';
import pino from 'pino';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { privateKeyFromProtobuf } from '@libp2p/crypto/keys';
import { BootstrapError, VolunteerNode } from '../../src/node/node.js';
import { toWireCoord } from '../../src/dht/peers.js';
import { FakeRunner } from './fake-runner.js';
import { ActivityCounter, nodeActivity, sumActivity } from './activity.js';
import { probeDelayFrom, volunteerOptions } from './net-base.js';
import type { ChildReport, ChildRequest, StartRequest } from './process-net.js';

const nodes = new Map<number, VolunteerNode>();
/** Connections and streams of every node in this process (activity.ts). */
const activity = new ActivityCounter();
// Event-loop lag since the last status request: what queueing this process
// adds to the probes it answers.
const lag = monitorEventLoopDelay({ resolution: 10 });
lag.enable();

function send(m: ChildReport): void {
  process.send?.(m);
}

async function start(m: StartRequest): Promise<void> {
  const log = pino({ level: m.log });
  const startOne = (spec: StartRequest['nodes'][number], bootstrap: string[]) =>
    VolunteerNode.start(
      volunteerOptions(m.tuning, spec.i, {
        privateKey: privateKeyFromProtobuf(Buffer.from(spec.key, 'base64')),
        manager: m.manager,
        bootstrap,
        probeDelay: probeDelayFrom(spec.delays),
        createRunner: (sink) => new FakeRunner(sink, m.runner),
        log: log.child({ node: spec.i }),
        metrics: activity.metrics,
      }),
    ).then((n) => {
      activity.watch(n);
      nodes.set(spec.i, n);
      send({ t: 'joined', i: spec.i });
    });
  let specs = m.nodes;
  let bootstrap = m.bootstrap;
  /** This process's first node, once up: its siblings join through it. */
  let sibling: string | undefined;
  // The network's first node has nobody to join: it starts alone and the
  // others in its process join through it.
  if (bootstrap.length === 0) {
    const [first, ...rest] = specs;
    await startOne(first!, []);
    bootstrap = nodes.get(first!.i)!.multiaddrs().filter((a) => a.includes('127.0.0.1'));
    specs = rest;
  }
  // Two at a time, each with up to four tries, each through the next three of
  // the bootstrap addresses: ten nodes dialling their bootstrap peers at once,
  // on a machine whose cores are shared, timed out.
  const startRetrying = async (spec: StartRequest['nodes'][number]) => {
    for (let attempt = 1; ; attempt++) {
      // A sibling tries its process's first node alone first (dialling more
      // would only add handshakes for nodes that are busy already).
      const list = attempt === 1 && sibling !== undefined ? [sibling] : bootstrap;
      const k = attempt === 1 ? 0 : ((attempt - 2) * 3) % Math.max(1, list.length);
      const boot = [...list, ...list].slice(k, k + Math.min(3, list.length));
      try {
        return await startOne(spec, boot);
      } catch (err) {
        if (!(err instanceof BootstrapError) || attempt >= 4) throw new Error(`node ${spec.i} could not join (attempt ${attempt}): ${(err as Error).message}`, { cause: err });
        log.warn({ node: spec.i, attempt, err: String(err) }, 'bootstrap failed; trying again');
      }
    }
  };
  // The first node joins through the nodes of other processes; its siblings
  // through it first (a join goes on once one bootstrap peer answers): a
  // process's own event loop answers whenever the process runs, while other
  // processes, starved of CPU on a loaded machine, timed joins out.
  if (specs.length > 0 && m.bootstrap.length > 0) {
    const [first, ...rest] = specs;
    await startRetrying(first!);
    sibling = nodes.get(first!.i)!.multiaddrs().find((a) => a.includes('127.0.0.1'));
    specs = rest;
  }
  for (let b = 0; b < specs.length; b += 2) await Promise.all(specs.slice(b, b + 2).map(startRetrying));
  send({ t: 'started', nodes: m.nodes.map((s) => ({ i: s.i, peerId: nodes.get(s.i)!.peerId, addrs: nodes.get(s.i)!.multiaddrs() })) });
}

function status(id: number): void {
  const mem = process.memoryUsage();
  const cpu = process.cpuUsage();
  send({
    t: 'status',
    id,
    nodes: [...nodes].map(([i, n]) => ({ i, coord: toWireCoord(n.vivaldi.coord), published: toWireCoord(n.coords.published!), publishedChanges: n.app.changes, announcements: n.announcer.announcements, cells: n.announcer.cells().map((c) => c.name) })),
    rssMB: mem.rss / 2 ** 20,
    maxRssMB: process.resourceUsage().maxRSS / 1024,
    lagP99Ms: lag.percentile(99) / 1e6,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    activity: sumActivity([activity.counts, ...[...nodes.values()].map(nodeActivity)]),
  });
  lag.reset();
}

async function stop(): Promise<never> {
  await Promise.all([...nodes.values()].map((n) => n.kill()));
  process.exit(0);
}

process.on('disconnect', () => process.exit(0));
process.on('message', (m: ChildRequest) => {
  if (m.t === 'start') {
    start(m).catch((err: unknown) => send({ t: 'failed', error: String(err) }));
  } else if (m.t === 'status') status(m.id);
  else void stop();
});
send({ t: 'ready' });
