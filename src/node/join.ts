// `volunteer-crawler join <bootstrap-multiaddr...>`: run a volunteer node.
import { mkdirSync } from 'node:fs';
import { constants as osConstants, setPriority } from 'node:os';
import { join as joinPath } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { InvalidArgumentError, type Command } from 'commander';
import pino, { type Logger } from 'pino';
import { peerIdFromString } from '@libp2p/peer-id';
import type { ResultSink } from '../crawler/task.js';
import type { TaskManager } from '../crawler/manager.js';
import { userAgentWithContact } from '../crawler/limits.js';
import { OwnerBlockList } from '../crawler/safety.js';
import { VOLUNTEER_MAX_CONNECTIONS } from '../dht/libp2p.js';
import { TASK_PROTOCOL } from '../dht/task-protocol.js';
import { defaultDataDir, loadOrCreateIdentity } from './identity.js';
import { LazyRunner } from './lazy-runner.js';
import { parseBootstrap, VolunteerNode, type TaskRunner } from './node.js';
import { formatStatus } from './status.js';
import { assertNoNodeRunning } from './control.js';
import { loadTestPlugin } from './test-plugin.js';
import { formatNatStatus, natNodeService, natPuller, registerNatFlags, volunteerNatOptions, type NatService } from './nat-service.js';
import { RotatingFile } from './log-file.js';
import { idleHeapService } from './idle-heap.js';
import { OwnerControl } from './owner-service.js';
import type { NetworkStatus } from './owner-status.js';
import { Libp2pTraffic } from '../dht/traffic.js';
import { BlockedHosts, blockAwareRunner, blockAwareSink } from './owner-blocks.js';
import type { PrefsOverrides } from './prefs.js';
import { intArg, multiaddrArg, untilSignal } from '../cli.js';

/** V8's young generation for `join`, MB per semi-space. The default (16) is
 * sized for throughput and stays resident (32 MB) once start-up has filled it;
 * a node that idles for hours on someone else's PC trades a few more (cheap)
 * scavenges while crawling for ~30 MB less. V8 applies the bound from its next
 * full collection on. */
const JOIN_SEMI_SPACE_MB = 2;

/** Parses a byte rate: 500000, 500k, 2M, 1G (bytes per second). */
export function parseRate(v: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([kKmMgG]?)(?:i?B)?(?:\/s)?$/.exec(v.trim());
  if (m === null) throw new InvalidArgumentError('expected bytes per second, e.g. 500k or 2M');
  const mult = { '': 1, k: 1e3, m: 1e6, g: 1e9 }[m[2]!.toLowerCase() as '' | 'k' | 'm' | 'g'];
  const n = Math.floor(Number(m[1]) * mult);
  if (!(n > 0)) throw new InvalidArgumentError('bandwidth must be positive');
  return n;
}

function peerIdArg(v: string): string {
  try {
    return peerIdFromString(v).toString();
  } catch {
    throw new InvalidArgumentError('not a libp2p peer id');
  }
}

export interface JoinFlags {
  manager: string;
  dataDir: string;
  listen?: string[];
  announce?: string[];
  /** Absent: the preference file's. */
  threads?: number;
  queue?: number;
  maxBandwidth?: number;
  cpuBusyAbove?: number;
  runOnBattery?: boolean;
  allowPrivate?: boolean;
  lan?: boolean;
  first?: boolean;
  status: boolean;
  logLevel: string;
  shutdownTimeout: number;
  coordInterval: number;
  coordMaxInterval: number;
  maxConnections: number;
  seed?: number;
  upnp?: boolean;
  relay?: boolean;
  relayReservations?: number;
  reportEvery?: number;
}

export function registerJoin(program: Command): void {
  const join = program
    .command('join')
    .description('join the crawl network through one or more bootstrap peers and run tasks until stopped (Ctrl-C migrates work away and leaves)')
    .argument('[bootstrap...]', 'bootstrap multiaddrs ending in /p2p/<peer id>')
    .requiredOption('--manager <peerId>', 'peer id of the manager; only tasks it signed are run', peerIdArg)
    .option('--data-dir <dir>', 'where the identity key, preferences (volunteer.toml), ledger and logs live', defaultDataDir())
    .option('--listen <multiaddr>', 'listen address (repeatable; default /ip4/0.0.0.0/tcp/0)', multiaddrArg)
    .option('--announce <multiaddr>', 'address to announce instead of the listen addresses (repeatable)', multiaddrArg)
    .option('--threads <n>', 'concurrent task threads (overrides the preference file; default 5)', intArg('--threads', 1, 256))
    .option('--queue <n>', 'tasks waiting beyond the running ones (overrides the preference file; default 5)', intArg('--queue', 0, 10_000))
    .option('--max-bandwidth <rate>', 'total download bandwidth cap, bytes/s (e.g. 500k, 2M; overrides the preference file)', parseRate)
    .option('--cpu-busy-above <percent>', 'pause while other programs use more than this percent of all cores, resuming below min(40, it); 0 = never (overrides the preference file; a demo or test on one machine wants 0)', intArg('--cpu-busy-above', 0, 100))
    .option('--run-on-battery', 'keep crawling on battery (overrides the preference file)')
    .option('--allow-private', 'crawl loopback/private addresses (tests, intranets)', false)
    .option('--lan', 'keep private/loopback addresses in the DHT (a LAN-only network)', false)
    .option('--first', 'start a new network (no bootstrap peers)', false)
    .option('--no-status', 'no live status line, JSON logs on stdout even on a terminal')
    .option('--log-level <level>', 'pino log level', 'info')
    .option('--shutdown-timeout <ms>', 'bound on graceful shutdown', intArg('--shutdown-timeout', 1000, 600_000), 20_000)
    .option('--coord-interval <ms>', 'gap between coordinate probing rounds while the coordinate settles (and after an RTT changed)', intArg('--coord-interval', 50, 600_000), 1000)
    .option('--coord-max-interval <ms>', 'longest gap between probing rounds once the coordinate is settled', intArg('--coord-max-interval', 50, 3_600_000), 30_000)
    .option('--max-connections <n>', 'libp2p connections kept at most (neighbours and DHT-closest peers are kept first)', intArg('--max-connections', 8, 10_000), VOLUNTEER_MAX_CONNECTIONS)
    .option('--seed <n>', 'seed for this node\'s random choices', intArg('--seed', 0, 2 ** 32 - 1));
  registerNatFlags(join).action(async (bootstrap: string[], flags: JoinFlags) => {
      await runJoin(bootstrap, flags);
    });
}

export async function runJoin(bootstrap: string[], flags: JoinFlags): Promise<void> {
  parseBootstrap(bootstrap); // malformed addresses fail before anything starts
  if (bootstrap.length === 0 && flags.first !== true) {
    throw new Error('give at least one bootstrap multiaddr (or --first to start a new network)');
  }
  if (flags.coordMaxInterval < flags.coordInterval) throw new Error('--coord-max-interval must not be below --coord-interval');
  setFlagsFromString(`--max-semi-space-size=${JOIN_SEMI_SPACE_MB}`);
  try {
    setPriority(osConstants.priority.PRIORITY_LOW); // the crawler would, on its first task; the whole node yields
  } catch {
    // best effort: not permitted or not supported
  }
  mkdirSync(flags.dataDir, { recursive: true, mode: 0o700 });
  await assertNoNodeRunning(flags.dataDir); // a second node on this directory stops here, before libp2p starts
  const tty = flags.status && process.stderr.isTTY === true;
  // The log file in the data directory, bounded in size, always (a service's
  // owner finds it there); on a terminal it is the only log, elsewhere the
  // JSON lines also go to stdout (the journal, a test).
  const logFile = new RotatingFile({ path: joinPath(flags.dataDir, 'volunteer.log') });
  const log: Logger = tty
    ? pino({ level: flags.logLevel }, logFile)
    : pino({ level: flags.logLevel }, pino.multistream([{ stream: process.stdout, level: flags.logLevel as pino.Level }, { stream: logFile, level: flags.logLevel as pino.Level }]));
  // A bad preference file stops here, with the reason (PrefsError names the key).
  // The User-Agent names the operator's contact page once the manager's signed configuration arrived.
  const operator: { userAgent?: string } = {};
  // The overlay's own bytes (DHT, coordinates, announcements, manager link, uploads) count against the caps too.
  const traffic = new Libp2pTraffic();
  const owner = new OwnerControl({
    traffic,
    dataDir: flags.dataDir,
    overrides: prefsOverrides(flags),
    log,
    manager: flags.manager,
    reach: () => nat?.reach(),
    network: () => network?.(),
    // Behind NAT the state is re-reported every --report-every ms: the reply tells whether the manager's pushes fail.
    onPullAdvice: (ms) => nat?.advisePull(ms),
    reportPeriodically: () => nat !== undefined && ['relayed', 'punched', 'mapped'].includes(nat.reach()),
    ...(flags.reportEvery !== undefined ? { reportEveryMs: flags.reportEvery } : {}),
    onOperatorConfig: (cfg) => {
      const ua = cfg.contactUrl !== null ? userAgentWithContact(cfg.contactUrl) : undefined;
      if (ua !== operator.userAgent) log.info({ contactUrl: cfg.contactUrl }, "the operator's contact URL (signed by the manager) goes into the User-Agent");
      operator.userAgent = ua;
    },
  });
  const { key, created, path } = await loadOrCreateIdentity(flags.dataDir);
  log.info({ identity: path, created }, created ? 'created a new identity' : 'loaded identity');
  const plugin = await loadTestPlugin(log);
  let nat: NatService | undefined; // behind NAT (not --lan): reachability, relays, the hole punch
  let network: (() => NetworkStatus) | undefined; // for the owner's status (and nat-check)
  let timer: ReturnType<typeof setInterval> | undefined;
  // Signals are taken from before the node starts: 'node started' is logged
  // before start() returns, and a SIGTERM in that gap would otherwise kill the
  // process with the default action instead of a clean leave.
  let nodeReady!: (n: VolunteerNode | undefined) => void;
  const started = new Promise<VolunteerNode | undefined>((resolve) => (nodeReady = resolve));
  const stopped = untilSignal(log, async (sig) => {
    const n = await started;
    if (n === undefined) return;
    if (timer !== undefined) clearInterval(timer);
    if (tty) process.stderr.write(`\n${sig}: migrating tasks and leaving (up to ${flags.shutdownTimeout} ms; again to force)\n`);
    const { migrated, lost } = await n.shutdown(flags.shutdownTimeout);
    log.info({ migrated: migrated.length, lost: lost.length }, 'stopped');
    if (tty) process.stderr.write(`stopped: ${migrated.length} task(s) migrated, ${lost.length} left to the manager\n`);
  });
  let node: VolunteerNode;
  try {
    node = await VolunteerNode.start({
      privateKey: key,
      manager: flags.manager,
      createRunner: (sink) => lazyTaskManager(flags, plugin !== null ? plugin.wrapSink(sink) : sink, log, owner, operator),
      ...(plugin?.claim !== undefined ? { claim: plugin.claim } : {}),
      onUploaded: (bytes, result) => owner.noteUpload(bytes, result),
      metrics: traffic.metrics,
      listen: flags.listen,
      announce: flags.announce,
      bootstrap,
      allowPrivateAddrs: flags.lan === true,
      nat: volunteerNatOptions(flags, bootstrap),
      services: (n) => {
        nat = natNodeService(n.libp2p, bootstrap, log, {
          // The crawlers announced around our coordinate (the lookup also learns their coordinates), those marked down included: a NATed one fails the lookup's query over a relay.
          nearby: async () => {
            await n.router.lookup(n.vivaldi.coord).catch(() => undefined);
            return n.peers.all().filter((p) => p.crawler).map((p) => p.id);
          },
          dial: (peer, opts) => n.libp2p.dial(peer, opts),
          getConnections: (peer) => n.libp2p.getConnections(peer),
        }, { ...(flags.relayReservations !== undefined ? { reservations: flags.relayReservations } : {}), onReachChange: () => owner.reachChanged() });
        // Nobody can dial a NATed node without a relay: it pulls its tasks (src/dht/task-pull.ts).
        const puller = nat !== undefined ? natPuller(n, nat, flags.manager, log) : undefined;
        network = () => ({
          ...(nat !== undefined ? { reach: nat.reach(), nat: nat.status() } : {}),
          ...(puller !== undefined ? { tasksPulled: puller.accepted } : {}),
          coordinates: { samples: n.coords.samples, relayedProbesRefused: n.coords.relayedProbesRefused, relayedSamples: n.coords.relayedSamples },
        });
        const idle = () => {
          const l = n.runner.load();
          return l.running === 0 && l.queued === 0;
        };
        return [...(nat !== undefined && puller !== undefined ? [nat, puller] : []), owner.service(n), idleHeapService({ isIdle: idle })];
      },
      maxConnections: flags.maxConnections,
      coordIntervalMs: flags.coordInterval,
      coordMaxIntervalMs: flags.coordMaxInterval,
      seed: flags.seed ?? Date.now() % 2 ** 32,
      log,
    });
  } catch (err) {
    nodeReady(undefined);
    owner.abandon();
    throw err;
  }
  if (plugin?.refusePushes === true) {
    // The test seam: pushed orders are reset unread (pulled ones go straight to the receiver).
    await node.libp2p.unhandle(TASK_PROTOCOL);
    await node.libp2p.handle(TASK_PROTOCOL, (s) => s.abort(new Error('test plugin: pushes refused')), { runOnLimitedConnection: true });
  }
  nodeReady(node);
  if (tty) process.stderr.write(`volcrawl: peer ${node.peerId}\n  listening on ${node.multiaddrs().join(' ')}\n  logs: ${joinPath(flags.dataDir, 'volunteer.log')}\n`);
  if (tty) {
    timer = setInterval(() => {
      const paused = owner.paused ? `paused (${owner.status().reasons.join(', ')}) · ` : '';
      process.stderr.write(`\r\x1b[2K${paused}${formatStatus(node.status(), (process.stderr.columns ?? 120) - paused.length)}${nat !== undefined ? ` | ${formatNatStatus(nat.status())}` : ''}`);
    }, 1000);
  } else {
    timer = setInterval(() => {
      const natStatus = nat?.status();
      log.info({ status: node.status(), paused: owner.paused, ...(natStatus !== undefined ? { nat: { ...natStatus, punchedPeers: natStatus.punchedPeers.length } } : {}) }, 'status');
    }, 60_000);
    timer.unref();
  }
  await stopped;
  log.flush?.();
  process.exit(0);
}

function prefsOverrides(flags: JoinFlags): PrefsOverrides {
  return {
    ...(flags.threads !== undefined ? { threads: flags.threads } : {}),
    ...(flags.queue !== undefined ? { queue: flags.queue } : {}),
    ...(flags.maxBandwidth !== undefined ? { maxBandwidth: flags.maxBandwidth } : {}),
    pauseWhen: {
      ...(flags.cpuBusyAbove !== undefined ? { cpuBusyAbove: flags.cpuBusyAbove > 0 ? flags.cpuBusyAbove : null, cpuResumeBelow: Math.min(40, flags.cpuBusyAbove) } : {}),
      ...(flags.runOnBattery === true ? { onBattery: false } : {}),
    },
  };
}

/** The crawler's TaskManager, loaded on the first task (lazy-runner.ts), under the owner's preferences: threads, queue, bandwidth and block list follow the file while the node runs; every request is counted against the transfer cap. */
function lazyTaskManager(flags: JoinFlags, sink: ResultSink, log: Logger, owner: OwnerControl, operator: { userAgent?: string }): TaskRunner {
  const blockList = new OwnerBlockList(owner.prefs.neverFetch);
  const blocked = new BlockedHosts(blockList);
  sink = blockAwareSink(sink, blocked);
  let tm: TaskManager | undefined;
  const runner = new LazyRunner({
    capacity: owner.prefs.threads + owner.prefs.queue,
    threads: owner.prefs.threads,
    create: async () => {
      const { TaskManager } = await import('../crawler/manager.js');
      log.info('crawler loaded for the first task');
      const p = owner.prefs;
      tm = new TaskManager({
        threads: p.threads,
        queue: p.queue,
        ...(p.maxBandwidth !== null ? { maxBandwidth: p.maxBandwidth } : {}),
        allowPrivate: flags.allowPrivate === true,
        sink,
        thread: {
          blockList,
          budget: owner.budget,
          onBudgetSpent: () => owner.budgetSpent(),
          // Read as each task starts (TaskManager copies the thread options per task): the operator's latest.
          get userAgent() {
            return operator.userAgent;
          },
        },
        onError: (err, task) => log.error({ task: task.id, err: String(err) }, 'task error'),
      });
      return tm;
    },
    onLoadError: (err, dropped) => log.error({ err: String(err), dropped: dropped.map((t) => t.id) }, 'could not load the crawler; refusing tasks'),
  });
  owner.onPrefs((p) => {
    blockList.update(p.neverFetch);
    blocked.listChanged();
    runner.setCapacity(p.threads + p.queue, p.threads);
    tm?.setThreads(p.threads);
    tm?.setQueue(p.queue);
    tm?.setBandwidth(p.maxBandwidth);
  });
  // A node that must start paused (the owner's pause survived a restart, a cap or a window holds) takes no task even for a moment.
  if (owner.paused) void runner.pause();
  return blockAwareRunner(runner, blocked, log);
}
