// `dht-manager serve`: the manager service. Opens the channel database, starts
// the libp2p node (a bootstrap peer of the overlay, persistent identity), the
// ingest service (upload server, WARC export), the operator HTTP API, and the
// scheduler loop; prints the command volunteers run to join; stops gracefully
// on SIGINT/SIGTERM.
import { join } from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';
import pino, { type Logger } from 'pino';
import { defaultDataDir, loadOrCreateIdentity } from '../node/identity.js';
import { STRATEGIES, type StrategyName } from '../recrawl/index.js';
import { startApi, type ApiServer } from './api/server.js';
import { StoreLockedError } from './errors.js';
import { Manager, type ManagerOptions } from './manager.js';
import { ManagerNode } from './network.js';
import { ArchiveWriter, WarcExporter } from './warc.js';
import { DEFAULT_WARC_MAX_BYTES } from '../crawler/warc/files.js';
import { bytesArg, intArg, multiaddrArg, numberArg, untilSignal } from '../cli.js';
import { Sampler } from './dashboard/sampler.js';
import { MAX_TIME_SCALE, timeScaledOptions } from './time-scale.js';
import { apiBanner, resolveApiAuth, TOKEN_ENV } from './api/auth.js';
import { allowedHostArg } from './api/guard.js';
import { MANAGER_NAT } from '../dht/nat.js';
import { checkContactUrl } from '../dht/volunteer-state.js';

export function defaultManagerDir(): string {
  return join(defaultDataDir(), 'manager');
}

function strategyArg(v: string): StrategyName {
  if (!(STRATEGIES as readonly string[]).includes(v)) throw new InvalidArgumentError(`must be one of ${STRATEGIES.join(', ')}`);
  return v as StrategyName;
}

function contactUrlArg(v: string): string {
  try {
    return checkContactUrl(v);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
}

/** 'off' stays a string here: commander turns a parser's null into '' (an empty value);
 * the action maps it to null (no cap). */
function rateCapArg(v: string): number | 'off' {
  if (v === 'off' || v === 'none') return 'off';
  const n = Number(v);
  if (!(n > 0) || !Number.isFinite(n)) throw new InvalidArgumentError('must be a positive number (e.g. 2 = at most twice the change rate)');
  return n;
}

export interface ServeFlags {
  dataDir: string;
  listen?: string[];
  announce?: string[];
  httpPort: number;
  httpHost: string;
  strategy: StrategyName;
  rateCap?: number | null;
  lan: boolean;
  warc: boolean;
  /** 'full': volunteers upload their exchanges and the manager archives them (besides the text export). */
  archive?: 'text' | 'full';
  /** Start a new WARC file after this many bytes (default 1 GB). */
  warcMaxSize?: number;
  sync: boolean;
  tick: number;
  routeConcurrency: number;
  logLevel: string;
  /** Dashboard time-series sample period, ms (default 5000, compressed by the time scale down to 1000). */
  dashboardSampleMs?: number;
  /** Compress every manager duration by this factor (demos and test networks; 1 = real time). */
  timeScale?: number;
  /** The operator API's bearer token (--api-token / VOLCRAWL_API_TOKEN); when given, always required. */
  apiToken?: string;
  /** Require the token on loopback too (generated into <data-dir>/api-token unless given). */
  requireToken?: boolean;
  /** More Host names the operator API answers to (e.g. behind a reverse proxy). */
  allowedHost?: string[];
  /** false (--no-spot-checks): no checks, reputations or quarantines (docs/trust.md). */
  spotChecks?: boolean;
  /** Check at least this share of every volunteer's tasks. */
  spotCheckMinRate?: number;
  /** The operator's contact page, sent to volunteers signed (their User-Agent names it). */
  contactUrl?: string;
}

/** The join command line for volunteers, preferring a non-loopback address. */
export function joinCommand(addrs: string[], peerId: string): string {
  const withId = addrs.map((a) => (a.includes('/p2p/') ? a : `${a}/p2p/${peerId}`));
  const pick = withId.find((a) => !a.includes('/127.0.0.1/') && !a.includes('/::1/')) ?? withId[0] ?? `<address>/p2p/${peerId}`;
  return `volunteer-crawler join ${pick} --manager ${peerId}`;
}

export interface RunningManager {
  manager: Manager;
  node: ManagerNode;
  api: ApiServer;
  stop(): Promise<void>;
}

/** Starts everything; used by the CLI and the tests. */
export async function startManager(flags: ServeFlags, log: Logger, extra: Partial<ManagerOptions> = {}): Promise<RunningManager> {
  const warc = flags.warc ? new WarcExporter(join(flags.dataDir, 'warc'), flags.warcMaxSize) : null;
  const archive = flags.archive === 'full' ? new ArchiveWriter(join(flags.dataDir, 'warc'), flags.warcMaxSize) : null;
  const closeWarc = async () => {
    await Promise.all([warc?.close(), archive?.close()]);
  };
  let manager: Manager;
  try {
    manager = await Manager.open({
      dataDir: flags.dataDir,
      strategy: flags.strategy,
      ...(flags.rateCap !== undefined ? { rateCap: flags.rateCap } : {}),
      sync: flags.sync,
      log,
      warc,
      archive,
      ...timeScaledOptions(flags.timeScale ?? 1),
      trust: { timeScale: flags.timeScale ?? 1, enabled: flags.spotChecks !== false, ...(flags.spotCheckMinRate !== undefined ? { minRate: flags.spotCheckMinRate } : {}) },
      ...extra,
    });
  } catch (err) {
    await closeWarc().catch(() => undefined);
    throw err;
  }
  let node: ManagerNode | undefined;
  let api: ApiServer | undefined;
  try {
    const { key, created, path } = await loadOrCreateIdentity(flags.dataDir);
    log.info({ identity: path, created }, created ? 'created a new manager identity' : 'loaded manager identity');
    node = await ManagerNode.start({
      privateKey: key,
      manager,
      listen: flags.listen && flags.listen.length > 0 ? flags.listen : ['/ip4/0.0.0.0/tcp/4101'],
      announce: flags.announce,
      allowPrivateAddrs: flags.lan,
      routeConcurrency: flags.routeConcurrency,
      contactUrl: flags.contactUrl ?? null,
      ...(flags.lan ? { inboundConnectionThreshold: 1000 } : { nat: MANAGER_NAT }),
      log,
    });
    const sampler = new Sampler(manager, node, flags.dashboardSampleMs ?? Math.max(1000, 5000 / (flags.timeScale ?? 1)));
    const auth = await resolveApiAuth(flags);
    api = await startApi({ manager, node, sampler }, { port: flags.httpPort, host: flags.httpHost, auth, allowedHosts: flags.allowedHost ?? [] });
    sampler.start();
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let loop: Promise<void> = Promise.resolve();
    const n = node;
    let waitingForCrawlers = false;
    const step = async () => {
      const tasks = manager.tasks;
      const room = flags.routeConcurrency * 4 - tasks.dispatchingCount;
      await tasks.failOverdue();
      await tasks.maybeReassign();
      // With no volunteer in sight (first start, or everyone left) a task could
      // only fail at once: due channels wait instead of counting failures.
      const crawlers = n.crawlers().length;
      if (crawlers === 0 !== waitingForCrawlers) {
        waitingForCrawlers = crawlers === 0;
        log.info({ crawlers }, waitingForCrawlers ? 'no volunteer online: due channels wait' : 'volunteers online: issuing tasks');
      }
      if (room > 0 && !waitingForCrawlers) {
        const issued = await tasks.issueDue(room);
        if (issued.length > 0) log.info({ issued: issued.length, crawlers }, 'tasks issued');
      }
    };
    const schedule = () => {
      if (stopped) return;
      timer = setTimeout(() => {
        loop = step()
          .catch((err: unknown) => log.error({ err: String(err) }, 'scheduler step failed'))
          .finally(schedule);
      }, flags.tick);
    };
    schedule();
    const a = api;
    return {
      manager,
      node,
      api,
      async stop() {
        stopped = true;
        sampler.stop();
        if (timer !== undefined) clearTimeout(timer);
        await loop;
        await a.close();
        await n.stop();
        await manager.close();
        await closeWarc();
      },
    };
  } catch (err) {
    await api?.close().catch(() => undefined);
    await node?.stop().catch(() => undefined);
    await manager.close().catch(() => undefined);
    await closeWarc().catch(() => undefined);
    throw err;
  }
}

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('run the manager: channel database, scheduler, storage (upload server, WARC), libp2p bootstrap peer and operator HTTP API')
    .option('--data-dir <dir>', 'database, identity key and WARC files', defaultManagerDir())
    .option('--listen <multiaddr>', 'libp2p listen address (repeatable; default /ip4/0.0.0.0/tcp/4101)', multiaddrArg)
    .option('--announce <multiaddr>', 'address to announce instead of the listen addresses (repeatable)', multiaddrArg)
    .option('--http-port <port>', 'operator HTTP API port (0 = any free port)', intArg('--http-port', 0, 65535), 8787)
    .option('--http-host <addr>', 'operator HTTP API bind address (beyond loopback the API requires a bearer token)', '127.0.0.1')
    .addOption(new Option('--api-token <token>', 'bearer token the operator API requires, even on loopback (default: generated into <data-dir>/api-token when needed)').env(TOKEN_ENV))
    .option('--require-token', 'require the bearer token on loopback too (shared machines)', false)
    .option('--allowed-host <name>', 'another Host name the operator API answers to, "name" or "name:port" (repeatable; e.g. behind a reverse proxy)', allowedHostArg)
    .option('--strategy <name>', `recrawl strategy: ${STRATEGIES.join(' | ')} (caf steers on the load volunteers report; applies at every start, a stored database switches to it)`, strategyArg, 'caf')
    .option('--rate-cap <x>', "cap each channel's recrawl rate at x times its estimated change rate (paper §4.3; 'off' for no cap)", rateCapArg, 2)
    .option('--lan', 'keep private/loopback addresses in the DHT (a LAN-only or single-host network)', false)
    .option('--no-warc', 'do not write the text export (<data-dir>/warc/volcrawl-text-*.warc.gz: WET-like conversion records, a .cdxj index beside each)')
    .addOption(
      new Option('--archive <mode>', 'text: the text export only; full: volunteers also upload what they fetched, archived as received (<data-dir>/warc/volcrawl-archive-*.warc.gz, a .cdxj index beside each)')
        .choices(['text', 'full'])
        .default('text')
        .conflicts('warc'),
    )
    .addOption(new Option('--warc-max-size <bytes>', 'start a new WARC file after this many bytes (e.g. 100M)').argParser(bytesArg('--warc-max-size', 'bytes, e.g. 100M or 1G')).default(DEFAULT_WARC_MAX_BYTES, '1G'))
    .option('--sync', 'fsync every database write (power-loss safe, slower)', false)
    .option('--tick <ms>', 'scheduler step period', intArg('--tick', 10, 600_000), 1000)
    .option('--route-concurrency <n>', 'orders signed and routed at once', intArg('--route-concurrency', 1, 1024), 16)
    .option('--time-scale <x>', 'compress every interval, timeout and delay by x (demos and test networks: 60 makes an hour a minute)', numberArg('--time-scale', 1, MAX_TIME_SCALE), 1)
    .option('--no-spot-checks', 'trust every volunteer: no second crawls, reputations or quarantines (docs/trust.md)')
    .option('--spot-check-min-rate <x>', "check at least this share of every volunteer's tasks, 0..1 (default: the reputation's adaptive rate, 2-7.4 %)", numberArg('--spot-check-min-rate', 0, 1))
    .option('--contact-url <url>', "the operator's contact page: sent to every volunteer in the manager's signed configuration and put in their User-Agent, so site owners can find who crawls them (default: the project's page)", contactUrlArg)
    .option('--log-level <level>', 'pino log level', 'info')
    .action(async (flags: Omit<ServeFlags, 'rateCap'> & { rateCap: number | 'off' }) => {
      await runServe({ ...flags, rateCap: flags.rateCap === 'off' ? null : flags.rateCap });
    });
}

export async function runServe(flags: ServeFlags): Promise<void> {
  const log = pino({ level: flags.logLevel });
  let running: RunningManager;
  try {
    running = await startManager(flags, log);
  } catch (err) {
    if (err instanceof StoreLockedError) {
      process.stderr.write(`dht-manager serve: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const { node, api, manager } = running;
  const cmd = joinCommand(node.multiaddrs(), node.peerId);
  log.info({ peerId: node.peerId, addrs: node.multiaddrs(), api: api.url, join: cmd, strategy: manager.sched.state.options.strategy, channels: manager.sched.size, timeScale: flags.timeScale }, 'manager started');
  process.stderr.write(
    `dht-manager: peer ${node.peerId}\n  listening on ${node.multiaddrs().join(' ')}\n${apiBanner(api.url, api.auth)}  volunteers join with:\n    ${cmd}\n`,
  );
  await untilSignal(log, () =>
    running
      .stop()
      .catch((err: unknown) => log.error({ err: String(err) }, 'shutdown failed'))
      .then(() => log.info('stopped')),
  );
  log.flush?.();
  process.exit(0);
}
