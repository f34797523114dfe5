// The preferences file's schema: every key validated with an error that
// names it (and its entry in a list), an unknown key answered with "did you
// mean", the defaults applied, and the raw table turned into Prefs. Apart
// because validation is the untrusted-input boundary of the owner's file.
import { z } from 'zod';
import { isTimeZone, WEEKDAYS } from './local-time.js';
import { knownKeys } from './prefs-layout.js';
import { PrefsError, type Prefs, type TimeWindow } from './prefs-types.js';
import { normaliseHostName, normaliseRange, parseByteSize, parseClock, parseWindow } from './prefs-values.js';

const err = (message: string) => ({ error: message });
function intIn(min: number, max: number) {
  const m = `must be a whole number from ${min} to ${max}`;
  return z.number(err(m)).int(err(m)).min(min, err(m)).max(max, err(m));
}
/** A string or number run through a parser that throws a message. */
function parsed<T>(parser: (v: string) => T, what: string) {
  return z.string(err(`must be ${what}`)).transform((v, ctx) => {
    try {
      return parser(v);
    } catch (e) {
      ctx.addIssue({ code: 'custom', message: (e as Error).message });
      return z.NEVER;
    }
  });
}
const byteSize = (what: string) =>
  z.union([z.string(), z.number()], err(`must be ${what} like "2G", or "none"`)).transform((v, ctx) => {
    try {
      return parseByteSize(v);
    } catch (e) {
      ctx.addIssue({ code: 'custom', message: (e as Error).message });
      return z.NEVER;
    }
  });
const windows = z.array(parsed(parseWindow, 'a window "HH:MM-HH:MM"'), err('must be a list of windows, e.g. ["18:00-23:30"]')).max(48, err('at most 48 windows a day'));
const stringList = <T>(parser: (v: string) => T, what: string, max: number) =>
  z.array(parsed(parser, what), err(`must be a list of ${what}s, e.g. ["…"]`)).max(max, err(`at most ${max} entries`));

const scheduleShape: Record<string, z.ZodOptional<typeof windows>> = { every_day: windows.optional() };
for (const d of WEEKDAYS) scheduleShape[d] = windows.optional();

const rawSchema = z.strictObject({
  threads: intIn(1, 256).optional(),
  queue: intIn(0, 10_000).optional(),
  max_bandwidth: byteSize('a rate in bytes per second').optional(),
  time_zone: z
    .string(err('must be a time zone name like "Europe/Berlin", or ""'))
    .refine((v) => v === '' || isTimeZone(v), err('is not a time zone this computer knows (e.g. "Europe/Berlin", "America/New_York", "UTC")'))
    .optional(),
  schedule: z.strictObject(scheduleShape, err('must be a table [schedule]')).optional(),
  transfer: z
    .strictObject(
      {
        daily_cap: byteSize('a size').optional(),
        monthly_cap: byteSize('a size').optional(),
        month_starts_on: intIn(1, 28).optional(),
        day_starts_at: parsed((v) => parseClock(v, false), 'a time "HH:MM"').optional(),
      },
      err('must be a table [transfer]'),
    )
    .optional(),
  pause_when: z
    .strictObject(
      {
        on_battery: z.boolean(err('must be true or false')).optional(),
        cpu_busy_above: intIn(0, 100).optional(),
        cpu_resume_below: intIn(0, 100).optional(),
        cpu_window_seconds: intIn(5, 3600).optional(),
        min_pause_minutes: intIn(0, 1440).optional(),
      },
      err('must be a table [pause_when]'),
    )
    .optional(),
  never_fetch: z
    .strictObject(
      {
        domains: stringList(normaliseHostName, 'host name', 10_000).optional(),
        domain_suffixes: stringList(normaliseHostName, 'domain', 10_000).optional(),
        address_ranges: stringList(normaliseRange, 'CIDR range', 10_000).optional(),
      },
      err('must be a table [never_fetch]'),
    )
    .optional(),
});

/** Edit distance, for "did you mean". */
function distance(a: string, b: string): number {
  const d = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = d[0] as number;
    d[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = d[j] as number;
      d[j] = Math.min((d[j] as number) + 1, (d[j - 1] as number) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return d[b.length] as number;
}

/** " (did you mean …?)" for a key near a known one, else "". */
export function suggest(key: string): string {
  let best = '';
  let bestD = Infinity;
  for (const k of knownKeys()) {
    const d = distance(key, k);
    if (d < bestD) {
      bestD = d;
      best = k;
    }
  }
  return bestD <= Math.max(2, Math.floor(key.length / 4)) ? ` (did you mean ${best}?)` : '';
}

function firstIssue(error: z.ZodError): PrefsError {
  const issue = error.issues[0];
  if (!issue) return new PrefsError('invalid preferences');
  const path = issue.path.map(String);
  if (issue.code === 'unrecognized_keys') {
    const key = [...path, issue.keys[0] ?? ''].join('.');
    return new PrefsError(`${key}: unknown key${suggest(key)}`, key);
  }
  // A list element's index is part of the path ("never_fetch.domains.2"); name the key and the entry.
  const idx = path.findIndex((p) => /^\d+$/.test(p));
  const key = (idx >= 0 ? path.slice(0, idx) : path).join('.') || '(file)';
  const entry = idx >= 0 ? ` (entry ${Number(path[idx]) + 1})` : '';
  return new PrefsError(`${key}${entry}: ${issue.message}`, key);
}

/** Validates a raw table and applies the defaults; throws PrefsError naming the key. */
export function prefsFromRaw(raw: unknown): Prefs {
  const r = rawSchema.safeParse(raw);
  if (!r.success) throw firstIssue(r.error);
  const v = r.data;
  const pw = v.pause_when ?? {};
  const cpuBusyAbove = pw.cpu_busy_above ?? 70;
  const cpuResumeBelow = pw.cpu_resume_below ?? Math.min(40, cpuBusyAbove);
  if (cpuBusyAbove > 0 && cpuResumeBelow > cpuBusyAbove) {
    throw new PrefsError(`pause_when.cpu_resume_below: ${cpuResumeBelow} is above cpu_busy_above (${cpuBusyAbove}); the resume threshold must be the lower one`, 'pause_when.cpu_resume_below');
  }
  let schedule: TimeWindow[][] | null = null;
  if (v.schedule) {
    const s = v.schedule as Record<string, TimeWindow[] | undefined>;
    const every = s.every_day ?? [{ start: 0, end: 1440 }];
    schedule = WEEKDAYS.map((d) => s[d] ?? every);
  }
  const nf = v.never_fetch ?? {};
  return {
    threads: v.threads ?? 5,
    queue: v.queue ?? 5,
    maxBandwidth: v.max_bandwidth ?? null,
    timeZone: v.time_zone ? v.time_zone : null,
    schedule,
    transfer: {
      dailyCapBytes: v.transfer?.daily_cap ?? null,
      monthlyCapBytes: v.transfer?.monthly_cap ?? null,
      monthStartsOn: v.transfer?.month_starts_on ?? 1,
      dayStartsAt: v.transfer?.day_starts_at ?? 0,
    },
    pauseWhen: {
      onBattery: pw.on_battery ?? true,
      cpuBusyAbove: cpuBusyAbove > 0 ? cpuBusyAbove : null,
      cpuResumeBelow,
      cpuWindowMs: (pw.cpu_window_seconds ?? 60) * 1000,
      minPauseMs: (pw.min_pause_minutes ?? 5) * 60_000,
    },
    neverFetch: {
      domains: [...new Set(nf.domains ?? [])],
      domainSuffixes: [...new Set(nf.domain_suffixes ?? [])],
      addressRanges: [...new Set(nf.address_ranges ?? [])],
    },
  };
}

