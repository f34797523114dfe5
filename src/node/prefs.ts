// The owner's preferences: when the volunteer may crawl, how much it may use,
// when it steps aside, and what it never fetches. They live in
// <data-dir>/volunteer.toml — TOML because owners edit it by hand and TOML
// has comments (the file explains itself), while JSON has none and punishes a
// trailing comma. Every key is validated; an unknown key or a bad value is an
// error that names the key. Flags override the file. `setPref` rewrites the
// file in the standard commented layout (an owner's own comments are not
// kept); a running node reloads it without a restart (see prefs-watch.ts).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { domainToASCII } from 'node:url';
import { isIP } from 'node:net';
import { parse as parseToml, TomlError } from 'smol-toml';
import { z } from 'zod';
import { writeFileAtomic } from './atomic-file.js';
import { isTimeZone, WEEKDAYS, formatMinutes } from './local-time.js';

export const PREFS_FILE = 'volunteer.toml';

/** A crawl window in local minutes since midnight. end ≤ start: the window runs past midnight into the next day. */
export interface TimeWindow {
  start: number;
  end: number;
}

/** Owner's block list as written (normalised: lower-case ASCII names, canonical CIDR). */
export interface BlockRules {
  /** Exact host names. */
  domains: string[];
  /** A name and every name under it ("example.org" also blocks www.example.org). */
  domainSuffixes: string[];
  /** CIDR ranges or single addresses, IPv4 or IPv6. */
  addressRanges: string[];
}

export interface Prefs {
  threads: number;
  queue: number;
  /** Download bandwidth cap, bytes/s; null = none. */
  maxBandwidth: number | null;
  /** IANA time zone for windows and periods; null = the computer's. */
  timeZone: string | null;
  /** Crawl windows per weekday (0 = Monday); null = any time. */
  schedule: TimeWindow[][] | null;
  transfer: {
    dailyCapBytes: number | null;
    monthlyCapBytes: number | null;
    /** Day of the month (1..28) on which the monthly period starts. */
    monthStartsOn: number;
    /** Local minute of the day at which a day's period starts (and the month's, on monthStartsOn). */
    dayStartsAt: number;
  };
  pauseWhen: {
    onBattery: boolean;
    /** Pause when other programs use more than this percent of all cores; null = never. */
    cpuBusyAbove: number | null;
    /** ... and resume only once they use less than this. */
    cpuResumeBelow: number;
    cpuWindowMs: number;
    /** A pause for CPU or battery lasts at least this long. */
    minPauseMs: number;
  };
  neverFetch: BlockRules;
}

/** The raw TOML table as read from the file (validated shape, owner's spelling). */
export type RawPrefs = Record<string, unknown>;

export class PrefsError extends Error {
  override name = 'PrefsError';
  constructor(
    message: string,
    /** Dotted key the error is about, when there is one. */
    readonly key?: string,
  ) {
    super(message);
  }
}

// ---------------------------------------------------------------------------
// The file's layout: sections, keys, defaults and the comments the file carries.

type TomlScalar = string | number | boolean | string[];
interface KeyDoc {
  key: string;
  doc: string;
  default: TomlScalar;
}
interface SectionDoc {
  /** null: top-level keys. */
  name: string | null;
  doc: string;
  keys: KeyDoc[];
  /** Keys shown commented out as examples when absent. */
  examples?: Record<string, TomlScalar>;
}

export const PREFS_LAYOUT: readonly SectionDoc[] = [
  {
    name: null,
    doc: 'volcrawl volunteer preferences. Saved changes take effect within seconds, no restart needed;\n`volunteer-crawler join` flags override them. `volunteer-crawler prefs` shows what is in force.',
    keys: [
      { key: 'threads', doc: 'Crawl tasks run at once (1..256).', default: 5 },
      { key: 'queue', doc: 'Tasks waiting beyond the running ones (0..10000).', default: 5 },
      { key: 'max_bandwidth', doc: 'Download rate cap, bytes per second: "500k", "2M", or "none".', default: 'none' },
      { key: 'time_zone', doc: 'Time zone of the windows and transfer periods, e.g. "Europe/Berlin"; "" = this computer\'s.', default: '' },
    ],
  },
  {
    name: 'schedule',
    doc: 'When the node may crawl, in local time: lists of "HH:MM-HH:MM" windows per weekday.\nA day without its own line uses every_day; [] = not at all that day. A window whose end is\nbefore its start runs past midnight ("22:00-06:00" on monday = Monday night until Tuesday 06:00).',
    keys: [{ key: 'every_day', doc: 'Days without their own line.', default: ['00:00-24:00'] }],
    examples: { saturday: ['00:00-24:00'], monday: ['18:00-23:30'] },
  },
  {
    name: 'transfer',
    doc: 'Transfer caps, bytes down + up: "2G", "500M", "50GiB", or "none". At a cap the node ends\nits tasks cleanly, hands them on and pauses until the next period.',
    keys: [
      { key: 'daily_cap', doc: 'Per day.', default: 'none' },
      { key: 'monthly_cap', doc: 'Per month.', default: 'none' },
      { key: 'month_starts_on', doc: 'Day of the month (1..28) the monthly period starts, e.g. your ISP\'s billing day.', default: 1 },
      { key: 'day_starts_at', doc: 'Local time each day\'s period (and the month\'s) starts.', default: '00:00' },
    ],
  },
  {
    name: 'pause_when',
    doc: 'Stepping aside while you use the computer.',
    keys: [
      { key: 'on_battery', doc: 'Pause while the computer runs on battery.', default: true },
      { key: 'cpu_busy_above', doc: 'Pause while other programs use more than this percent of all CPU cores (0 = never).', default: 70 },
      { key: 'cpu_resume_below', doc: '...and resume only once they use less than this percent.', default: 40 },
      { key: 'cpu_window_seconds', doc: 'CPU use is averaged over this many seconds (5..3600).', default: 60 },
      { key: 'min_pause_minutes', doc: 'A pause for CPU or battery lasts at least this long (0..1440).', default: 5 },
    ],
  },
  {
    name: 'never_fetch',
    doc: 'Sites this computer never fetches, checked after DNS resolution (redirects included).\nA task for one goes back to the manager, which gives it to another volunteer.',
    keys: [
      { key: 'domains', doc: 'Exact host names, e.g. ["intranet.example.com"].', default: [] },
      { key: 'domain_suffixes', doc: 'A domain and everything under it, e.g. ["bank.example"] also blocks www.bank.example.', default: [] },
      { key: 'address_ranges', doc: 'Addresses or CIDR ranges, IPv4 or IPv6, e.g. ["203.0.113.0/24", "2001:db8::/32"].', default: [] },
    ],
  },
];

/** Every settable key, dotted ("transfer.daily_cap", "threads", "schedule.monday"). */
export function knownKeys(): string[] {
  const out: string[] = [];
  for (const s of PREFS_LAYOUT) {
    for (const k of s.keys) out.push(s.name ? `${s.name}.${k.key}` : k.key);
    if (s.name === 'schedule') for (const d of WEEKDAYS) out.push(`schedule.${d}`);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Value parsers (each returns the value or throws a message).

/** "500k", "2M", "1.5G", "50GiB", 1000 → bytes; "none"/"unlimited"/"" → null. Decimal units are powers of 1000, *iB of 1024. */
export function parseByteSize(v: string | number): number | null {
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v) || v <= 0) throw new Error('must be a positive whole number of bytes, a size like "2G", or "none"');
    return v;
  }
  const s = v.trim();
  if (s === '' || /^(none|unlimited|off)$/i.test(s)) return null;
  const m = /^(\d+(?:\.\d+)?)\s*([kmgt]?)(i?)(b?)$/i.exec(s);
  if (!m || (m[3] && !m[2])) throw new Error(`${JSON.stringify(v)} is not a size: use e.g. "500k", "2M", "50GiB" or "none"`);
  const exp = ' kmgt'.indexOf((m[2] ?? '').toLowerCase() || ' ');
  const n = Math.floor(Number(m[1]) * (m[3] ? 1024 : 1000) ** exp);
  if (!(n > 0) || !Number.isSafeInteger(n)) throw new Error(`${JSON.stringify(v)} must be positive and below 9 PB; use "none" for no limit`);
  return n;
}

/** "HH:MM" → minutes; "24:00" only where allowEnd. */
function parseClock(s: string, allowEnd: boolean): number {
  const m = /^(\d{1,2}):(\d{2})$/.exec(s.trim());
  const h = Number(m?.[1]);
  const min = Number(m?.[2]);
  if (!m || min > 59 || h > 24 || (h === 24 && (min !== 0 || !allowEnd))) throw new Error(`${JSON.stringify(s)} is not a time: use "HH:MM" (00:00..${allowEnd ? '24:00' : '23:59'})`);
  return h * 60 + min;
}

/** "HH:MM-HH:MM" → a window. */
export function parseWindow(s: string): TimeWindow {
  const parts = s.split('-');
  if (parts.length !== 2) throw new Error(`${JSON.stringify(s)} is not a window: use "HH:MM-HH:MM", e.g. "18:00-23:30"`);
  const start = parseClock(parts[0] as string, false);
  const end = parseClock(parts[1] as string, true);
  if (start === end) throw new Error(`${JSON.stringify(s)} is empty: for the whole day write "00:00-24:00"`);
  return { start, end: end === 1440 && start === 0 ? 1440 : end % 1440 };
}

export function formatWindow(w: TimeWindow): string {
  return `${formatMinutes(w.start)}-${formatMinutes(w.end === 0 ? 1440 : w.end)}`;
}

/** A host name as the crawler compares it: lower-case ASCII (IDNA), no trailing dot. Throws on a bad name. */
export function normaliseHostName(name: string): string {
  let h = name.trim().toLowerCase();
  if (h.endsWith('.')) h = h.slice(0, -1);
  if (h.startsWith('*.')) h = h.slice(2);
  else if (h.startsWith('.')) h = h.slice(1);
  const ascii = domainToASCII(h);
  if (ascii === '' || ascii.length > 253 || isIP(ascii) !== 0 || !/^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/.test(ascii) || ascii.split('.').some((l) => l.length > 63)) {
    throw new Error(`${JSON.stringify(name)} is not a host name${isIP(h) ? ' (put addresses in address_ranges)' : ''}`);
  }
  return ascii;
}

/** "203.0.113.0/24", "2001:db8::/32" or a single address → canonical "addr/prefix". Throws on a bad range. */
export function normaliseRange(range: string): string {
  const s = range.trim();
  const slash = s.indexOf('/');
  const addr = slash < 0 ? s : s.slice(0, slash);
  const family = isIP(addr);
  if (family === 0) throw new Error(`${JSON.stringify(range)} is not an IP address or CIDR range`);
  const max = family === 4 ? 32 : 128;
  const prefixText = slash < 0 ? String(max) : s.slice(slash + 1);
  const prefix = Number(prefixText);
  if (!/^\d{1,3}$/.test(prefixText) || prefix > max) throw new Error(`${JSON.stringify(range)}: the prefix length must be 0..${max}`);
  return `${addr.toLowerCase()}/${prefix}`;
}

// ---------------------------------------------------------------------------
// The schema.

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

function suggest(key: string): string {
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

/** Parses the file's text: TOML, then the schema. Throws PrefsError. */
export function parsePrefsText(text: string): { raw: RawPrefs; prefs: Prefs } {
  let raw: RawPrefs;
  try {
    raw = parseToml(text) as RawPrefs;
  } catch (e) {
    const where = e instanceof TomlError ? ` at line ${e.line}, column ${e.column}` : '';
    const msg = (e as Error).message.split('\n')[0] ?? 'syntax error';
    throw new PrefsError(`not valid TOML${where}: ${msg.replace(/^Invalid TOML document: /, '')}`);
  }
  return { raw, prefs: prefsFromRaw(raw) };
}

/** The defaults: what the file written on first run says. */
export function defaultPrefs(): Prefs {
  return parsePrefsText(renderPrefsFile()).prefs;
}

// ---------------------------------------------------------------------------
// Flags over the file.

export interface PrefsOverrides {
  threads?: number;
  queue?: number;
  maxBandwidth?: number | null;
  timeZone?: string | null;
  schedule?: TimeWindow[][] | null;
  transfer?: Partial<Prefs['transfer']>;
  pauseWhen?: Partial<Prefs['pauseWhen']>;
  neverFetch?: Partial<BlockRules>;
}

/** The preferences in force: the file's, with every flag the owner gave on top. */
export function applyOverrides(p: Prefs, o: PrefsOverrides): Prefs {
  return {
    ...p,
    ...(o.threads !== undefined ? { threads: o.threads } : {}),
    ...(o.queue !== undefined ? { queue: o.queue } : {}),
    ...(o.maxBandwidth !== undefined ? { maxBandwidth: o.maxBandwidth } : {}),
    ...(o.timeZone !== undefined ? { timeZone: o.timeZone } : {}),
    ...(o.schedule !== undefined ? { schedule: o.schedule } : {}),
    transfer: { ...p.transfer, ...o.transfer },
    pauseWhen: { ...p.pauseWhen, ...o.pauseWhen },
    neverFetch: { ...p.neverFetch, ...o.neverFetch },
  };
}

// ---------------------------------------------------------------------------
// Writing the file.

function tomlValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v); // a JSON string is a valid TOML basic string
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[${v.map(tomlValue).join(', ')}]`;
  throw new PrefsError(`cannot write ${typeof v} values`);
}

const comment = (text: string): string[] => text.split('\n').map((l) => `# ${l}`);

/** The file in the standard layout: every key with its comment; keys not in `raw` get their default. */
export function renderPrefsFile(raw: RawPrefs = {}): string {
  const out: string[] = [];
  for (const s of PREFS_LAYOUT) {
    const table = (s.name ? raw[s.name] : raw) as Record<string, unknown> | undefined;
    if (s.name) out.push('', ...comment(s.doc), `[${s.name}]`);
    else out.push(...comment(s.doc), '');
    for (const k of s.keys) {
      out.push(...comment(k.doc), `${k.key} = ${tomlValue(table?.[k.key] ?? k.default)}`);
    }
    if (s.name === 'schedule') {
      let any = false;
      for (const d of WEEKDAYS) {
        if (table?.[d] !== undefined) {
          out.push(`${d} = ${tomlValue(table[d])}`);
          any = true;
        }
      }
      if (!any && s.examples) for (const [k, v] of Object.entries(s.examples)) out.push(`# ${k} = ${tomlValue(v)}`);
    }
  }
  return out.join('\n') + '\n';
}

export function prefsPath(dataDir: string): string {
  return join(dataDir, PREFS_FILE);
}

/** Reads and validates the file; a missing file is created with the defaults. Throws PrefsError naming the file and key. */
export function loadPrefsFile(path: string): { raw: RawPrefs; prefs: Prefs; text: string; created: boolean } {
  let text: string;
  let created = false;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw new PrefsError(`${path}: cannot read: ${(e as Error).message}`);
    text = renderPrefsFile();
    writeFileAtomic(path, text);
    created = true;
  }
  try {
    return { ...parsePrefsText(text), text, created };
  } catch (e) {
    const pe = e as PrefsError;
    throw new PrefsError(`${path}: ${pe.message}`, pe.key);
  }
}

/**
 * Parses `value` as a TOML value ("2G" needs no quotes: anything that is not
 * TOML is taken as a string), sets `key` in `raw` and validates the result.
 * Returns the new raw table and preferences; throws PrefsError.
 */
export function setPrefValue(raw: RawPrefs, key: string, value: string): { raw: RawPrefs; prefs: Prefs } {
  if (!knownKeys().includes(key)) throw new PrefsError(`${key}: unknown key${suggest(key)}`, key);
  let v: unknown;
  try {
    v = (parseToml(`v = ${value}`) as { v: unknown }).v;
  } catch {
    v = value;
  }
  const next: RawPrefs = structuredClone(raw);
  const [section, name] = key.includes('.') ? (key.split('.', 2) as [string, string]) : [null, key];
  if (section) {
    const t = next[section];
    const table = t && typeof t === 'object' && !Array.isArray(t) ? (t as Record<string, unknown>) : {};
    table[name] = v;
    next[section] = table;
  } else next[name] = v;
  return { raw: next, prefs: prefsFromRaw(next) };
}

/** `setPrefValue` on the file: validates, then rewrites it atomically in the standard layout. */
export function setPrefInFile(path: string, key: string, value: string): Prefs {
  const cur = loadPrefsFile(path);
  const { raw, prefs } = setPrefValue(cur.raw, key, value);
  writeFileAtomic(path, renderPrefsFile(raw));
  return prefs;
}

/** A short human summary of the preferences in force (for `status` and `prefs`). */
export function describePrefs(p: Prefs): string[] {
  const size = (n: number | null) => (n === null ? 'none' : n >= 1e9 ? `${(n / 1e9).toFixed(n % 1e9 ? 1 : 0)} GB` : n >= 1e6 ? `${(n / 1e6).toFixed(n % 1e6 ? 1 : 0)} MB` : `${n} B`);
  const lines = [
    `threads ${p.threads}, queue ${p.queue}, bandwidth ${p.maxBandwidth === null ? 'no cap' : `${size(p.maxBandwidth)}/s`}`,
    `transfer caps: day ${size(p.transfer.dailyCapBytes)}, month ${size(p.transfer.monthlyCapBytes)} (month starts on day ${p.transfer.monthStartsOn} at ${formatMinutes(p.transfer.dayStartsAt)})`,
    `pause on battery: ${p.pauseWhen.onBattery ? 'yes' : 'no'}; when busy: ${p.pauseWhen.cpuBusyAbove === null ? 'no' : `other programs above ${p.pauseWhen.cpuBusyAbove}% CPU over ${p.pauseWhen.cpuWindowMs / 1000} s, resume below ${p.pauseWhen.cpuResumeBelow}%`}; min pause ${p.pauseWhen.minPauseMs / 60_000} min`,
  ];
  const always = p.schedule === null || p.schedule.every((d) => d.some((w) => w.start === 0 && w.end === 1440));
  if (always) lines.push('schedule: any time');
  else lines.push(`schedule: ${WEEKDAYS.map((d, i) => `${d.slice(0, 3)} ${(p.schedule?.[i] ?? []).map(formatWindow).join(',') || 'off'}`).join('; ')}`);
  const nf = p.neverFetch;
  lines.push(`never fetch: ${nf.domains.length} host(s), ${nf.domainSuffixes.length} domain(s), ${nf.addressRanges.length} address range(s)`);
  return lines;
}
