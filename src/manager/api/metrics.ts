// GET /metrics: the manager's figures for Prometheus, through prom-client (the
// exposition format, label escaping and the process metrics — resident memory,
// CPU, heap, event-loop lag, GC — come from it). One registry per API server:
// several managers in one process (the tests) keep their figures apart. The
// values are read from the services when scraped; the counters are the
// manager's own (persisted across restarts), so they are set, not incremented.
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { Counters } from '../domain/records.js';
import type { ApiContext } from './routes.js';
import { trustMetrics } from './trust-metrics.js';
import type { VolunteerStates } from '../volunteer-states.js';

interface Snapshot {
  channels: number;
  groups: { group: number; channels: number; intervalMinutes: number; updateQuality: number | null }[];
  tasks: { queued: number; issued: number; running: number };
  counters: Counters;
  crawlers: number;
  owner: ReturnType<VolunteerStates['counts']> | null;
  reach: ReturnType<VolunteerStates['reachCounts']> | null;
}

export interface Metrics {
  contentType: string;
  /** The exposition text, read from the manager now. */
  scrape(): Promise<string>;
}

export function createMetrics(ctx: ApiContext): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // The figures of the scrape in progress (concurrent scrapes read the latest).
  let s: Snapshot | null = null;
  const snap = (): Snapshot => s!;
  const registers = [registry];

  const gauge = (name: string, help: string, value: (x: Snapshot) => number) =>
    new Gauge({ name, help, registers, collect() { this.set(value(snap())); } });
  const perGroup = (name: string, help: string, value: (g: Snapshot['groups'][number]) => number | null) =>
    new Gauge({ name, help, labelNames: ['group'], registers, collect() {
      this.reset();
      for (const g of snap().groups) {
        const v = value(g);
        if (v !== null) this.set({ group: g.group }, v);
      }
    } });
  const counter = (name: string, help: string, key: keyof Counters) =>
    new Counter({ name, help, registers, collect() { this.reset(); this.inc(snap().counters[key]); } });

  gauge('volcrawl_channels', 'Channels in the database.', (x) => x.channels);
  perGroup('volcrawl_group_channels', 'Channels per priority group.', (g) => g.channels);
  perGroup('volcrawl_group_interval_seconds', 'Current recrawl interval per priority group.', (g) => g.intervalMinutes * 60);
  perGroup('volcrawl_group_update_quality', 'Mean actual/expected update rate per group (paper eq. 5).', (g) => g.updateQuality);
  new Gauge({ name: 'volcrawl_tasks', help: 'Tasks by state (queued = channels due, not yet issued).', labelNames: ['state'], registers, collect() {
    for (const [state, v] of Object.entries(snap().tasks)) this.set({ state }, v);
  } });
  counter('volcrawl_tasks_issued_total', 'Tasks issued.', 'tasksIssued');
  counter('volcrawl_tasks_succeeded_total', 'Tasks completed with an update.', 'tasksSucceeded');
  counter('volcrawl_tasks_failed_total', 'Tasks failed (no crawler, refused, crawler-reported failure, overdue).', 'tasksFailed');
  counter('volcrawl_tasks_overdue_total', 'Tasks failed because their deadline passed.', 'tasksOverdue');
  new Counter({ name: 'volcrawl_uploads_total', help: 'Upload parts by outcome.', labelNames: ['outcome'], registers, collect() {
    const c = snap().counters;
    this.reset();
    this.inc({ outcome: 'applied' }, c.uploadsApplied);
    this.inc({ outcome: 'duplicate' }, c.uploadsDuplicate);
    this.inc({ outcome: 'refused' }, c.uploadsRefused);
  } });
  counter('volcrawl_pages_stored_total', 'Page versions stored.', 'pagesStored');
  counter('volcrawl_page_text_chars_total', 'Characters of page text stored.', 'pageBytes');
  counter('volcrawl_group_moves_total', 'Channels moved between priority groups by the estimator.', 'groupMoves');
  counter('volcrawl_recrawl_rounds_total', 'Interval reassignment rounds (IIR/ICR/CAF).', 'rounds');
  gauge('volcrawl_crawlers_online', 'Crawlers the manager has heard from and not seen leave.', (x) => x.crawlers);
  new Gauge({ name: 'volcrawl_volunteers_owner_state', help: "Volunteers by the state their owner's controls set, as last reported (paused ones get no task).", labelNames: ['state'], registers, collect() {
    const o = snap().owner;
    this.reset();
    if (o !== null) for (const state of ['running', 'paused'] as const) this.set({ state }, o[state]);
  } });
  new Gauge({ name: 'volcrawl_volunteers_paused', help: 'Paused volunteers by reason (schedule, cap, busy, battery, owner; one volunteer can have several).', labelNames: ['reason'], registers, collect() {
    const o = snap().owner;
    this.reset();
    if (o !== null) for (const [reason, v] of Object.entries(o.reasons)) this.set({ reason }, v);
  } });
  new Gauge({ name: 'volcrawl_volunteers_reachability', help: 'Online volunteers by how others reach them (public, mapped, punched, relayed, pull, starting, unreachable; unknown: not reported).', labelNames: ['reach'], registers, collect() {
    const r = snap().reach;
    this.reset();
    if (r !== null) for (const [reach, v] of Object.entries(r)) this.set({ reach }, v);
  } });
  trustMetrics(registers, ctx);

  return {
    contentType: registry.contentType,
    async scrape() {
      const m = ctx.manager;
      const t = await m.reporting.taskSummary();
      // Read once per scrape: formula (5) and the queued count take a pass (kept while fresh: reporting.ts).
      s = { channels: m.sched.size, groups: await m.reporting.groups(), tasks: { queued: t.queued, issued: t.issued, running: t.running }, counters: { ...m.counters }, crawlers: ctx.node?.crawlers().length ?? 0, owner: ctx.node?.ownerStates?.counts() ?? null, reach: reachCounts(ctx) };
      return registry.metrics();
    },
  };
}

function reachCounts(ctx: ApiContext): Snapshot['reach'] {
  const n = ctx.node;
  if (n?.ownerStates === undefined) return null;
  return n.ownerStates.reachCounts(n.crawlers().map((p) => p.id), n.pulls?.live() ?? new Set());
}
