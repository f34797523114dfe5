// The owner's preferences: when the volunteer may crawl, how much it may use,
// when it steps aside, and what it never fetches. They live in
// <data-dir>/volunteer.toml — TOML because owners edit it by hand and TOML
// has comments (the file explains itself), while JSON has none and punishes a
// trailing comma. Every key is validated; an unknown key or a bad value is an
// error that names the key. Flags override the file. `setPref` rewrites the
// file in the standard commented layout (an owner's own comments are not
// kept); a running node reloads it without a restart (see prefs-watch.ts).
//
// The parts live beside this file: prefs-types.ts (Prefs, PrefsError),
// prefs-layout.ts (the file's sections, keys, defaults, comments; rendering),
// prefs-values.ts (sizes, windows, host names, ranges), prefs-schema.ts
// (validation and defaults). This file reads, sets and describes them, and is
// the one import path.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseToml, TomlError } from 'smol-toml';
import { writeFileAtomic } from './atomic-file.js';
import { WEEKDAYS, formatMinutes } from './local-time.js';
import { knownKeys, renderPrefsFile } from './prefs-layout.js';
import { prefsFromRaw, suggest } from './prefs-schema.js';
import { PrefsError, type BlockRules, type Prefs, type RawPrefs, type TimeWindow } from './prefs-types.js';
import { formatWindow } from './prefs-values.js';

export * from './prefs-types.js';
export { knownKeys, PREFS_LAYOUT, renderPrefsFile } from './prefs-layout.js';
export { prefsFromRaw } from './prefs-schema.js';
export { formatWindow, normaliseHostName, normaliseRange, parseByteSize, parseWindow } from './prefs-values.js';

export const PREFS_FILE = 'volunteer.toml';

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
