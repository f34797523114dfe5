// The transfer ledger and the owner's contribution record, in
// <data-dir>/ledger.json: per local day, bytes down and up, tasks, pages, and
// the time the node was online and crawling. The daily and monthly transfer
// periods start where the owner says (day_starts_at, month_starts_on), so
// "today" and "this month" are periods, not calendar days. Written atomically
// (temp file + rename) every few seconds and on close, so counts survive
// restarts and a crash loses at most the last few seconds.
//
// The cap is hard: `reserve` hands out room for one page at a time and only
// while the bytes used plus the room already handed out are below the cap, so
// however many threads fetch at once the cap is exceeded by less than one
// reservation (one page's size limit).
import { readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from './atomic-file.js';
import { addDays, dateKey, isDateKey, localTime, parseDateKey } from './local-time.js';
import type { Prefs } from './prefs.js';

export const LEDGER_FILE = 'ledger.json';

export interface DayRecord {
  down: number;
  up: number;
  tasks: number;
  pages: number;
  /** Time the node was up and joined. */
  onlineMs: number;
  /** Time it was up and not paused. */
  activeMs: number;
}

export interface PeriodConfig {
  timeZone: string | null;
  /** Local minute of the day the daily period starts. */
  dayStartsAt: number;
  /** Day of the month (1..28) the monthly period starts. */
  monthStartsOn: number;
  dailyCapBytes: number | null;
  monthlyCapBytes: number | null;
}

export function periodConfig(p: Prefs): PeriodConfig {
  return { timeZone: p.timeZone, ...p.transfer };
}

export interface LedgerOptions {
  path: string;
  periods: PeriodConfig;
  /** Epoch ms (default Date.now). */
  now?: () => number;
  /** Days of history kept (default 400). */
  keepDays?: number;
  /** Write dirty counts this often, ms (default 5000; 0 = only on flush/close). */
  autoFlushMs?: number;
  /** A gap between ticks longer than this (a suspended computer) is not counted as online time (default 60 s). */
  maxTickGapMs?: number;
}

export interface Reservation {
  /** Records what the page really moved and frees the rest of the room. Idempotent. */
  settle(down: number, up?: number): void;
}

const count = z.number().int().min(0).max(1e15);
const fileSchema = z.object({
  version: z.literal(1),
  days: z.record(
    z.string().refine(isDateKey),
    z.object({ down: count, up: count, tasks: count, pages: count, onlineMs: count, activeMs: count }),
  ),
});

const empty = (): DayRecord => ({ down: 0, up: 0, tasks: 0, pages: 0, onlineMs: 0, activeMs: 0 });

export class Ledger {
  private readonly days = new Map<string, DayRecord>();
  private periods: PeriodConfig;
  private readonly now: () => number;
  private readonly keepDays: number;
  private readonly maxTickGapMs: number;
  private dirty = false;
  private lastTick: number | null = null;
  private reserved = 0;
  private timer: NodeJS.Timeout | null = null;
  /** Why the file on disk was not used, if it was not (it is moved aside, never deleted). */
  readonly warning: string | null = null;

  constructor(private readonly opts: LedgerOptions) {
    this.periods = opts.periods;
    this.now = opts.now ?? Date.now;
    this.keepDays = opts.keepDays ?? 400;
    this.maxTickGapMs = opts.maxTickGapMs ?? 60_000;
    this.warning = this.load();
    if ((opts.autoFlushMs ?? 5000) > 0) {
      this.timer = setInterval(() => this.flush(), opts.autoFlushMs ?? 5000);
      this.timer.unref();
    }
  }

  static path(dataDir: string): string {
    return join(dataDir, LEDGER_FILE);
  }

  private load(): string | null {
    let text: string;
    try {
      text = readFileSync(this.opts.path, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      return `cannot read ${this.opts.path}: ${(e as Error).message}; counting from zero`;
    }
    let parsed: z.infer<typeof fileSchema>;
    try {
      parsed = fileSchema.parse(JSON.parse(text));
    } catch (e) {
      const issue = e instanceof z.ZodError ? e.issues[0] : undefined;
      const why = issue ? `${issue.path.join('.')}: ${issue.message}` : (e as Error).message.slice(0, 200);
      const aside = `${this.opts.path}.corrupt-${this.now()}`;
      try {
        renameSync(this.opts.path, aside);
      } catch {
        // keep going: it will be overwritten, but the reason is reported
      }
      return `${this.opts.path} is not a valid ledger (${why}); moved to ${aside}, counting from zero`;
    }
    for (const [k, v] of Object.entries(parsed.days)) this.days.set(k, v);
    return null;
  }

  /** New period settings (preferences reloaded). */
  setPeriods(p: PeriodConfig): void {
    this.periods = p;
  }

  /** The daily period an instant falls in, named by the local date it starts on. */
  dayKey(t: number = this.now()): string {
    const lt = localTime(t, this.periods.timeZone ?? undefined);
    const key = dateKey(lt.year, lt.month, lt.day);
    return lt.minutes < this.periods.dayStartsAt ? addDays(key, -1) : key;
  }

  /** The monthly period a daily period belongs to, named by its first day. */
  monthKey(day: string): string {
    const { year, month, day: d } = parseDateKey(day);
    const s = this.periods.monthStartsOn;
    if (d >= s) return dateKey(year, month, s);
    return month === 1 ? dateKey(year - 1, 12, s) : dateKey(year, month - 1, s);
  }

  private record(t: number): DayRecord {
    const key = this.dayKey(t);
    let r = this.days.get(key);
    if (!r) {
      r = empty();
      this.days.set(key, r);
      this.prune(key);
    }
    this.dirty = true;
    return r;
  }

  private prune(today: string): void {
    const oldest = addDays(today, 1 - this.keepDays);
    for (const k of this.days.keys()) if (k < oldest) this.days.delete(k);
  }

  /** Bytes moved, down and up (the caller counts what the OS would: headers and bodies, both directions). */
  addTransfer(down: number, up = 0, t: number = this.now()): void {
    if (!(down >= 0 && up >= 0)) throw new RangeError('byte counts must be >= 0');
    const r = this.record(t);
    r.down += Math.round(down);
    r.up += Math.round(up);
  }

  /** A task that ended on this node, with the pages it fetched. */
  addTask(pages: number, t: number = this.now()): void {
    const r = this.record(t);
    r.tasks++;
    r.pages += Math.max(0, Math.round(pages));
  }

  /** Called every few seconds while the node is up: counts online (and, when active, crawling) time. */
  tick(active: boolean, t: number = this.now()): void {
    const last = this.lastTick;
    this.lastTick = t;
    if (last === null) return;
    const gap = t - last;
    if (gap <= 0 || gap > this.maxTickGapMs) return;
    const r = this.record(t);
    r.onlineMs += gap;
    if (active) r.activeMs += gap;
  }

  /** Totals of the current daily and monthly periods. */
  usage(t: number = this.now()): { day: string; month: string; today: DayRecord; thisMonth: DayRecord } {
    const day = this.dayKey(t);
    const month = this.monthKey(day);
    const thisMonth = empty();
    for (const [k, r] of this.days) {
      if (this.monthKey(k) !== month) continue;
      for (const f of Object.keys(thisMonth) as (keyof DayRecord)[]) thisMonth[f] += r[f];
    }
    return { day, month, today: { ...(this.days.get(day) ?? empty()) }, thisMonth };
  }

  /** Bytes left in the current periods (null = no cap); `bytes` is the smaller, Infinity without caps. */
  remaining(t: number = this.now()): { day: number | null; month: number | null; bytes: number } {
    const { today, thisMonth } = this.usage(t);
    const p = this.periods;
    const day = p.dailyCapBytes === null ? null : p.dailyCapBytes - today.down - today.up;
    const month = p.monthlyCapBytes === null ? null : p.monthlyCapBytes - thisMonth.down - thisMonth.up;
    return { day, month, bytes: Math.min(day ?? Infinity, month ?? Infinity) };
  }

  /**
   * Room for one fetch of at most `maxBytes` (a page's size limit plus its
   * headers). Granted only while the bytes used plus the room already handed
   * out are below the cap; null = at the cap, stop fetching. The holder
   * settles it with the bytes really moved.
   */
  reserve(maxBytes: number, t: number = this.now()): Reservation | null {
    if (!(maxBytes > 0)) throw new RangeError('a reservation is for a positive number of bytes');
    if (this.remaining(t).bytes - this.reserved <= 0) return null;
    this.reserved += maxBytes;
    let open = true;
    return {
      settle: (down: number, up = 0) => {
        if (!open) return;
        open = false;
        this.reserved -= maxBytes;
        this.addTransfer(down, up);
      },
    };
  }

  /** Room handed out and not yet settled. */
  get reservedBytes(): number {
    return this.reserved;
  }

  /** The last `n` daily periods, newest first (days without activity included as zeros). */
  history(n: number, t: number = this.now()): ({ day: string } & DayRecord)[] {
    const today = this.dayKey(t);
    const out: ({ day: string } & DayRecord)[] = [];
    for (let i = 0; i < n; i++) {
      const day = addDays(today, -i);
      out.push({ day, ...(this.days.get(day) ?? empty()) });
    }
    return out;
  }

  /** Writes the counts if they changed. */
  flush(): void {
    if (!this.dirty) return;
    const days: Record<string, DayRecord> = {};
    for (const k of [...this.days.keys()].sort()) days[k] = this.days.get(k) as DayRecord;
    writeFileAtomic(this.opts.path, JSON.stringify({ version: 1, days }) + '\n');
    this.dirty = false;
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.flush();
  }
}
