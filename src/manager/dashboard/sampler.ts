// The dashboard's time series: every `sampleMs` the manager's counters, task
// states, crawlers online and per-group interval / update quality are recorded
// in a bounded ring (what the charts draw). In memory only: the series starts
// again when the manager restarts.
import type { Manager } from '../manager.js';
import type { NodeView } from '../api/routes.js';

export interface Sample {
  /** Epoch ms (the manager's clock). */
  t: number;
  crawlers: number;
  queued: number;
  issued: number;
  running: number;
  tasksIssued: number;
  tasksSucceeded: number;
  tasksFailed: number;
  pagesStored: number;
  /** Per group: interval (minutes) and update quality (null before any update). */
  groups: { group: number; channels: number; intervalMinutes: number; updateQuality: number | null }[];
}

export class Sampler {
  readonly samples: Sample[] = [];
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly manager: Manager,
    private readonly node: NodeView | null,
    readonly sampleMs = 5000,
    readonly capacity = 720,
  ) {}

  start(): void {
    const take = () => void this.sample().catch(() => undefined); // a closing database: the next sample tries again
    take();
    this.timer = setInterval(take, this.sampleMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  async sample(): Promise<Sample> {
    const m = this.manager;
    const t = await m.reporting.taskSummary();
    const groups = await m.reporting.groups();
    const c = m.counters;
    const s: Sample = {
      t: m.clock(),
      crawlers: this.node?.crawlers().length ?? 0,
      queued: t.queued,
      issued: t.issued,
      running: t.running,
      tasksIssued: c.tasksIssued,
      tasksSucceeded: c.tasksSucceeded,
      tasksFailed: c.tasksFailed,
      pagesStored: c.pagesStored,
      groups: groups.map((g) => ({ group: g.group, channels: g.channels, intervalMinutes: g.intervalMinutes, updateQuality: g.updateQuality })),
    };
    this.samples.push(s);
    if (this.samples.length > this.capacity) this.samples.splice(0, this.samples.length - this.capacity);
    return s;
  }
}
