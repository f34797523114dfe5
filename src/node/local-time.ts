// Local wall-clock time of an instant, for the owner's crawl windows and the
// transfer periods: weekday, minute of the day and calendar date in a time
// zone (the computer's by default). Pure: the instant is an argument, so a
// fake clock drives every test, across midnight and DST changes alike.

export interface LocalTime {
  year: number;
  /** 1..12 */
  month: number;
  /** 1..31 */
  day: number;
  /** 0 = Monday .. 6 = Sunday. */
  weekday: number;
  /** Minutes since local midnight, 0..1439. */
  minutes: number;
}

export const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

const SHORT_DAYS: Record<string, number> = { Mon: 0, Tue: 1, Wed: 2, Thu: 3, Fri: 4, Sat: 5, Sun: 6 };
const formats = new Map<string, Intl.DateTimeFormat>();

function format(timeZone: string): Intl.DateTimeFormat {
  let f = formats.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      weekday: 'short',
      hour: 'numeric',
      minute: 'numeric',
    });
    formats.set(timeZone, f);
  }
  return f;
}

/** True if `timeZone` is an IANA zone this Node knows (e.g. "Europe/Berlin"). */
export function isTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return true;
  } catch {
    return false;
  }
}

/** The local time of `epochMs` in `timeZone` (undefined: the process's zone, i.e. the computer's or $TZ).
 * The computer's zone is read through Date's own local-time fields: the first
 * Intl.DateTimeFormat makes V8 load ICU's locale, calendar and pattern data
 * (≈ 8 MB of resident memory measured in a bare `node`, for the life of the
 * process), and a volunteer asks for the local time every few seconds while
 * idle (run policy, transfer ledger). Date and Intl read the same zone
 * (ICU's default: $TZ or the system's); only an owner who names a
 * `time_zone` pays for Intl. */
export function localTime(epochMs: number, timeZone?: string): LocalTime {
  if (timeZone === undefined) return computerLocalTime(epochMs);
  return zonedLocalTime(epochMs, timeZone);
}

function computerLocalTime(epochMs: number): LocalTime {
  const d = new Date(epochMs);
  return {
    year: d.getFullYear(),
    month: d.getMonth() + 1,
    day: d.getDate(),
    weekday: (d.getDay() + 6) % 7,
    minutes: d.getHours() * 60 + d.getMinutes(),
  };
}

function zonedLocalTime(epochMs: number, timeZone: string): LocalTime {
  const parts = format(timeZone).formatToParts(new Date(epochMs));
  const get = (type: Intl.DateTimeFormatPartTypes): string => parts.find((p) => p.type === type)?.value ?? '';
  return {
    year: Number(get('year')),
    month: Number(get('month')),
    day: Number(get('day')),
    weekday: SHORT_DAYS[get('weekday')] ?? 0,
    minutes: Number(get('hour')) * 60 + Number(get('minute')),
  };
}

/** "YYYY-MM-DD" of a calendar date. */
export function dateKey(year: number, month: number, day: number): string {
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

/** Parses "YYYY-MM-DD" (no validation beyond the shape; callers check with isDateKey). */
export function parseDateKey(key: string): { year: number; month: number; day: number } {
  const [y, m, d] = key.split('-').map(Number);
  return { year: y ?? 0, month: m ?? 1, day: d ?? 1 };
}

export function isDateKey(key: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(key)) return false;
  const { year, month, day } = parseDateKey(key);
  const t = new Date(Date.UTC(year, month - 1, day));
  return t.getUTCFullYear() === year && t.getUTCMonth() === month - 1 && t.getUTCDate() === day;
}

/** The date `n` days after `key` (n may be negative): calendar arithmetic, no time zone involved. */
export function addDays(key: string, n: number): string {
  const { year, month, day } = parseDateKey(key);
  const t = new Date(Date.UTC(year, month - 1, day + n));
  return dateKey(t.getUTCFullYear(), t.getUTCMonth() + 1, t.getUTCDate());
}

/** "HH:MM" for minutes since midnight (1440 → "24:00"). */
export function formatMinutes(m: number): string {
  return `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
}
