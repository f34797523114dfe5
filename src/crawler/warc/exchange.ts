// One HTTP exchange as the downloader captured it, and its messages as a WARC
// record holds them (application/http): the request head as sent, the response
// head as received — the status line with its reason phrase, every header line
// in order with its bytes — and the payload as transferred: a content-encoded
// body stays encoded, with its Content-Encoding. The transfer coding (chunked)
// is removed by the HTTP parser before we see the body, so the header that
// announced it is renamed X-Crawler-Transfer-Encoding, as Common Crawl does:
// the message stays parseable, and the payload digest is the entity body's
// (WARC 1.1 §6.3.2), the one other archives of the same page compute.

/** What the downloader hands the archive for one request. Plain data: it is
 * posted to the WARC worker thread as it is. */
export interface Exchange {
  /** The request URL (WARC-Target-URI). */
  url: string;
  /** When the request was sent, epoch ms (WARC-Date). */
  date: number;
  /** The request head exactly as sent: request line, header lines, blank line. */
  request: Uint8Array;
  status: number;
  /** The reason phrase as received (may be empty; undici decodes it as UTF-8). */
  statusText: string;
  /** Response header names and values, alternating, as received (raw bytes). */
  headers: Uint8Array[];
  /** The payload: the body as transferred, transfer coding removed. */
  body: Uint8Array;
  /** The body was cut short (a size cap, or the rest was not read). */
  truncated: boolean;
  /** "sha1:<base32>" of `body`, when the caller already computed it. */
  payloadDigest?: string;
  /** "sha1:<base32>" of the response (or revisit) record's block, when the
   * caller already computed and checked it (the manager, for an uploaded batch). */
  blockDigest?: string;
}

const CRLF = Buffer.from('\r\n', 'latin1');
const COLON = Buffer.from(': ', 'latin1');
const TRANSFER_ENCODING = 'transfer-encoding';
const RENAMED_TE = Buffer.from('X-Crawler-Transfer-Encoding', 'latin1');

function isName(raw: Uint8Array, lower: string): boolean {
  if (raw.length !== lower.length) return false;
  for (let i = 0; i < raw.length; i++) if (((raw[i] as number) | 0x20) !== lower.charCodeAt(i)) return false;
  return true;
}

/**
 * The response head as archived: "HTTP/1.1 <status> <reason>", one line per
 * received header (name and value bytes as they came, ": " between them),
 * and the blank line. undici speaks HTTP/1.1 only, and its parser does not
 * report the version a server answered with, so the line says HTTP/1.1.
 */
export function responseHead(status: number, statusText: string, headers: readonly Uint8Array[]): Buffer {
  // undici hands the reason phrase over decoded as UTF-8: written back as UTF-8 it is
  // byte-exact when it was UTF-8 or ASCII (other bytes arrive as U+FFFD).
  const parts: Uint8Array[] = [Buffer.from(`HTTP/1.1 ${status}${statusText === '' ? '' : ' ' + statusText}\r\n`, 'utf8')];
  for (let i = 0; i + 1 < headers.length; i += 2) {
    const name = headers[i] as Uint8Array;
    parts.push(isName(name, TRANSFER_ENCODING) ? RENAMED_TE : name, COLON, headers[i + 1] as Uint8Array, CRLF);
  }
  parts.push(CRLF);
  return Buffer.concat(parts);
}

/** The first value of a response header (latin1), or undefined. */
export function headerValue(headers: readonly Uint8Array[], lowerName: string): string | undefined {
  for (let i = 0; i + 1 < headers.length; i += 2) {
    if (isName(headers[i] as Uint8Array, lowerName)) {
      const v = headers[i + 1] as Uint8Array;
      return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('latin1');
    }
  }
  return undefined;
}

/** An exchange whose bytes sit at `at` in a buffer shared by a batch: many
 * exchanges go to another thread in one transferred buffer (no copy), where a
 * structured clone would copy every ArrayBuffer their views sit in — for a body
 * received in one chunk, the socket's whole read buffer. */
export interface PackedExchange extends Omit<Exchange, 'request' | 'headers' | 'body'> {
  at: number;
  requestLength: number;
  headerLengths: number[];
  bodyLength: number;
}

/** Bytes an exchange takes in a packed buffer. */
export function packedSize(ex: Exchange): number {
  let n = ex.request.byteLength + ex.body.byteLength;
  for (const h of ex.headers) n += h.byteLength;
  return n;
}

/** Copies the exchange's bytes into `buf` at `at` (packedSize(ex) bytes). */
export function packExchange(ex: Exchange, buf: Uint8Array, at: number): PackedExchange {
  buf.set(ex.request, at);
  let off = at + ex.request.byteLength;
  const headerLengths: number[] = [];
  for (const h of ex.headers) {
    buf.set(h, off);
    off += h.byteLength;
    headerLengths.push(h.byteLength);
  }
  buf.set(ex.body, off);
  const { request: _r, headers: _h, body: _b, ...rest } = ex;
  return { ...rest, at, requestLength: ex.request.byteLength, headerLengths, bodyLength: ex.body.byteLength };
}

export function unpackExchange(p: PackedExchange, buf: Uint8Array): Exchange {
  const { at, requestLength, headerLengths, bodyLength, ...rest } = p;
  const headers: Uint8Array[] = [];
  let off = at + requestLength;
  for (const n of headerLengths) {
    headers.push(buf.subarray(off, off + n));
    off += n;
  }
  return { ...rest, request: buf.subarray(at, at + requestLength), headers, body: buf.subarray(off, off + bodyLength) };
}
