// The manager without the network: opens the data layer, restores the
// scheduler (its state, the window aggregates and the tasks in flight — never
// the channels, which stay on disk), and wires the services. The libp2p side (network.ts), the HTTP
// API (api/) and the benchmark use the services; see docs/manager.md for the
// map of the layers.
import type { Logger } from 'pino';
import pino from 'pino';
import type { RecrawlOptions, StrategyName } from '../recrawl/index.js';
import { Repositories } from './data/repositories.js';
import type { ChannelDefaults } from './domain/channel.js';
import { DEFAULT_GROUPING, type GroupingOptions } from './domain/estimator.js';
import { zeroCounters } from './domain/records.js';
import { InFlightSet } from './domain/in-flight.js';
import { DEFAULT_GROUP_INTERVALS, Scheduler } from './domain/scheduler.js';
import { ArchiveService, type ArchiveRecordSink } from './services/archive.js';
import { CandidateService } from './services/candidates.js';
import { ChannelService } from './services/channels.js';
import { KeyedMutex, Mutex, type ServiceCore } from './services/core.js';
import { indexCurrent, rebuildDueIndex } from './services/due-rebuild.js';
import { IngestService, type WarcSink } from './services/ingest.js';
import { PageService } from './services/pages.js';
import { ReportingService } from './services/reporting.js';
import { TaskService } from './services/tasks.js';
import { TrustService, type TrustServiceOptions } from './trust/service.js';

export interface ManagerOptions {
  dataDir: string;
  strategy?: StrategyName;
  /** Cap a channel's recrawl rate at this multiple of its change rate (paper §4.3). */
  rateCap?: number | null;
  recrawl?: Partial<RecrawlOptions>;
  groupIntervals?: readonly number[];
  /** Group a new channel joins when the operator gives none (default: the middle one). */
  defaultGroup?: number;
  retryDelayMs?: number;
  /** Task deadline = issue + clamp(channel interval, min, max). */
  taskTimeoutMinMs?: number;
  taskTimeoutMaxMs?: number;
  /** Extra time after the crawler's deadline for the upload to arrive. */
  graceMs?: number;
  /** At most this many tasks in flight (default 100 000; the memory kept per task is bounded by it). */
  maxInFlight?: number;
  grouping?: GroupingOptions;
  channelDefaults?: ChannelDefaults;
  /** Where stored pages are exported (a WarcExporter, which its creator closes); none by default. */
  warc?: WarcSink | null;
  /** `--archive full`: where the WARC entries volunteers upload are written (an
   * ArchiveWriter, which its creator closes); with it, tasks ask volunteers for their exchanges. */
  archive?: ArchiveRecordSink | null;
  sync?: boolean;
  /** Spot checks, reputation and quarantine (docs/trust.md); on by default. */
  trust?: TrustServiceOptions;
  clock?: () => number;
  log?: Logger;
}

export class Manager {
  readonly channels: ChannelService;
  readonly tasks: TaskService;
  readonly ingest: IngestService;
  readonly pages: PageService;
  readonly candidates: CandidateService;
  readonly reporting: ReportingService;
  /** The network archive's storage side; null unless `--archive full`. */
  readonly archive: ArchiveService | null;
  readonly trust: TrustService;

  private constructor(
    readonly core: ServiceCore,
    services: Pick<Manager, 'channels' | 'tasks' | 'ingest' | 'pages' | 'candidates' | 'reporting' | 'archive' | 'trust'>,
  ) {
    this.channels = services.channels;
    this.tasks = services.tasks;
    this.ingest = services.ingest;
    this.pages = services.pages;
    this.candidates = services.candidates;
    this.reporting = services.reporting;
    this.archive = services.archive;
    this.trust = services.trust;
    // The trust service watches uploads and lost tasks through hooks.
    this.ingest.hooks = this.trust;
    this.tasks.onLost = (t) => void this.trust.taskLost(t).catch((err: unknown) => this.core.log.error({ task: t.id, err: String(err) }, 'trust: lost task not recorded'));
  }

  get repos(): ServiceCore['repos'] {
    return this.core.repos;
  }
  get sched(): ServiceCore['sched'] {
    return this.core.sched;
  }
  get inflight(): ServiceCore['inflight'] {
    return this.core.inflight;
  }
  get counters(): ServiceCore['counters'] {
    return this.core.counters;
  }
  get clock(): ServiceCore['clock'] {
    return this.core.clock;
  }
  get log(): Logger {
    return this.core.log;
  }

  /** Opens the database and restores the scheduler's state, the window aggregates and
   * the tasks in flight (bounded by the in-flight cap, not by the channel count). */
  static async open(opts: ManagerOptions): Promise<Manager> {
    const log = opts.log ?? pino({ level: 'silent' });
    const clock = opts.clock ?? Date.now;
    const groupIntervals = opts.groupIntervals ?? DEFAULT_GROUP_INTERVALS;
    const repos = await Repositories.open(opts.dataDir, { sync: opts.sync, groups: groupIntervals.length });
    try {
      const meta = await repos.meta.recrawl();
      const recrawl: Partial<RecrawlOptions> = { ...opts.recrawl };
      if (opts.strategy !== undefined) recrawl.strategy = opts.strategy;
      if (opts.rateCap !== undefined) recrawl.rateCap = opts.rateCap;
      const stats = await repos.meta.window();
      const sched = new Scheduler({ recrawl, groupIntervals, retryDelayMs: opts.retryDelayMs }, clock(), meta, stats);
      const counters = { ...zeroCounters(), ...(await repos.meta.counters()) };
      const core: ServiceCore = { repos, sched, inflight: new InFlightSet(), commit: new Mutex(), channelLocks: new KeyedMutex(), counters, clock, log };
      const channels = new ChannelService(core, opts, await repos.meta.channelSeq());
      const archive = opts.archive ?? null;
      const tasks = new TaskService(core, { ...opts, archiveExchanges: archive !== null }, await repos.meta.rounds());
      const active = await tasks.restore();
      await repos.due.open();
      if (stats === undefined || !indexCurrent(await repos.meta.dueIndex(), sched.indexParams())) {
        log.info({ rateCap: sched.state.options.rateCap, minInterval: sched.state.options.minInterval }, 'building the due index from the channel records');
        const n = await rebuildDueIndex(core);
        log.info({ channels: n }, 'due index built');
      }
      const m = new Manager(core, {
        channels,
        tasks,
        ingest: new IngestService(core, tasks, opts.grouping ?? DEFAULT_GROUPING, opts.warc ?? null),
        pages: new PageService(core, channels),
        candidates: new CandidateService(core, channels),
        reporting: new ReportingService(core, tasks),
        archive: archive !== null ? new ArchiveService(core, tasks, archive) : null,
        trust: await TrustService.open(core, opts.trust),
      });
      // A new database, or options given at open that differ from the stored ones (a switch of
      // strategy): stored now, so a later open without them keeps them.
      if (meta === undefined || JSON.stringify(meta.options) !== JSON.stringify(sched.state.options)) await repos.commit([repos.meta.recrawlOp(sched.meta())]);
      log.info({ channels: sched.size, active, strategy: sched.state.options.strategy }, 'manager state restored');
      return m;
    } catch (err) {
      await repos.close();
      throw err;
    }
  }

  /** Waits for dispatches in progress, saves the counters and closes the database. */
  async close(): Promise<void> {
    await this.tasks.settle();
    this.trust.checks.stopSweep();
    const { repos } = this.core;
    await this.core.commit.run(() => repos.commit([repos.meta.countersOp(this.core.counters), repos.volunteers.countersOp(this.trust.counters)]));
    await repos.close();
  }
}
