// The downloader (paper §2.2): one persistent HTTP connection to the host, no
// pipelining (an undici Client, pipelining 1), a connector whose DNS lookup
// refuses private addresses, bounded bodies, and every failure mapped to an
// Outcome instead of an exception. With `onExchange` it also captures each
// exchange for the archive (src/crawler/warc): the request head as undici
// sends it, the status line's reason phrase and every header line as
// received (bytes, order, repeats), and the body as transferred — before any
// content decoding, which the crawler does for itself.
import { brotliDecompressSync, gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';
import { Client, errors as undiciErrors, type Dispatcher } from 'undici';
import type { TokenBucket } from './bandwidth.js';
import type { CrawlLimits } from './limits.js';
import { checkLiteralHost, PrivateAddressError, safeLookup, type OwnerBlockList } from './safety.js';
import { countingConnector, SocketBytes } from './socket-bytes.js';
import type { Outcome } from './task.js';
import type { Exchange } from './warc/exchange.js';

export interface FetchOk {
  ok: true;
  status: number;
  headers: Record<string, string>;
  /** Decoded body, or null when skipped (not wanted / no body). */
  body: Buffer | null;
  /** The body as transferred (content coding kept): `body` itself when it was not encoded. */
  raw?: Buffer;
  /** Set when the body was skipped or refused. */
  skipped?: Outcome;
  truncated: boolean;
  wireBytes: number;
  ttfbMs: number;
}

export interface FetchErr {
  ok: false;
  outcome: Outcome;
  detail: string;
}

export type FetchResult = FetchOk | FetchErr;

export interface GetOptions {
  /** Extra request headers as [name, value, name, value, ...] (undici's flat form: no object to build per request). */
  headers?: string[];
  /** Decide from status and headers whether to read the body. Returns an Outcome to skip it. */
  accept?: (status: number, headers: Record<string, string>) => Outcome | null;
  /** Stop at the cap and keep what was read (robots.txt) instead of failing. */
  truncate?: boolean;
  maxBytes?: number;
}

function flatHeaders(h: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in h) {
    const v = h[k];
    if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

/** Maps a thrown error to an Outcome. */
export function classifyError(err: unknown): { outcome: Outcome; detail: string } {
  const e = err as Error & { code?: string; cause?: Error & { code?: string } };
  const code = e?.code ?? e?.cause?.code ?? '';
  const detail = `${code ? code + ': ' : ''}${e?.message ?? String(err)}`;
  if (code === 'EBLOCKED') return { outcome: 'owner-blocked', detail };
  if (e instanceof PrivateAddressError || code === 'EPRIVATE' || e?.cause instanceof PrivateAddressError) return { outcome: 'private-address', detail };
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_FAIL' || code === 'EAI_NONAME' || code === 'ENODATA') return { outcome: 'dns-failure', detail };
  if (e instanceof undiciErrors.ConnectTimeoutError || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ETIMEDOUT') return { outcome: 'connect-timeout', detail };
  if (e instanceof undiciErrors.HeadersTimeoutError || code === 'UND_ERR_HEADERS_TIMEOUT') return { outcome: 'headers-timeout', detail };
  if (e instanceof undiciErrors.BodyTimeoutError || code === 'UND_ERR_BODY_TIMEOUT') return { outcome: 'body-timeout', detail };
  return { outcome: 'connection-error', detail };
}

/** Bytes of an unwanted body (redirect, 304, non-HTML...) read and dropped to keep the connection; beyond this it is closed. */
const DISCARD_LIMIT = 64 * 1024;

const aborted = (): FetchErr => ({ ok: false, outcome: 'connection-error', detail: 'UND_ERR_ABORTED: request aborted' });

export class Downloader {
  private readonly client: Client;
  readonly origin: string;
  private readonly baseHeaders: string[];
  private readonly requestPrefix: string;
  /** Requests in flight (one at a time on this connection), ended at once when the signal aborts: one listener, not one per request. */
  private active: GetHandler[] = [];
  private closed = false;
  requests = 0;
  wireBytes = 0;
  /** What the connections moved, as the OS counts it (heads, bodies as sent, TLS): the owner's transfer cap counts this. */
  readonly socketBytes = new SocketBytes();
  minTtfbMs: number | null = null;

  constructor(
    origin: string,
    private readonly opts: {
      allowPrivate: boolean;
      blockList?: OwnerBlockList;
      userAgent: string;
      limits: CrawlLimits;
      bandwidth?: TokenBucket;
      signal?: AbortSignal;
      /** Receives every exchange that got a response (not failures, not bodies refused as too large). */
      onExchange?: (ex: Exchange) => void;
      /** Clock for the exchanges' dates (epoch ms). */
      now?: () => number;
    },
  ) {
    this.origin = origin;
    // undici writes "host" (from the origin) and "connection" before the caller's headers.
    this.requestPrefix = `host: ${new URL(origin).host}\r\nconnection: keep-alive\r\n`;
    opts.signal?.addEventListener(
      'abort',
      () => {
        for (const h of this.active.slice()) h.abort();
      },
      { once: true },
    );
    const l = opts.limits;
    this.client = new Client(origin, {
      pipelining: 1,
      connect: countingConnector({ lookup: safeLookup(opts.allowPrivate, opts.blockList), timeout: l.connectTimeoutMs }, this.socketBytes),
      headersTimeout: l.headersTimeoutMs,
      bodyTimeout: l.bodyTimeoutMs,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 60_000,
    });
    this.baseHeaders = ['user-agent', opts.userAgent, 'accept', 'text/html,application/xhtml+xml;q=0.9,text/plain;q=0.5,*/*;q=0.1', 'accept-encoding', 'gzip, deflate, br'];
  }

  /** GET a path on this origin. Never throws for network/HTTP problems. */
  async get(url: URL, o: GetOptions = {}): Promise<FetchResult> {
    if (this.closed) return { ok: false, outcome: 'error', detail: 'downloader closed' };
    try {
      checkLiteralHost(url.hostname, this.opts.allowPrivate, this.opts.blockList);
    } catch (err) {
      return { ok: false, ...classifyError(err) };
    }
    if (this.opts.signal?.aborted) return aborted();
    this.requests++;
    const path = url.pathname + url.search;
    const headers = o.headers?.length ? [...this.baseHeaders, ...o.headers] : this.baseHeaders;
    const capture = this.opts.onExchange !== undefined;
    const date = capture ? (this.opts.now ?? Date.now)() : 0;
    const got = await new Promise<Received>((resolve) => {
      const handler = new GetHandler(this, o, resolve, capture);
      this.client.dispatch({ path, method: 'GET', headers }, handler);
    });
    const result = got.kind === 'done' ? got.result : decodeContent(got, this.opts.limits.maxDecodedBytes);
    if (got.captured && result.ok) {
      const c = got.captured;
      this.opts.onExchange?.({
        url: url.href,
        date,
        request: this.requestHead(path, headers),
        status: result.status,
        statusText: c.statusText,
        headers: c.headers,
        body: result.raw ?? c.body,
        truncated: c.truncated || result.truncated,
      });
    }
    return result;
  }

  /** The request head as undici writes it (client-h1.js): request line, host, connection, our headers. */
  private requestHead(path: string, headers: string[]): Buffer {
    let s = `GET ${path} HTTP/1.1\r\n${this.requestPrefix}`;
    for (let i = 0; i + 1 < headers.length; i += 2) s += `${headers[i]}: ${headers[i + 1]}\r\n`;
    return Buffer.from(s + '\r\n', 'latin1');
  }

  /** Called by a request's handler when the headers arrive. */
  noteTtfb(ms: number): void {
    if (this.minTtfbMs === null || ms < this.minTtfbMs) this.minTtfbMs = ms;
  }

  /** Called by a request's handler for every body chunk. */
  noteBytes(n: number): void {
    this.wireBytes += n;
  }

  get bandwidth(): TokenBucket | undefined {
    return this.opts.bandwidth;
  }

  get signal(): AbortSignal | undefined {
    return this.opts.signal;
  }

  /** A request's handler registers while it is in flight. */
  track(h: GetHandler, inFlight: boolean): void {
    if (inFlight) this.active.push(h);
    else this.active = this.active.filter((x) => x !== h);
  }

  get limits(): CrawlLimits {
    return this.opts.limits;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.client.destroy().catch(() => undefined);
  }
}

/** A response as received, for the archive: raw header lines, reason phrase, and (for a body the crawler skipped) what of it was read. */
interface Captured {
  statusText: string;
  /** Names and values, alternating: copies in one buffer (undici's are views of the socket's read buffer). */
  headers: Uint8Array[];
  /** A skipped body, as far as it was read (a read body comes in the result). */
  body: Uint8Array;
  truncated: boolean;
}

/** What a request's handler hands back: a finished result, or a whole body still to decode. */
type Received = (
  | { kind: 'done'; result: FetchResult }
  | { kind: 'body'; status: number; headers: Record<string, string>; chunks: Buffer[]; truncated: boolean; wireBytes: number; ttfbMs: number }
) & { captured?: Captured };

const EMPTY = new Uint8Array(0);

/** Copies undici's raw header buffers into one allocation of their own. */
function copyHeaders(raw: readonly (Buffer | string)[]): Uint8Array[] {
  let total = 0;
  for (const b of raw) total += typeof b === 'string' ? Buffer.byteLength(b, 'latin1') : b.length;
  const all = new Uint8Array(total);
  const out: Uint8Array[] = [];
  let off = 0;
  for (const b of raw) {
    const bytes = typeof b === 'string' ? Buffer.from(b, 'latin1') : b;
    all.set(bytes, off);
    out.push(all.subarray(off, off + bytes.length));
    off += bytes.length;
  }
  return out;
}

/**
 * One GET on undici's dispatch API: no response stream or promise per
 * request, and an unwanted body (304, redirect, non-HTML) is dropped as it
 * arrives. Bounds: Content-Length and the bytes read against maxBytes, the
 * whole request against requestTimeoutMs (from the first byte of the
 * headers), the bandwidth bucket by pausing the socket.
 */
class GetHandler implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private finished = false;
  private readonly t0 = performance.now();
  private ttfbMs = 0;
  private status = 0;
  private headers: Record<string, string> = {};
  /** Set when the body is not wanted: the result once the response ends. */
  private skip: FetchResult | null = null;
  private discarded = 0;
  private readonly chunks: Buffer[] = [];
  private total = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly maxBytes: number;
  /** The response as received, when the downloader captures exchanges. */
  private captured: Captured | undefined;
  /** A skipped body's chunks, kept for the archive (≤ DISCARD_LIMIT). */
  private skippedChunks: Buffer[] | null = null;

  constructor(
    private readonly dl: Downloader,
    private readonly o: GetOptions,
    private readonly resolve: (r: Received) => void,
    private readonly capture: boolean,
  ) {
    this.maxBytes = o.maxBytes ?? dl.limits.maxBodyBytes;
    dl.track(this, true);
  }

  /** The downloader's signal fired (deadline, hand-over). */
  abort(): void {
    this.stop({ kind: 'done', result: aborted() });
  }

  private finish(r: Received): void {
    if (this.finished) return;
    this.finished = true;
    if (this.timer) clearTimeout(this.timer);
    this.dl.track(this, false);
    const c = this.captured;
    // A body refused as too large is not archived: only what the crawler took in whole (or cut to a cap on purpose).
    if (c && !(r.kind === 'done' && r.result.ok && r.result.skipped === 'too-large')) {
      if (this.skippedChunks) c.body = this.skippedChunks.length === 1 ? (this.skippedChunks[0] as Buffer) : Buffer.concat(this.skippedChunks);
      r.captured = c;
    }
    this.resolve(r);
  }

  /** Ends with a result and drops the connection (the rest of the body is not read). */
  private stop(r: Received): void {
    this.finish(r);
    this.controller?.abort(new Error('body not wanted'));
  }

  /** A response without a body to use. */
  private ok(extra: Partial<FetchOk>): FetchOk {
    return { ok: true, status: this.status, headers: this.headers, body: null, truncated: false, wireBytes: 0, ttfbMs: this.ttfbMs, ...extra };
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.finished) controller.abort(new Error('aborted'));
  }

  onResponseStart(controller: Dispatcher.DispatchController, status: number, raw: Record<string, string | string[] | undefined>, statusText?: string): void {
    // 1xx (e.g. 103 Early Hints) come before the real response: not the answer.
    if (this.finished || status < 200) return;
    this.ttfbMs = performance.now() - this.t0;
    this.dl.noteTtfb(this.ttfbMs);
    this.status = status;
    const headers = flatHeaders(raw);
    this.headers = headers;
    if (this.capture) {
      const rawHeaders = controller.rawHeaders;
      this.captured = { statusText: statusText ?? '', headers: Array.isArray(rawHeaders) ? copyHeaders(rawHeaders) : [], body: EMPTY, truncated: false };
    }
    const skip = this.o.accept?.(status, headers) ?? null;
    if (skip !== null || status === 204 || status === 304 || (status >= 300 && status < 400)) {
      this.skip = this.ok(skip ? { skipped: skip } : {});
      if (this.capture) this.skippedChunks = [];
      return;
    }
    const declared = Number(headers['content-length']);
    if (!this.o.truncate && Number.isFinite(declared) && declared > this.maxBytes) {
      this.stop({ kind: 'done', result: this.ok({ skipped: 'too-large' }) });
      return;
    }
    const limits = this.dl.limits;
    this.timer = setTimeout(
      () => {
        this.stop({ kind: 'done', result: { ok: false, outcome: 'body-timeout', detail: `request exceeded ${limits.requestTimeoutMs} ms` } });
      },
      Math.max(1, limits.requestTimeoutMs - (performance.now() - this.t0)),
    );
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.finished) return;
    if (this.skip) {
      this.discarded += chunk.length;
      if (this.discarded > DISCARD_LIMIT) {
        if (this.captured) this.captured.truncated = true;
        this.stop({ kind: 'done', result: this.skip });
      } else this.skippedChunks?.push(chunk);
      return;
    }
    this.total += chunk.length;
    this.dl.noteBytes(chunk.length);
    const bucket = this.dl.bandwidth;
    if (bucket) {
      // Stop reading until the bucket allows it: TCP flow control slows the sender.
      controller.pause();
      bucket.take(chunk.length, this.dl.signal).then(
        () => controller.resume(),
        () => undefined, // aborted: abort() has ended the request
      );
    }
    if (this.total > this.maxBytes) {
      if (this.o.truncate) {
        this.chunks.push(chunk.subarray(0, chunk.length - (this.total - this.maxBytes)));
        this.stop(this.body(true));
      } else this.stop({ kind: 'done', result: this.ok({ skipped: 'too-large', wireBytes: this.total }) });
      return;
    }
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.skip) this.finish({ kind: 'done', result: this.skip });
    else this.finish(this.body(false));
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, err: Error): void {
    // An unwanted body that fails to arrive still leaves its response usable.
    if (this.skip) {
      if (this.captured) this.captured.truncated = true;
      this.finish({ kind: 'done', result: this.skip });
    }
    else this.finish({ kind: 'done', result: { ok: false, ...classifyError(err) } });
  }

  private body(truncated: boolean): Received {
    return { kind: 'body', status: this.status, headers: this.headers, chunks: this.chunks, truncated, wireBytes: this.total, ttfbMs: this.ttfbMs };
  }
}

/** Joins and decompresses a received body (Content-Encoding), bounded by maxDecoded. */
function decodeContent(r: Extract<Received, { kind: 'body' }>, maxDecoded: number): FetchResult {
  const { status, headers, truncated, wireBytes: total, ttfbMs } = r;
  const raw = r.chunks.length === 1 ? (r.chunks[0] as Buffer) : Buffer.concat(r.chunks);
  let body = raw;
  const enc = (headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (enc !== 'identity' && enc !== '' && body.length > 0) {
    const zo = { maxOutputLength: maxDecoded };
    try {
      if (enc === 'gzip' || enc === 'x-gzip') body = gunzipSync(body, zo);
      else if (enc === 'br') body = brotliDecompressSync(body, zo);
      else if (enc === 'deflate') {
        try {
          body = inflateSync(body, zo);
        } catch (err) {
          if (err instanceof RangeError) throw err;
          body = inflateRawSync(body, zo);
        }
      } else return { ok: true, status, headers, body: null, raw, skipped: 'bad-encoding', truncated, wireBytes: total, ttfbMs };
    } catch (err) {
      const tooBig = err instanceof RangeError || (err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE';
      return { ok: true, status, headers, body: null, raw, skipped: tooBig ? 'decompressed-too-large' : 'bad-encoding', truncated, wireBytes: total, ttfbMs };
    }
  }
  return { ok: true, status, headers, body, raw, truncated, wireBytes: total, ttfbMs };
}
