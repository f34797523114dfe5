// The value parsers of the preferences file: sizes ("2G", "50GiB"), clock
// times and crawl windows ("18:00-23:30"), host names (IDNA, lower case) and
// address ranges (canonical CIDR). Each returns the value or throws a message
// an owner can act on. Apart because flags and the file parse values alike.
import { domainToASCII } from 'node:url';
import { isIP } from 'node:net';
import { formatMinutes } from './local-time.js';
import type { TimeWindow } from './prefs-types.js';

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
export function parseClock(s: string, allowEnd: boolean): number {
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
