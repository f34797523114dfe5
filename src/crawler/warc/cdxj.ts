// CDXJ index lines in pywb's format, as its indexer (cdxj-indexer, on warcio)
// writes them: "<SURT urlkey> <14-digit timestamp> <JSON>", the JSON with
// url, mime, status, digest, length, offset and filename in that order
// (status, length and offset as strings), written as Python's json.dumps
// does (", " and ": " separators, non-ASCII escaped), and the lines sorted,
// so pywb can binary-search the file. The urlkey is the SURT form pywb looks
// URLs up by: a port of the Internet Archive's `surt` package with its
// default canonicaliser (Google's, then the IA's: unescape and re-escape,
// dot segments, lower case, "www." dropped, default port dropped, session ids
// dropped, query arguments sorted, host reversed).
import { timestamp14 } from './fields.js';

/** What a record's index line says, besides where the record is. */
export interface CdxEntry {
  url: string;
  /** Epoch ms (WARC-Date). */
  date: number;
  /** Media type without parameters ("warc/revisit" for a revisit); absent when unknown. */
  mime?: string;
  /** HTTP status, for response and revisit records. */
  status?: number;
  /** "sha1:<base32>" payload digest. */
  digest?: string;
}

/** The media type as the index records it: the Content-Type up to the first ';' or space. */
export function cdxMime(contentType: string | undefined): string | undefined {
  if (contentType === undefined) return undefined;
  const m = contentType.split(/[;\s]/, 1)[0]!.trim();
  return m === '' ? undefined : m;
}

/** A JSON string as Python's json.dumps (ensure_ascii) writes it. */
function pyString(s: string): string {
  const j = JSON.stringify(s);
  return /[\u007f-\uffff]/.test(j) ? j.replace(/[\u007f-\uffff]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0')) : j;
}

/** One index line (with its newline) for a record at `offset` of `length` bytes in `filename`. */
export function cdxjLine(e: CdxEntry, offset: number, length: number, filename: string): string {
  let json = `{"url": ${pyString(e.url)}`;
  if (e.mime !== undefined) json += `, "mime": ${pyString(e.mime)}`;
  if (e.status !== undefined) json += `, "status": "${e.status}"`;
  if (e.digest !== undefined) json += `, "digest": ${pyString(e.digest)}`;
  json += `, "length": "${length}", "offset": "${offset}", "filename": ${pyString(filename)}}`;
  return `${surt(e.url)} ${timestamp14(e.date)} ${json}\n`;
}

/** Sorts index lines as pywb expects (code-point order of the whole line) and drops exact duplicates. */
export function sortCdxj(lines: string[]): string[] {
  lines.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return lines.filter((l, i) => i === 0 || l !== lines[i - 1]);
}

// ---------------------------------------------------------------------------
// SURT. Works on "byte strings" (one char per byte, as Python's bytes do).

const ALWAYS_SAFE = /[A-Za-z0-9_.\-~!"$&'()*+,/:;<=>?@[\\\]^`{|}]/;
const NOT_SAFE = /[^A-Za-z0-9_.\-~!"$&'()*+,/:;<=>?@[\\\]^`{|}]/;

/** Python's quote_from_bytes with the surt package's safe set: every other byte as %XX. */
function escapeOnce(s: string): string {
  if (!NOT_SAFE.test(s)) return s;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i] as string;
    out += ALWAYS_SAFE.test(c) ? c : '%' + s.charCodeAt(i).toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

const HEX2 = /^[0-9A-Fa-f]{2}/;
/** Python's unquote_to_bytes: %XX → the byte; anything else stays. */
function unquote(s: string): string {
  if (s.indexOf('%') < 0) return s;
  const parts = s.split('%');
  let out = parts[0] as string;
  for (let i = 1; i < parts.length; i++) {
    const p = parts[i] as string;
    out += HEX2.test(p) ? String.fromCharCode(parseInt(p.slice(0, 2), 16)) + p.slice(2) : '%' + p;
  }
  return out;
}

function unescapeRepeatedly(s: string): string {
  for (;;) {
    const un = unquote(s);
    if (un === s) return s;
    s = un;
  }
}

/** ASCII-only lower case, as Python's bytes.lower(). */
function asciiLower(s: string): string {
  return !/[A-Z]/.test(s) ? s : s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

function normalizePath(path: string): string {
  if (path === '') return '/';
  const kept: string[] = [];
  const parts = path.split('/');
  for (let i = 1; i < parts.length; i++) {
    const p = parts[i] as string;
    if (p === '.') continue;
    if (p === '..') {
      if (kept.length > 0) kept.pop();
      else kept.push(p);
    } else kept.push(p);
  }
  let out = '/';
  for (let i = 0; i < kept.length - 1; i++) if ((kept[i] as string).length > 0) out += kept[i] + '/';
  if (kept.length > 0) out += kept[kept.length - 1];
  return out;
}

const DECIMAL_IP = /^([1-9][0-9]*)(\.[0-9]+)?(\.[0-9]+)?(\.[0-9]+)?$/;
const OCTAL_IP = /^(0[0-7]*)(\.[0-7]+)?(\.[0-7]+)?(\.[0-7]+)?$/;

/** An IPv4 address in dotted form, or null (the surt package resolves these forms with inet_aton's rules, as the URL standard does). */
function ipFormat(host: string): string | null {
  if (/^[0-9]+$/.test(host)) {
    const n = Number(BigInt(host) & 0xffffffffn);
    return `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
  }
  if (!DECIMAL_IP.test(host) && !OCTAL_IP.test(host)) return null;
  try {
    const h = new URL(`http://${host}/`).hostname;
    return /^\d+\.\d+\.\d+\.\d+$/.test(h) ? h : null;
  } catch {
    return null;
  }
}

const PATH_SESSION_IDS = [/^(.*\/)(\((?:[a-z]\([0-9a-z]{24}\))+\)\/)([^?]+\.aspx.*)$/i, /^(.*\/)(\([0-9a-z]{24}\)\/)([^?]+\.aspx.*)$/i];
const QUERY_SESSION_IDS = [
  /^(.*)(?:jsessionid=[0-9a-zA-Z]{32})(?:&(.*))?$/i,
  /^(.*)(?:phpsessid=[0-9a-zA-Z]{32})(?:&(.*))?$/i,
  /^(.*)(?:sid=[0-9a-zA-Z]{32})(?:&(.*))?$/i,
  /^(.*)(?:ASPSESSIONID[a-zA-Z]{8}=[a-zA-Z]{24})(?:&(.*))?$/i,
  /^(.*)(?:cfid=[^&]+&cftoken=[^&]+)(?:&(.*))?$/i,
];

function alphaReorderQuery(q: string): string {
  if (q.length <= 1) return q;
  const args = q.split('&').map((a) => {
    const eq = a.indexOf('=');
    return eq < 0 ? [a] : [a.slice(0, eq), a.slice(eq + 1)];
  });
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  args.sort((x, y) => cmp(x[0] as string, y[0] as string) || (x.length === y.length ? (x.length === 2 ? cmp(x[1] as string, y[1] as string) : 0) : x.length - y.length));
  return args.map((a) => a.join('=')).join('&');
}

const URI = /^(([a-zA-Z][a-zA-Z0-9+.-]*):)?((\/\/([^/?#]*))?([^?#]*)(\?([^#]*))?)?(#(.*))?$/;

/** The SURT urlkey of a URL, as `surt.surt(url)` (and so pywb) computes it. */
export function surt(url: string): string {
  try {
    return surtOf(url);
  } catch {
    return url; // as cdxj-indexer does when surt raises
  }
}

function surtOf(input: string): string {
  let url = Buffer.from(input, 'utf8').toString('latin1').replace(/^[ \t\n\r\v\f]+|[ \t\n\r\v\f]+$/g, '').replace(/[\n\r\t]/g, '');
  if (url === '') return '-';
  if (url.startsWith('filedesc')) return url;
  if (!/^[a-zA-Z][a-zA-Z0-9+\-.]*:/.test(url)) url = 'http://' + url;
  url = url.replace(/^(https?:\/\/)+/, (m) => m.slice(m.lastIndexOf('http')));
  const m = URI.exec(url);
  if (!m) return input;
  const scheme = m[2] ?? '';
  let netloc = m[5] ?? '';
  let path: string | null = m[6] || null;
  let query: string | null = m[8] || null;
  if (netloc.endsWith(':')) netloc = netloc.replace(/:+$/, '');
  // urlsplit's hostname/port: userinfo dropped, IPv6 brackets removed, host lower-cased.
  const hostinfo = netloc.slice(netloc.lastIndexOf('@') + 1);
  let host: string | null;
  let portText: string | null;
  if (hostinfo.includes('[')) {
    const close = hostinfo.indexOf(']');
    host = hostinfo.slice(hostinfo.indexOf('[') + 1, close < 0 ? undefined : close);
    const rest = close < 0 ? '' : hostinfo.slice(close + 1);
    portText = rest.startsWith(':') ? rest.slice(1) : null;
  } else {
    const c = hostinfo.indexOf(':');
    host = c < 0 ? hostinfo : hostinfo.slice(0, c);
    portText = c < 0 ? null : hostinfo.slice(c + 1);
  }
  let port: number | null = null;
  if (portText !== null && portText !== '') {
    if (!/^[0-9]+$/.test(portText) || Number(portText) > 65535) throw new Error('bad port');
    port = Number(portText) || null;
  }
  host = host === '' ? null : asciiLower(host);
  if (scheme.startsWith('http') && host === null && path !== null) {
    const stripped = path.replace(/^\/+/, '');
    const slash = stripped.indexOf('/');
    host = slash < 0 ? stripped : stripped.slice(0, slash);
    path = '/' + (slash < 0 ? '' : stripped.slice(slash + 1));
  }

  // GoogleURLCanonicalizer
  if (query) query = escapeOnce(unescapeRepeatedly(query));
  if (host) {
    let h = unescapeRepeatedly(host);
    h = h.split('..').join('.').replace(/^\.+|\.+$/g, '');
    host = ipFormat(h) ?? escapeOnce(asciiLower(h));
  }
  let p = unescapeRepeatedly(path ?? '');
  if (host) p = normalizePath(p);
  path = p === '' ? null : escapeOnce(p);

  // IAURLCanonicalizer
  if (host) {
    host = asciiLower(host);
    if (scheme !== 'dns') host = host.replace(/^www\d*\./, '');
  }
  const defaultPort = scheme.toLowerCase() === 'http' ? 80 : scheme.toLowerCase() === 'https' ? 443 : 0;
  if (scheme !== '' && port === defaultPort) port = null;
  if (path) {
    path = path.toLowerCase(); // ASCII after escapeOnce
    for (const re of PATH_SESSION_IDS) {
      const s = re.exec(path);
      if (s) path = (s[1] as string) + (s[3] as string);
    }
    if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  }
  if (query) {
    for (const re of QUERY_SESSION_IDS) {
      const s = re.exec(query);
      if (s) query = s[2] ? (s[1] as string) + s[2] : (s[1] as string);
    }
    query = alphaReorderQuery(query.toLowerCase());
    if (query === '') query = null;
  }

  // geturl_bytes(surt=True, with_scheme=False)
  let out = host ? '' : scheme + ':';
  if (host) {
    out += host.split('.').reverse().join(',');
    if (port !== null) out += ':' + port;
    out += ')';
  }
  if (path) out += path;
  else if (query !== null) out += '/';
  if (query !== null) out += '?' + query;
  return Buffer.from(out, 'latin1').toString('utf8');
}
