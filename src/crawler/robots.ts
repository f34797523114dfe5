// robots.txt as site owners write it (RFC 9309, read the way the major
// crawlers read it), fetched first on the task's connection.
//
// Groups: consecutive user-agent lines share the rules that follow; a group
// ends at the next user-agent line after a rule, never at another record (a
// Sitemap or unknown line between two user-agent lines does not split them,
// RFC 9309 §2.2.4; Google's parser since its "group closure" fix). A
// user-agent value is matched by its product token — the characters up to the
// first one that cannot be part of a token ([A-Za-z_-], §2.2.1) — without
// regard to case, so "volcrawl crawler" and "VolCrawl/2.0" both name us. All
// groups naming us are merged; without one, the "*" groups apply; without
// those, nothing does. Lines: a missing colon is accepted when the line is
// exactly a key and a value ("Disallow /"), a UTF-8 byte order mark or any
// prefix of one is skipped, rules outside a group are ignored. Matching: the
// longest pattern wins, an allow wins a tie (§2.2.2), "*" and a final "$" are
// special (§2.2.3), paths and patterns are compared percent-normalised.
//
// Fetch results (§2.3.1): 2xx → parsed (the first maxRobotsBytes; a file cut
// there loses its last, partial line). 4xx except 429 → no restrictions
// ("unavailable"). 5xx, 429, a network failure, or a body that cannot be
// decoded — a gzip stream cut at the size limit, a broken or unknown
// Content-Encoding, a body that inflates past the limit — is "unreachable":
// the whole site is disallowed for now and the task ends "robots-unavailable".
// A file we could not read in full is never read as "allow everything".
import type { Downloader } from './downloader.js';
import type { CrawlLimits } from './limits.js';

export interface RobotsRules {
  /** 'blocked': the owner's block list refused the host (the task ends 'refused'). */
  kind: 'parsed' | 'allow-all' | 'unavailable' | 'blocked';
  /** HTTP status or failure, for the report. */
  detail: string;
  isAllowed(url: string): boolean;
  /** Crawl-delay in ms for our token, uncapped; 0 when absent. */
  crawlDelayMs: number;
}

interface Rule {
  allow: boolean;
  /** Literal parts between "*" wildcards, percent-normalised. */
  parts: string[];
  /** Pattern ends with "$": the path must end where the pattern does. */
  anchored: boolean;
  /** The normalised pattern's length in octets: the rule's priority. */
  length: number;
}

interface Group {
  /** Lower-case product tokens, or "*". */
  agents: string[];
  rules: Rule[];
  crawlDelaySec: number | null;
  /** Rules already in the group, to drop duplicates. */
  seen: Set<string>;
}

export interface RobotsFile {
  groups: Group[];
  sitemaps: string[];
}

/** Google's per-line cap (2083 × 8 bytes): the rest of a longer line is ignored. */
const MAX_LINE = 2083 * 8;
const UNRESERVED = /[A-Za-z0-9\-._~]/;
const HEX = '0123456789ABCDEF';

/**
 * Percent-normalises a path or pattern given as octets (a latin1 string):
 * escapes upper-cased, escapes of unreserved characters decoded (§2.2.2),
 * octets outside printable ASCII escaped. `literal` lists characters escaped
 * because they are special in patterns ("*" and "$" in a URL path).
 */
function normalise(octets: string, literal: string): string {
  let out = '';
  for (let i = 0; i < octets.length; i++) {
    const c = octets.charCodeAt(i);
    const ch = octets[i] as string;
    if (ch === '%' && /^[0-9a-fA-F]{2}$/.test(octets.slice(i + 1, i + 3))) {
      const v = parseInt(octets.slice(i + 1, i + 3), 16);
      const dec = String.fromCharCode(v);
      out += UNRESERVED.test(dec) ? dec : `%${octets.slice(i + 1, i + 3).toUpperCase()}`;
      i += 2;
    } else if (c <= 0x20 || c >= 0x7f || literal.includes(ch)) out += `%${HEX[c >> 4]}${HEX[c & 15]}`;
    else out += ch;
  }
  return out;
}

function compileRule(allow: boolean, value: string): Rule | null {
  if (value === '') return null; // "Disallow:" with no path: no rule
  const anchored = value.endsWith('$');
  const body = anchored ? value.slice(0, -1) : value;
  // A "$" before the end is a literal character (as in the URL, where it is escaped too).
  const parts = body.split('*').map((p) => normalise(p, '$'));
  return { allow, parts, anchored, length: parts.join('*').length + (anchored ? 1 : 0) };
}

function matches(r: Rule, path: string): boolean {
  const parts = r.parts;
  const first = parts[0] as string;
  if (!path.startsWith(first)) return false;
  if (parts.length === 1) return !r.anchored || path.length === first.length;
  let pos = first.length;
  // Leftmost match of each middle part leaves the most room for the rest, so it is enough.
  for (let i = 1; i < parts.length - 1; i++) {
    const seg = parts[i] as string;
    if (seg === '') continue;
    const at = path.indexOf(seg, pos);
    if (at < 0) return false;
    pos = at + seg.length;
  }
  const last = parts[parts.length - 1] as string;
  if (r.anchored) return path.length - last.length >= pos && path.endsWith(last);
  return last === '' || path.indexOf(last, pos) >= 0;
}

type Key = 'user-agent' | 'allow' | 'disallow' | 'sitemap' | 'crawl-delay' | 'other';

/** A line's key as the major crawlers read it: case-insensitive, by prefix, with the common misspellings. */
function keyOf(raw: string): Key {
  const k = raw.toLowerCase();
  if (k.startsWith('user-agent') || k.startsWith('useragent') || k.startsWith('user agent')) return 'user-agent';
  if (k.startsWith('allow')) return 'allow';
  if (['disallow', 'dissallow', 'dissalow', 'disalow', 'diasllow', 'disallaw'].some((p) => k.startsWith(p))) return 'disallow';
  if (k.startsWith('sitemap') || k.startsWith('site-map')) return 'sitemap';
  if (k === 'crawl-delay' || k === 'crawldelay') return 'crawl-delay';
  return 'other';
}

/** Key and value of a line (comment removed); a missing colon is accepted between exactly two words. */
function splitLine(line: string): [string, string] | null {
  const hash = line.indexOf('#');
  const s = (hash >= 0 ? line.slice(0, hash) : line).trim();
  if (s === '') return null;
  const colon = s.indexOf(':');
  if (colon >= 0) {
    const key = s.slice(0, colon).trim();
    return key === '' ? null : [key, s.slice(colon + 1).trim()];
  }
  const words = s.split(/[ \t]+/);
  return words.length === 2 ? [words[0] as string, words[1] as string] : null;
}

/** The product token of a user-agent value: "*" or the leading [A-Za-z_-] run, lower-cased. */
export function productToken(value: string): string {
  if (value === '*' || /^\*\s/.test(value)) return '*';
  return (/^[A-Za-z_-]*/.exec(value)?.[0] ?? '').toLowerCase();
}

/** Parses a robots.txt body (octets, or text that is encoded as UTF-8 first). */
export function parseRobotsTxt(body: Uint8Array | string): RobotsFile {
  let buf = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  // A UTF-8 byte order mark, or the first one or two bytes of one, at the very start.
  let skip = 0;
  while (skip < 3 && buf[skip] === [0xef, 0xbb, 0xbf][skip]) skip++;
  buf = buf.subarray(skip);
  const text = buf.toString('latin1'); // octets one-to-one: patterns are compared as octets
  const groups: Group[] = [];
  const sitemaps: string[] = [];
  let current: Group | null = null;
  let sawRule = false;
  for (const fullLine of text.split(/\r\n|\r|\n/)) {
    const kv = splitLine(fullLine.length > MAX_LINE ? fullLine.slice(0, MAX_LINE) : fullLine);
    if (!kv) continue;
    const [rawKey, value] = kv;
    const key = keyOf(rawKey);
    if (key === 'user-agent') {
      if (current === null || sawRule) {
        current = { agents: [], rules: [], crawlDelaySec: null, seen: new Set() };
        groups.push(current);
        sawRule = false;
      }
      const token = productToken(value);
      if (token !== '') current.agents.push(token);
    } else if (key === 'allow' || key === 'disallow') {
      if (current === null) continue; // outside any group: ignored (§2.2.2)
      sawRule = true;
      const rule = compileRule(key === 'allow', value);
      // Duplicate rules in a group may be dropped (§2.2.2): a file of one rule repeated costs one check.
      const ruleKey = rule ? `${rule.allow ? 'A' : 'D'}${rule.parts.join('*')}${rule.anchored ? '$' : ''}` : '';
      if (rule && !current.seen.has(ruleKey)) {
        current.seen.add(ruleKey);
        current.rules.push(rule);
      }
    } else if (key === 'crawl-delay') {
      const n = Number(value);
      if (current !== null && current.crawlDelaySec === null && value !== '' && Number.isFinite(n) && n >= 0) current.crawlDelaySec = n;
    } else if (key === 'sitemap') {
      if (value !== '' && sitemaps.length < 1000) sitemaps.push(Buffer.from(value, 'latin1').toString('utf8'));
    }
    // Other records neither start nor end a group.
  }
  return { groups, sitemaps };
}

/** The rules that apply to `token`: the merged groups naming it, else the merged "*" groups, else none. */
export function groupFor(file: RobotsFile, token: string): { matched: 'specific' | 'global' | 'none'; rules: Rule[]; crawlDelaySec: number | null } {
  const t = token.toLowerCase();
  for (const [matched, name] of [
    ['specific', t],
    ['global', '*'],
  ] as const) {
    const gs = file.groups.filter((g) => g.agents.includes(name));
    if (gs.length > 0) return { matched, rules: gs.flatMap((g) => g.rules), crawlDelaySec: gs.find((g) => g.crawlDelaySec !== null)?.crawlDelaySec ?? null };
  }
  return { matched: 'none', rules: [], crawlDelaySec: null };
}

/** The path-and-query of a URL as rules are matched against it. */
export function matchPath(url: URL): string {
  return normalise(url.pathname + url.search, '*$');
}

/** Longest matching pattern decides; an allow wins a tie; no match → allowed. */
export function pathAllowed(rules: Rule[], path: string): boolean {
  if (path === '/robots.txt') return true; // implicitly allowed (§2.2.2)
  let best: Rule | null = null;
  for (const r of rules) {
    if (best && (r.length < best.length || (r.length === best.length && !r.allow))) continue;
    if (matches(r, path)) best = r;
  }
  return best === null || best.allow;
}

/** Rules for `token` from a robots.txt body. */
export function robotsRules(body: Uint8Array | string, token: string, detail = '200'): RobotsRules {
  const g = groupFor(parseRobotsTxt(body), token);
  return {
    kind: 'parsed',
    detail,
    isAllowed: (url) => {
      let u: URL;
      try {
        u = new URL(url);
      } catch {
        return false;
      }
      return pathAllowed(g.rules, matchPath(u));
    },
    crawlDelayMs: g.crawlDelaySec !== null && g.crawlDelaySec > 0 ? g.crawlDelaySec * 1000 : 0,
  };
}

const allowAll = (detail: string): RobotsRules => ({ kind: 'allow-all', detail, isAllowed: () => true, crawlDelayMs: 0 });
const disallowAll = (kind: 'unavailable' | 'blocked', detail: string): RobotsRules => ({ kind, detail, isAllowed: () => false, crawlDelayMs: 0 });

/** The body up to the last line break, when it was cut: a partial last line could turn "/private/x" into "/pri". */
function completeLines(body: Buffer): Buffer {
  const cut = Math.max(body.lastIndexOf(0x0a), body.lastIndexOf(0x0d));
  return cut < 0 ? Buffer.alloc(0) : body.subarray(0, cut + 1);
}

export async function fetchRobots(dl: Downloader, origin: string, token: string, limits: CrawlLimits): Promise<RobotsRules> {
  let url = new URL('/robots.txt', origin);
  for (let hop = 0; hop <= limits.maxRedirects; hop++) {
    const r = await dl.get(url, { truncate: true, maxBytes: limits.maxRobotsBytes });
    if (!r.ok) return r.outcome === 'owner-blocked' ? disallowAll('blocked', r.detail) : disallowAll('unavailable', r.outcome);
    const s = r.status;
    if (s >= 300 && s < 400 && s !== 304) {
      const loc = r.headers['location'];
      let next: URL | null;
      try {
        next = loc ? new URL(loc, url) : null;
      } catch {
        next = null;
      }
      // Our single connection serves one origin; a cross-origin robots.txt redirect is treated as "no robots.txt"
      // (RFC 9309 §2.3.1.2 asks to follow it; the pages of such a site redirect off-origin too and are not fetched here).
      if (!next || next.origin !== url.origin) return allowAll(`redirect ${s} off-origin`);
      url = next;
      continue;
    }
    if (s >= 200 && s < 300) {
      const enc = r.headers['content-encoding'] ?? 'identity';
      if (r.skipped === 'bad-encoding') {
        return disallowAll('unavailable', r.truncated ? `robots.txt cut at the ${limits.maxRobotsBytes}-byte limit inside its ${enc} encoding: unreadable` : `robots.txt has an undecodable ${enc} encoding`);
      }
      if (r.skipped) return disallowAll('unavailable', `robots.txt ${r.skipped}`);
      let body = r.body ?? Buffer.alloc(0);
      let cut = r.truncated;
      if (body.length > limits.maxRobotsBytes) {
        body = body.subarray(0, limits.maxRobotsBytes);
        cut = true;
      }
      if (cut) body = completeLines(body);
      return robotsRules(body, token, cut ? `${s} (first ${body.length} bytes, cut at the ${limits.maxRobotsBytes}-byte limit)` : String(s));
    }
    if (s === 429 || s >= 500) return disallowAll('unavailable', String(s));
    return allowAll(String(s)); // 4xx: "unavailable" in RFC terms, no restrictions (§2.3.1.3)
  }
  return allowAll('too many redirects');
}
