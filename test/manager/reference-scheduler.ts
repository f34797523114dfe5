// The reference model of the manager's scheduler: the in-memory scheduler the
// manager ran before the due index (every channel's state resident in arrays),
// kept to check the disk-backed one against (manager-equivalence.test.ts).
// Changed from that version only where the disk-backed scheduler defines the
// behaviour anew, each computed here the plain way over the resident state:
//   - issue order: every due channel sorted by (due time, group, id), skipping a
//     channel whose host has a task in flight or got one in this call (was: a
//     round-robin scan in slot order, the host check in the task service);
//   - a round's IIR/ICR inputs are summed exactly (src/recrawl/window-stats.ts)
//     from the resident records at the round (was: naive sums in slot order).
//
// Each channel has a slot in RecrawlState.channels. A channel is due when no
// task of it is in flight and now ≥ last issue + its interval (its group's
// interval, floored and rate-capped by src/recrawl's channelInterval), or, after
// a failure, at its retry time. Time inside RecrawlState is in MINUTES (like the
// simulator); the scheduler's API takes epoch milliseconds.
//
// Persistence: `record(id)` is the per-channel JSON the manager writes in the
// same batch as the change; `meta()` is the rest of the state. Counters of a
// record written in an earlier observation window (round) are read back as zero,
// so a reassignment never has to rewrite every channel.
import {
  applyICR,
  applyIIR,
  channelInterval,
  createRecrawlState,
  observeLoad,
  reassignCAF,
  recordFailure,
  recordSubmit,
  recordSuccess,
  type ChannelRecord,
  type RecrawlOptions,
  type RecrawlState,
  type RoundReport,
  shouldReassign,
  type SystemLoad,
} from '../../src/recrawl/index.js';
import { IcrScan, iirInputsOf, statsOf, type GroupStats } from '../../src/recrawl/window-stats.js';
import { compareDue } from '../../src/manager/domain/due-order.js';
import { hostKey } from '../../src/manager/domain/in-flight.js';
import type { RecrawlMeta, SchedRecord } from '../../src/manager/domain/schedule-record.js';

export const MINUTE = 60_000;
const toMin = (ms: number): number => ms / MINUTE;

/** The paper's group intervals θ_i (minutes), highest priority first. */
export const DEFAULT_GROUP_INTERVALS: readonly number[] = [60, 120, 240, 480, 960];

/** Which optional per-channel records exist (so issuing a task skips reads that would miss). */
const DATA_KNOWN = 1;
const DATA_INTER_SEEDS = 2;
const DATA_INTER_DIGESTS = 4;


export interface SchedulerOptions {
  recrawl?: Partial<RecrawlOptions>;
  groupIntervals?: readonly number[];
  /** Delay before a channel whose task failed is due again, ms (capped at its interval). */
  retryDelayMs?: number;
}

export class ReferenceScheduler {
  readonly state: RecrawlState;
  private readonly ids: string[] = [];
  private readonly slotOf = new Map<string, number>();
  private lastIssued: number[] = [];
  private retryAt: number[] = [];
  private inflight: (string | null)[] = [];
  /** Deadline (epoch ms) of the task in flight, and whether a crawler accepted it. */
  private deadline: number[] = [];
  private running: number[] = [];
  private data: number[] = [];
  private hh: number[] = [];
  readonly retryDelayMs: number;
  readonly groupIntervals: readonly number[];

  constructor(opts: SchedulerOptions = {}, nowMs = 0, meta?: RecrawlMeta) {
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
    st.topCount = 0;
    st.triggerCount = 0;
    if (meta !== undefined) {
      if (meta.groups.length !== k) throw new RangeError(`stored state has ${meta.groups.length} groups, options say ${k}`);
      Object.assign(st, meta, { options: { ...meta.options, ...opts.recrawl } });
      st.options = { ...st.options, ...opts.recrawl };
    }
    this.state = st;
  }

  meta(): RecrawlMeta {
    const { channels: _c, triggerCount: _t, topCount: _p, ...rest } = this.state;
    return rest;
  }

  get size(): number {
    return this.ids.length;
  }

  channelIds(): string[] {
    return [...this.ids];
  }

  has(id: string): boolean {
    return this.slotOf.has(id);
  }


  /** Adds a channel (or restores it from its record). */
  add(id: string, group: number, changeInterval: number, rec?: SchedRecord, host = id): void {
    if (this.slotOf.has(id)) throw new Error(`channel ${id} already scheduled`);
    const st = this.state;
    const sameRound = rec !== undefined && rec.round === st.rounds;
    const c: ChannelRecord = {
      group: rec?.g ?? group,
      changeInterval: rec?.ci ?? changeInterval,
      subCount: sameRound ? rec.sub : 0,
      sucCount: sameRound ? rec.suc : 0,
      failCount: sameRound ? rec.fail : 0,
      gapSum: sameRound ? (rec.gs ?? 0) : 0,
      lastUpdate: rec?.lu ?? null,
      updateTimes: rec?.ut ?? [],
      downloadTimes: rec?.dt ?? [],
    };
    if (!(c.group >= 0 && c.group < st.groups.length)) c.group = st.groups.length - 1;
    const slot = st.channels.length;
    st.channels.push(c);
    this.ids.push(id);
    this.slotOf.set(id, slot);
    this.lastIssued.push(rec?.li ?? 0);
    this.retryAt.push(rec?.ra ?? 0);
    this.inflight.push(rec?.fl ?? null);
    this.deadline.push(0);
    this.running.push(0);
    this.data.push(rec === undefined ? 0 : (rec.x ?? DATA_KNOWN | DATA_INTER_SEEDS | DATA_INTER_DIGESTS));
    this.hh.push(hostKey(host));
    this.count(c, +1);
  }

  private count(c: ChannelRecord, d: 1 | -1): void {
    if (c.group !== 0) return;
    this.state.topCount += d;
    if (c.sucCount > this.state.options.triggerUpdates) this.state.triggerCount += d;
  }

  private slot(id: string): number {
    const s = this.slotOf.get(id);
    if (s === undefined) throw new Error(`unknown channel ${id}`);
    return s;
  }

  remove(id: string): void {
    const s = this.slot(id);
    const st = this.state;
    this.count(st.channels[s]!, -1);
    const last = st.channels.length - 1;
    if (s !== last) {
      st.channels[s] = st.channels[last]!;
      const moved = this.ids[last]!;
      this.ids[s] = moved;
      this.slotOf.set(moved, s);
      this.lastIssued[s] = this.lastIssued[last]!;
      this.retryAt[s] = this.retryAt[last]!;
      this.inflight[s] = this.inflight[last]!;
      this.deadline[s] = this.deadline[last]!;
      this.running[s] = this.running[last]!;
      this.data[s] = this.data[last]!;
      this.hh[s] = this.hh[last]!;
    }
    st.channels.pop();
    this.ids.pop();
    this.lastIssued.pop();
    this.retryAt.pop();
    this.inflight.pop();
    this.deadline.pop();
    this.running.pop();
    this.data.pop();
    this.hh.pop();
    this.slotOf.delete(id);
  }

  channel(id: string): ChannelRecord {
    return this.state.channels[this.slot(id)]!;
  }

  setGroup(id: string, group: number): void {
    if (!(Number.isInteger(group) && group >= 0 && group < this.state.groups.length)) throw new RangeError(`bad group ${group}`);
    const s = this.slot(id);
    const c = this.state.channels[s]!;
    if (c.group === group) return;
    this.count(c, -1);
    c.group = group;
    // The window's counts and update gaps were measured at the old group's interval and
    // would drag the new group's IIR interval towards it: the channel starts the window
    // afresh in its new group (its task in flight, if any, counts as submitted there).
    c.subCount = this.inflight[s] !== null ? 1 : 0;
    c.sucCount = 0;
    c.failCount = 0;
    c.gapSum = 0;
    this.count(c, +1);
  }

  setChangeInterval(id: string, minutes: number): void {
    if (!(minutes > 0 && Number.isFinite(minutes))) throw new RangeError('change interval must be finite and > 0');
    this.channel(id).changeInterval = minutes;
  }

  /** The interval this channel is recrawled at, ms. */
  intervalMs(id: string): number {
    return channelInterval(this.state, this.slot(id)) * MINUTE;
  }

  /** When the channel is next due (epoch ms); Infinity while a task is in flight. */
  dueAt(id: string): number {
    return this.dueAtSlot(this.slot(id));
  }

  private dueAtSlot(s: number): number {
    if (this.inflight[s] !== null) return Infinity;
    const ra = this.retryAt[s]!;
    if (ra > 0) return ra;
    const li = this.lastIssued[s]!;
    return li === 0 ? 0 : li + channelInterval(this.state, s) * MINUTE;
  }

  inFlight(id: string): string | null {
    return this.inflight[this.slot(id)]!;
  }

  /** Up to `limit` due channels in issue order — by (due time, group, id) — leaving out
   * a channel whose host has a task in flight or already got one in this call. */
  due(nowMs: number, limit: number): string[] {
    const busy = new Set<number>();
    for (let s = 0; s < this.ids.length; s++) if (this.inflight[s] !== null) busy.add(this.hh[s]!);
    const cands: { due: number; g: number; id: string; s: number }[] = [];
    for (let s = 0; s < this.ids.length; s++) {
      const due = this.dueAtSlot(s);
      if (due <= nowMs) cands.push({ due, g: this.state.channels[s]!.group, id: this.ids[s]!, s });
    }
    cands.sort(compareDue);
    const out: string[] = [];
    for (const c of cands) {
      if (out.length >= limit) break;
      if (busy.has(this.hh[c.s]!)) continue;
      busy.add(this.hh[c.s]!);
      out.push(c.id);
    }
    return out;
  }

  /** Up to `limit` due channels in slot order, without moving the round-robin cursor. */
  listDue(nowMs: number, limit: number): string[] {
    const out: string[] = [];
    for (let s = 0; s < this.ids.length && out.length < limit; s++) if (this.dueAtSlot(s) <= nowMs) out.push(this.ids[s]!);
    return out;
  }

  /** Number of channels due now (a full scan). */
  countDue(nowMs: number): number {
    let k = 0;
    for (let s = 0; s < this.ids.length; s++) if (this.dueAtSlot(s) <= nowMs) k++;
    return k;
  }

  /** Tasks in flight: issued (not yet accepted by a crawler) and running. */
  countInFlight(): { issued: number; running: number } {
    let issued = 0;
    let running = 0;
    for (let s = 0; s < this.inflight.length; s++) {
      if (this.inflight[s] === null) continue;
      if (this.running[s] === 1) running++;
      else issued++;
    }
    return { issued, running };
  }

  /** Which of the channel's optional records (known pages, inter-site seeds and digests) exist. */
  optionalRecords(id: string): { known: boolean; interSeeds: boolean; interDigests: boolean } {
    const x = this.data[this.slot(id)]!;
    return { known: (x & DATA_KNOWN) !== 0, interSeeds: (x & DATA_INTER_SEEDS) !== 0, interDigests: (x & DATA_INTER_DIGESTS) !== 0 };
  }

  /** The channel now has known pages; true if that changed its record. */
  markKnown(id: string): boolean {
    return this.markData(id, DATA_KNOWN);
  }

  /** The channel now has inter-site seeds; true if that changed its record. */
  markInterSeeds(id: string): boolean {
    return this.markData(id, DATA_INTER_SEEDS);
  }

  /** The channel now has inter-site digests; true if that changed its record. */
  markInterDigests(id: string): boolean {
    return this.markData(id, DATA_INTER_DIGESTS);
  }

  private markData(id: string, bit: number): boolean {
    const s = this.slot(id);
    if ((this.data[s]! & bit) === bit) return false;
    this.data[s] = this.data[s]! | bit;
    return true;
  }

  /** A crawler accepted the task in flight. */
  setRunning(id: string, taskId: string): boolean {
    const s = this.slot(id);
    if (this.inflight[s] !== taskId) return false;
    this.running[s] = 1;
    return true;
  }

  /** Tasks in flight whose deadline + grace has passed: [channel, task]. */
  overdue(nowMs: number, graceMs: number, limit = Infinity): [string, string][] {
    const out: [string, string][] = [];
    for (let s = 0; s < this.inflight.length && out.length < limit; s++) {
      const t = this.inflight[s];
      if (t !== null && t !== undefined && nowMs > this.deadline[s]! + graceMs) out.push([this.ids[s]!, t]);
    }
    return out;
  }

  /** Up to `limit` tasks in flight, optionally only issued or only running: [channel, task]. */
  inFlightTasks(limit: number, state?: 'issued' | 'running'): [string, string][] {
    const out: [string, string][] = [];
    for (let s = 0; s < this.inflight.length && out.length < limit; s++) {
      const t = this.inflight[s];
      if (t === null || t === undefined) continue;
      if (state !== undefined && (this.running[s] === 1) !== (state === 'running')) continue;
      out.push([this.ids[s]!, t]);
    }
    return out;
  }

  /** Restart: an active task whose issue was not written to the channel's record. */
  restoreInFlight(id: string, taskId: string, issuedAt: number, round: number, deadline: number, running: boolean): void {
    const s = this.slot(id);
    this.deadline[s] = deadline;
    this.running[s] = running ? 1 : 0;
    if (this.inflight[s] === taskId) return;
    if (issuedAt < this.lastIssued[s]!) return; // an older task; the record is newer
    this.inflight[s] = taskId;
    this.lastIssued[s] = issuedAt;
    this.retryAt[s] = 0;
    if (round === this.state.rounds) this.state.channels[s]!.subCount += 1;
  }

  markIssued(id: string, taskId: string, nowMs: number, deadline: number): void {
    const s = this.slot(id);
    this.inflight[s] = taskId;
    this.deadline[s] = deadline;
    this.running[s] = 0;
    this.lastIssued[s] = nowMs;
    this.retryAt[s] = 0;
    recordSubmit(this.state, s, toMin(nowMs));
  }

  /** The task finished with an update. Ignored if `taskId` is not the one in flight
   * (a late duplicate). `downloadMs` is the crawl's wall time. */
  markSuccess(id: string, taskId: string, nowMs: number, downloadMs: number): boolean {
    const s = this.slot(id);
    if (this.inflight[s] !== taskId) return false;
    this.inflight[s] = null;
    this.retryAt[s] = 0;
    this.deadline[s] = 0;
    this.running[s] = 0;
    recordSuccess(this.state, s, toMin(nowMs), toMin(Math.max(0, downloadMs)));
    return true;
  }

  /** The task failed (lost, refused, overdue): the channel is due again after the retry delay. */
  markFailure(id: string, taskId: string, nowMs: number): boolean {
    const s = this.slot(id);
    if (this.inflight[s] !== taskId) return false;
    this.inflight[s] = null;
    this.deadline[s] = 0;
    this.running[s] = 0;
    this.retryAt[s] = nowMs + Math.min(this.retryDelayMs, channelInterval(this.state, s) * MINUTE);
    recordFailure(this.state, s, toMin(nowMs));
    return true;
  }

  /** Runs the strategy's reassignment when its trigger fires, from exact sums over
   * every resident record; CAF with the crawlers' load `load` (null: none heard). */
  maybeReassign(nowMs: number, load: SystemLoad | null = null): RoundReport | null {
    const st = this.state;
    const now = toMin(nowMs);
    if (!shouldReassign(st, now)) return null;
    if (st.options.strategy === 'iir') return applyIIR(st, iirInputsOf(this.groupStats()), now);
    if (st.options.strategy !== 'icr' && st.options.strategy !== 'caf') return null;
    const scan = new IcrScan(st, now);
    for (const c of st.channels) scan.add(c);
    if (st.options.strategy === 'icr') return applyICR(st, scan.inputs(this.groupStats()), now);
    if (load === null) st.load = null;
    else observeLoad(st, load);
    return reassignCAF(st, now, scan.inputs(this.groupStats()));
  }

  /** The window aggregates, from scratch over the resident records. */
  groupStats(): GroupStats[] {
    return statsOf(this.state.channels, this.state.groups.length, this.state.options.triggerUpdates);
  }

  record(id: string): SchedRecord {
    const s = this.slot(id);
    const c = this.state.channels[s]!;
    return {
      g: c.group,
      ci: c.changeInterval,
      sub: c.subCount,
      suc: c.sucCount,
      fail: c.failCount,
      round: this.state.rounds,
      gs: c.gapSum,
      lu: c.lastUpdate,
      ut: c.updateTimes,
      dt: c.downloadTimes,
      li: this.lastIssued[s]!,
      ra: this.retryAt[s]!,
      fl: this.inflight[s]!,
      x: this.data[s]!,
    };
  }
}
