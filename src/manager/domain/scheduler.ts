// The scheduling rules over src/recrawl's state (the same FIXED/IIR/ICR code the
// simulator runs), without any channel resident: the state holds the groups and
// the window, `stats` the per-group window aggregates (src/recrawl/window-stats.ts),
// and each rule takes a channel's stored record (and its task in flight) and
// returns the new record, updating the aggregates by the difference. Pure: the
// services read the records, call these, and write what they return.
//
// A channel is due when no task of it is in flight and now ≥ last issue + its
// interval (its group's interval, floored and rate-capped by src/recrawl's
// channelInterval), or, after a failure, at its retry time; never issued → due at
// once. Time inside RecrawlState is in MINUTES (like the simulator); this API
// takes epoch milliseconds.
//
// Window semantics (what keeps the aggregates exact): a record's counters count
// only while its `round` is the current one (a round never rewrites the records);
// a task in flight counts as submitted in the window its InFlight says.
import {
  applyICR,
  applyIIR,
  createRecrawlState,
  observeLoad,
  reassignCAF,
  recordFailure,
  recordSuccess,
  shouldReassign,
  type ChannelRecord,
  type GroupTally,
  type RecrawlOptions,
  type RecrawlState,
  type RoundReport,
  type SystemLoad,
} from '../../recrawl/index.js';
import { contribute, emptyStats, iirInputsOf, resetStats, triggerCounts, type GroupStats } from '../../recrawl/window-stats.js';
import type { DueEntry, DueIndexParams, InFlight, RecrawlMeta, SchedRecord } from './schedule-record.js';

export const MINUTE = 60_000;
const toMin = (ms: number): number => ms / MINUTE;

/** The paper's group intervals θ_i (minutes), highest priority first. */
export const DEFAULT_GROUP_INTERVALS: readonly number[] = [60, 120, 240, 480, 960];

/** Which optional per-channel records exist (so issuing a task skips reads that would miss). */
export const DATA_KNOWN = 1;
export const DATA_INTER_SEEDS = 2;
export const DATA_INTER_DIGESTS = 4;
const DATA_ALL = DATA_KNOWN | DATA_INTER_SEEDS | DATA_INTER_DIGESTS;

/** Layout version of the due index (data/due-index.ts). */
const DUE_INDEX_VERSION = 1;

/** A round's pass through the channel records (ICR and CAF): window-stats.ts's IcrScan. */
export type ScanInputs = GroupTally;

export interface SchedulerOptions {
  recrawl?: Partial<RecrawlOptions>;
  groupIntervals?: readonly number[];
  /** Delay before a channel whose task failed is due again, ms (capped at its interval). */
  retryDelayMs?: number;
}

export class Scheduler {
  readonly state: RecrawlState;
  /** Per-group window aggregates: the strategies' inputs, kept exact. */
  stats: GroupStats[];
  readonly retryDelayMs: number;
  readonly groupIntervals: readonly number[];

  constructor(opts: SchedulerOptions = {}, nowMs = 0, meta?: RecrawlMeta, stats?: GroupStats[]) {
    this.groupIntervals = opts.groupIntervals ?? DEFAULT_GROUP_INTERVALS;
    this.retryDelayMs = opts.retryDelayMs ?? 5 * MINUTE;
    // Reuse src/recrawl's constructor for the group records and ICR's ω/Δt: one
    // placeholder channel per group, removed at once.
    const k = this.groupIntervals.length;
    const st = createRecrawlState(
      this.groupIntervals.map((iv, g) => ({ changeInterval: iv, group: g })),
      { maxRoundGap: 24 * 60, ...opts.recrawl },
      toMin(nowMs),
      k,
    );
    st.channels = [];
    if (meta !== undefined) {
      if (meta.groups.length !== k) throw new RangeError(`stored state has ${meta.groups.length} groups, options say ${k}`);
      Object.assign(st, meta);
      st.options = { ...st.options, ...opts.recrawl };
    }
    this.state = st;
    this.stats = stats !== undefined && stats.length === k ? stats : emptyStats(k);
    this.syncTrigger();
  }

  meta(): RecrawlMeta {
    const { channels: _c, triggerCount: _t, topCount: _p, ...rest } = this.state;
    return rest;
  }

  /** What the due index's placement depends on besides the group intervals. */
  indexParams(): DueIndexParams {
    return { version: DUE_INDEX_VERSION, rateCap: this.state.options.rateCap, minInterval: this.state.options.minInterval };
  }

  /** Number of channels. */
  get size(): number {
    return this.stats.reduce((a, g) => a + g.members, 0);
  }

  private get trigger(): number {
    return this.state.options.triggerUpdates;
  }

  private syncTrigger(): void {
    Object.assign(this.state, triggerCounts(this.stats));
  }

  // ------------------------------------------------------------ records

  /** A new channel's record; it joins its group's aggregates. */
  create(group: number, changeInterval: number, hh: number): SchedRecord {
    const g = group >= 0 && group < this.state.groups.length ? group : this.state.groups.length - 1;
    const rec: SchedRecord = { g, ci: changeInterval, sub: 0, suc: 0, fail: 0, round: this.state.rounds, gs: 0, lu: null, ut: [], dt: [], li: 0, ra: 0, x: 0, hh };
    this.join(this.view(rec), 1);
    return rec;
  }

  /** The channel as src/recrawl sees it now: counters of an older window read as zero,
   * a task in flight counted as submitted in the window it belongs to. */
  view(rec: SchedRecord, fl?: InFlight): ChannelRecord {
    const same = rec.round === this.state.rounds;
    const g = rec.g >= 0 && rec.g < this.state.groups.length ? rec.g : this.state.groups.length - 1;
    return {
      group: g,
      changeInterval: rec.ci,
      subCount: (same ? rec.sub : 0) + (fl !== undefined && fl.round === this.state.rounds ? 1 : 0),
      sucCount: same ? rec.suc : 0,
      failCount: same ? rec.fail : 0,
      gapSum: same ? (rec.gs ?? 0) : 0,
      lastUpdate: rec.lu,
      updateTimes: [...rec.ut],
      downloadTimes: [...rec.dt],
    };
  }

  /** The record of a channel's view once no task is in flight (the window is the current one). */
  private toRecord(c: ChannelRecord, prev: SchedRecord, patch: Partial<SchedRecord>): SchedRecord {
    const { fl: _legacy, ...rest } = prev;
    return { ...rest, g: c.group, ci: c.changeInterval, sub: c.subCount, suc: c.sucCount, fail: c.failCount, round: this.state.rounds, gs: c.gapSum, lu: c.lastUpdate, ut: c.updateTimes, dt: c.downloadTimes, ...patch };
  }

  private join(c: ChannelRecord, sign: 1 | -1): void {
    contribute(this.stats, c, sign, this.trigger);
    this.syncTrigger();
  }

  /** Runs one of src/recrawl's per-channel recorders on `c` (so the arithmetic is the simulator's). */
  private record(c: ChannelRecord, fn: (st: RecrawlState) => void): void {
    const st = this.state;
    st.channels = [c];
    try {
      fn(st);
    } finally {
      st.channels = [];
    }
  }

  /** The channel's data bits (which optional records exist). */
  data(rec: SchedRecord): number {
    return rec.x ?? DATA_ALL;
  }

  /** The record with a data bit set, or null when it was already set. */
  withData(rec: SchedRecord, bit: number): SchedRecord | null {
    const x = this.data(rec);
    return (x & bit) === bit ? null : { ...rec, x: x | bit };
  }

  // ------------------------------------------------------------ intervals and due times

  /** The interval (ms) a channel of group g and change interval ci is recrawled at. */
  intervalMsOf(g: number, ci: number): number {
    const o = this.state.options;
    let iv = this.state.groups[g]!.interval;
    if (o.rateCap !== null) iv = Math.max(iv, ci / o.rateCap);
    return Math.max(iv, o.minInterval) * MINUTE;
  }

  intervalMs(rec: SchedRecord): number {
    return this.intervalMsOf(this.view(rec).group, rec.ci);
  }

  /** When the channel is next due (epoch ms); Infinity while a task is in flight. */
  dueAt(rec: SchedRecord, fl?: InFlight): number {
    if (fl !== undefined) return Infinity;
    return this.dueOf(this.entry('', rec));
  }

  /** When a due-index entry is due (epoch ms). */
  dueOf(e: DueEntry): number {
    if (e.ra > 0) return e.ra;
    if (e.li === 0) return 0;
    return e.li + this.intervalMsOf(e.g, e.ci);
  }

  /** The due-index entry of a channel that has no task in flight. */
  entry(id: string, rec: SchedRecord): DueEntry {
    return { id, g: this.view(rec).group, li: rec.li, ra: rec.ra, ci: rec.ci, hh: rec.hh ?? 0, x: this.data(rec) };
  }

  // ------------------------------------------------------------ what happens to a channel

  /** A task was issued for a channel of group g (its record is not rewritten: see InFlight). */
  submitted(g: number): void {
    this.stats[g]!.sub += 1;
  }

  /** The task in flight ended with an update at `nowMs`; `downloadMs` is the crawl's wall time. */
  succeeded(rec: SchedRecord, fl: InFlight, nowMs: number, downloadMs: number): SchedRecord {
    const c = this.view(rec, fl);
    this.join(c, -1);
    this.record(c, (st) => recordSuccess(st, 0, toMin(nowMs), toMin(Math.max(0, downloadMs))));
    this.join(c, 1);
    return this.toRecord(c, rec, { li: fl.issuedAt, ra: 0, x: this.data(rec) | (fl.x ?? 0) });
  }

  /** The task in flight failed (lost, refused, overdue): the channel is due again after the retry delay. */
  failed(rec: SchedRecord, fl: InFlight, nowMs: number): SchedRecord {
    const c = this.view(rec, fl);
    this.join(c, -1);
    this.record(c, (st) => recordFailure(st, 0, toMin(nowMs)));
    this.join(c, 1);
    const ra = nowMs + Math.min(this.retryDelayMs, this.intervalMsOf(c.group, c.changeInterval));
    return this.toRecord(c, rec, { li: fl.issuedAt, ra, x: this.data(rec) | (fl.x ?? 0) });
  }

  /** A move to another group. The window's counts and update gaps were measured at the old
   * group's interval and would drag the new group's IIR interval towards it: the channel
   * starts the window afresh in its new group (its task in flight, if any, counts as
   * submitted there — the caller stores `fl.round`, set here to the current window). */
  regroup(rec: SchedRecord, group: number, fl?: InFlight): SchedRecord {
    if (!(Number.isInteger(group) && group >= 0 && group < this.state.groups.length)) throw new RangeError(`bad group ${group}`);
    const c = this.view(rec, fl);
    if (c.group === group) return rec;
    this.join(c, -1);
    c.group = group;
    c.subCount = 0;
    c.sucCount = 0;
    c.failCount = 0;
    c.gapSum = 0;
    if (fl !== undefined) fl.round = this.state.rounds;
    const next = this.toRecord(c, rec, {});
    this.join(this.view(next, fl), 1);
    return next;
  }

  withChangeInterval(rec: SchedRecord, minutes: number): SchedRecord {
    if (!(minutes > 0 && Number.isFinite(minutes))) throw new RangeError('change interval must be finite and > 0');
    return { ...rec, ci: minutes };
  }

  /** Counts a stored channel into the aggregates (an index rebuild). */
  adopt(rec: SchedRecord, fl?: InFlight): void {
    this.join(this.view(rec, fl), 1);
  }

  /** The channel is deleted: it leaves its group's aggregates. */
  removed(rec: SchedRecord, fl?: InFlight): void {
    this.join(this.view(rec, fl), -1);
  }

  // ------------------------------------------------------------ rounds

  /** Whether the strategy's trigger fired (or the round gap passed). */
  shouldReassign(nowMs: number): boolean {
    this.syncTrigger();
    return shouldReassign(this.state, toMin(nowMs));
  }

  /** Whether a round needs a pass through the channel records (`IcrScan`): ICR and CAF. */
  get needsScan(): boolean {
    const s = this.state.options.strategy;
    return s === 'icr' || s === 'caf';
  }

  /** The crawlers' load as the manager last aggregated it (crawler-load.ts), or null when
   * it heard from none recently: CAF's next round steers on it, or without it on the
   * success rate (src/recrawl/caf.ts). Kept in the state (persisted with it) until the
   * next observation replaces it; the other strategies ignore it. */
  observeLoad(load: SystemLoad | null): void {
    if (load === null) this.state.load = null;
    else observeLoad(this.state, load);
  }

  /** Runs the strategy's round (the trigger already checked) from the aggregates, or for
   * ICR and CAF from a pass through the records; starts a new window. */
  reassign(nowMs: number, scan?: ScanInputs): RoundReport | null {
    const now = toMin(nowMs);
    let r: RoundReport | null;
    switch (this.state.options.strategy) {
      case 'fixed':
        return null;
      case 'iir':
        r = applyIIR(this.state, iirInputsOf(this.stats), now);
        break;
      case 'icr':
        if (scan === undefined) throw new Error('an ICR round needs the pass through the records');
        r = applyICR(this.state, scan, now);
        break;
      case 'caf':
        if (scan === undefined) throw new Error('a CAF round needs the pass through the records');
        r = reassignCAF(this.state, now, scan);
        break;
    }
    resetStats(this.stats);
    this.syncTrigger();
    return r;
  }

  /** The minutes of an epoch-ms time (ICR's pass is made at the round's time). */
  static minutes(ms: number): number {
    return toMin(ms);
  }
}
