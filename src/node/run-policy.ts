// Whether the volunteer crawls right now, and why not: a pure function of the
// owner's preferences, the clock, the OS probes, the transfer ledger's
// remaining bytes and the policy's own memory (which the caller keeps and may
// persist as JSON). Pauses for CPU and battery have hysteresis — they begin
// above one threshold, end only below a lower one and last at least a minimum
// time — so the node does not flap; schedule and cap pauses follow their
// boundaries exactly; the owner's pause lasts until resumed or until its end.
import { formatMinutes, localTime, WEEKDAYS } from './local-time.js';
import type { Reading, PowerSource } from './os-probe.js';
import type { Prefs, TimeWindow } from './prefs.js';

export type PauseReason = 'owner' | 'cap' | 'schedule' | 'battery' | 'busy';
/** Order in which reasons are reported (the first is the headline). */
export const PAUSE_REASONS: readonly PauseReason[] = ['owner', 'cap', 'schedule', 'battery', 'busy'];

/** The policy's state between decisions (plain JSON). */
export interface PolicyMemory {
  state: 'running' | 'paused';
  /** When the current state began, epoch ms. */
  since: number;
  /** The owner's pause: until (epoch ms) or null = until resumed. */
  owner: { since: number; until: number | null } | null;
  /** Start of the current CPU pause, or null. */
  busySince: number | null;
  /** Start of the current battery pause, or null. */
  batterySince: number | null;
}

export interface PolicyInputs {
  /** Epoch ms. */
  now: number;
  prefs: Prefs;
  cpuOtherPercent: Reading<number>;
  power: Reading<PowerSource>;
  /** Bytes left in the current day and month periods (null = no cap), from the ledger. */
  remaining: { day: number | null; month: number | null };
}

export interface RunDecision {
  state: 'running' | 'paused';
  /** Every reason that holds now, headline first; empty when running. */
  reasons: PauseReason[];
  /** One line per reason, for `status` and the logs. */
  details: string[];
  /** Probes that could not be read, and what that means for the policy. */
  notes: string[];
  /** The state differs from the one in the memory passed in. */
  changed: boolean;
  memory: PolicyMemory;
}

export function initialMemory(now: number): PolicyMemory {
  return { state: 'running', since: now, owner: null, busySince: null, batterySince: null };
}

/** The owner pauses, for `forMs` or (undefined) until resumed. */
export function ownerPause(m: PolicyMemory, now: number, forMs?: number): PolicyMemory {
  if (forMs !== undefined && !(forMs > 0 && Number.isFinite(forMs))) throw new RangeError('a pause lasts a positive, finite time');
  return { ...m, owner: { since: now, until: forMs === undefined ? null : now + forMs } };
}

/** The owner resumes: only the owner's pause ends (a cap or schedule still holds). */
export function ownerResume(m: PolicyMemory): PolicyMemory {
  return { ...m, owner: null };
}

function inWindow(day: TimeWindow[], minutes: number): boolean {
  return day.some((w) => (w.start < w.end ? minutes >= w.start && minutes < w.end : minutes >= w.start));
}
function inSpillover(prevDay: TimeWindow[], minutes: number): boolean {
  return prevDay.some((w) => w.end <= w.start && minutes < w.end);
}

/** Inside a crawl window at `now` (local time in prefs.timeZone)? Also the next window start, for the message. */
export function scheduleAllows(schedule: TimeWindow[][] | null, now: number, timeZone: string | null): { allowed: boolean; next: string | null } {
  if (schedule === null) return { allowed: true, next: null };
  const t = localTime(now, timeZone ?? undefined);
  const today = schedule[t.weekday] ?? [];
  const yesterday = schedule[(t.weekday + 6) % 7] ?? [];
  if (inWindow(today, t.minutes) || inSpillover(yesterday, t.minutes)) return { allowed: true, next: null };
  for (let d = 0; d < 8; d++) {
    const wd = (t.weekday + d) % 7;
    const starts = (schedule[wd] ?? []).map((w) => w.start).filter((s) => d > 0 || s > t.minutes).sort((a, b) => a - b);
    if (starts.length > 0) return { allowed: false, next: `${d === 0 ? 'today' : WEEKDAYS[wd]} ${formatMinutes(starts[0] as number)}` };
  }
  return { allowed: false, next: null };
}

function bytes(n: number): string {
  return n >= 1e9 ? `${(n / 1e9).toFixed(2)} GB` : n >= 1e6 ? `${(n / 1e6).toFixed(1)} MB` : `${Math.round(n / 1e3)} kB`;
}

function minutesLeft(ms: number): string {
  const m = Math.ceil(ms / 60_000);
  return m >= 120 ? `${Math.floor(m / 60)} h ${m % 60} min` : `${m} min`;
}

/** Decides running or paused, and why. Pure. */
export function decideRunState(prev: PolicyMemory, inp: PolicyInputs): RunDecision {
  const { now, prefs } = inp;
  const pw = prefs.pauseWhen;
  const notes: string[] = [];
  const held = new Map<PauseReason, string>();

  // The owner.
  let owner = prev.owner;
  if (owner && owner.until !== null && now >= owner.until) owner = null;
  if (owner) held.set('owner', owner.until === null ? 'paused by the owner until resumed' : `paused by the owner for ${minutesLeft(owner.until - now)} more`);

  // Transfer caps: a hard limit, no hysteresis (the period start ends it).
  const { day, month } = inp.remaining;
  if (day !== null && day <= 0) held.set('cap', `daily transfer cap reached (${bytes(prefs.transfer.dailyCapBytes ?? 0)}); resumes when the next day starts at ${formatMinutes(prefs.transfer.dayStartsAt)}`);
  else if (month !== null && month <= 0) held.set('cap', `monthly transfer cap reached (${bytes(prefs.transfer.monthlyCapBytes ?? 0)}); resumes when the month starts on day ${prefs.transfer.monthStartsOn}`);

  // Crawl windows: exactly at their edges.
  const sched = scheduleAllows(prefs.schedule, now, prefs.timeZone);
  if (!sched.allowed) held.set('schedule', `outside the crawl windows${sched.next ? ` (next: ${sched.next})` : ' (none set)'}`);

  // Battery, with a minimum pause.
  let batterySince = pw.onBattery ? prev.batterySince : null;
  if (!inp.power.known && pw.onBattery) notes.push(`power source unknown (${inp.power.why}): not pausing for battery`);
  if (pw.onBattery) {
    const onBattery = inp.power.known && inp.power.value === 'battery';
    if (batterySince === null) {
      if (onBattery) batterySince = now;
    } else if (!onBattery && now - batterySince >= pw.minPauseMs) batterySince = null;
  }
  if (batterySince !== null) {
    const onBattery = inp.power.known && inp.power.value === 'battery';
    held.set('battery', onBattery ? 'running on battery' : `back on AC; the pause lasts at least ${minutesLeft(batterySince + pw.minPauseMs - now)} more`);
  }

  // Other programs' CPU use, with two thresholds and a minimum pause.
  const above = pw.cpuBusyAbove;
  let busySince = above === null ? null : prev.busySince;
  const cpu = inp.cpuOtherPercent;
  if (above !== null && !cpu.known) notes.push(`CPU use unknown (${cpu.why}): not pausing for it`);
  if (above !== null) {
    if (busySince === null) {
      if (cpu.known && cpu.value > above) busySince = now;
    } else if (now - busySince >= pw.minPauseMs && (!cpu.known || cpu.value < pw.cpuResumeBelow)) busySince = null;
  }
  if (busySince !== null) {
    const pct = cpu.known ? `${cpu.value.toFixed(0)}%` : 'unknown';
    const wait = busySince + pw.minPauseMs - now;
    held.set('busy', `other programs use the CPU (${pct} over ${pw.cpuWindowMs / 1000} s); resumes below ${pw.cpuResumeBelow}%${wait > 0 ? ` and after ${minutesLeft(wait)} more` : ''}`);
  }

  const reasons = PAUSE_REASONS.filter((r) => held.has(r));
  const state = reasons.length > 0 ? 'paused' : 'running';
  const changed = state !== prev.state;
  return {
    state,
    reasons,
    details: reasons.map((r) => `${r}: ${held.get(r) as string}`),
    notes,
    changed,
    memory: { state, since: changed ? now : prev.since, owner, busySince, batterySince },
  };
}
