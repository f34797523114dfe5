// The downloader (paper §2.2): one persistent HTTP connection to the host, no
// pipelining (an undici Client, pipelining 1), a connector whose DNS lookup
// refuses private addresses, bounded bodies, and every failure mapped to an
// Outcome instead of an exception.
import { brotliDecompressSync, gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';
import { Client, errors as undiciErrors } from 'undici';
import type { TokenBucket } from './bandwidth.js';
import type { CrawlLimits } from './limits.js';
import { checkLiteralHost, PrivateAddressError, safeLookup } from './safety.js';
import type { Outcome } from './task.js';

export interface FetchOk {
  ok: true;
  status: number;
  headers: Record<string, string>;
  /** Decoded body, or null when skipped (not wanted / no body). */
  body: Buffer | null;
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
  headers?: Record<string, string>;
  /** Decide from status and headers whether to read the body. Returns an Outcome to skip it. */
  accept?: (status: number, headers: Record<string, string>) => Outcome | null;
  /** Stop at the cap and keep what was read (robots.txt) instead of failing. */
  truncate?: boolean;
  maxBytes?: number;
  signal?: AbortSignal;
}

function flatHeaders(h: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

/** Maps a thrown error to an Outcome. */
export function classifyError(err: unknown): { outcome: Outcome; detail: string } {
  const e = err as Error & { code?: string; cause?: Error & { code?: string } };
  const code = e?.code ?? e?.cause?.code ?? '';
  const detail = `${code ? code + ': ' : ''}${e?.message ?? String(err)}`;
  if (e instanceof PrivateAddressError || code === 'EPRIVATE' || e?.cause instanceof PrivateAddressError) return { outcome: 'private-address', detail };
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_FAIL' || code === 'EAI_NONAME' || code === 'ENODATA') return { outcome: 'dns-failure', detail };
  if (e instanceof undiciErrors.ConnectTimeoutError || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ETIMEDOUT') return { outcome: 'connect-timeout', detail };
  if (e instanceof undiciErrors.HeadersTimeoutError || code === 'UND_ERR_HEADERS_TIMEOUT') return { outcome: 'headers-timeout', detail };
  if (e instanceof undiciErrors.BodyTimeoutError || code === 'UND_ERR_BODY_TIMEOUT') return { outcome: 'body-timeout', detail };
  return { outcome: 'connection-error', detail };
}

export class Downloader {
  private readonly client: Client;
  readonly origin: string;
  private closed = false;
  requests = 0;
  wireBytes = 0;
  minTtfbMs: number | null = null;

  constructor(
    origin: string,
    private readonly opts: { allowPrivate: boolean; userAgent: string; limits: CrawlLimits; bandwidth?: TokenBucket },
  ) {
    this.origin = origin;
    const l = opts.limits;
    this.client = new Client(origin, {
      pipelining: 1,
      connect: { lookup: safeLookup(opts.allowPrivate), timeout: l.connectTimeoutMs },
      headersTimeout: l.headersTimeoutMs,
      bodyTimeout: l.bodyTimeoutMs,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 60_000,
    });
  }

  /** GET a path on this origin. Never throws for network/HTTP problems. */
  async get(url: URL, o: GetOptions = {}): Promise<FetchResult> {
    if (this.closed) return { ok: false, outcome: 'error', detail: 'downloader closed' };
    try {
      checkLiteralHost(url.hostname, this.opts.allowPrivate);
    } catch (err) {
      return { ok: false, ...classifyError(err) };
    }
    const l = this.opts.limits;
    const maxBytes = o.maxBytes ?? l.maxBodyBytes;
    // Headers are bounded by undici's headersTimeout; the whole body by a timer armed below.
    const signal = o.signal;
    const t0 = performance.now();
    this.requests++;
    let res: Awaited<ReturnType<Client['request']>>;
    try {
      res = await this.client.request({
        path: url.pathname + url.search,
        method: 'GET',
        headers: {
          'user-agent': this.opts.userAgent,
          accept: 'text/html,application/xhtml+xml;q=0.9,text/plain;q=0.5,*/*;q=0.1',
          'accept-encoding': 'gzip, deflate, br',
          ...o.headers,
        },
        ...(signal ? { signal } : {}),
      });
    } catch (err) {
      return { ok: false, ...classifyError(err) };
    }
    const ttfbMs = performance.now() - t0;
    if (this.minTtfbMs === null || ttfbMs < this.minTtfbMs) this.minTtfbMs = ttfbMs;
    const headers = flatHeaders(res.headers);
    const status = res.statusCode;
    const skip = o.accept?.(status, headers) ?? null;
    if (skip !== null || status === 204 || status === 304 || (status >= 300 && status < 400)) {
      await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      return { ok: true, status, headers, body: null, ...(skip ? { skipped: skip } : {}), truncated: false, wireBytes: 0, ttfbMs };
    }
    const declared = Number(headers['content-length']);
    if (!o.truncate && Number.isFinite(declared) && declared > maxBytes) {
      res.body.destroy();
      return { ok: true, status, headers, body: null, skipped: 'too-large', truncated: false, wireBytes: 0, ttfbMs };
    }
    const chunks: Buffer[] = [];
    let total = 0;
    let truncated = false;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      res.body.destroy();
    }, Math.max(1, l.requestTimeoutMs - (performance.now() - t0)));
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        total += chunk.length;
        this.wireBytes += chunk.length;
        if (this.opts.bandwidth) await this.opts.bandwidth.take(chunk.length, signal);
        if (total > maxBytes) {
          if (o.truncate) {
            chunks.push(chunk.subarray(0, chunk.length - (total - maxBytes)));
            truncated = true;
          }
          res.body.destroy();
          break;
        }
        chunks.push(chunk);
      }
    } catch (err) {
      res.body.destroy();
      if (timedOut) return { ok: false, outcome: 'body-timeout', detail: `request exceeded ${l.requestTimeoutMs} ms` };
      return { ok: false, ...classifyError(err) };
    } finally {
      clearTimeout(timer);
    }
    if (timedOut) return { ok: false, outcome: 'body-timeout', detail: `request exceeded ${l.requestTimeoutMs} ms` };
    if (total > maxBytes && !o.truncate) return { ok: true, status, headers, body: null, skipped: 'too-large', truncated: false, wireBytes: total, ttfbMs };
    let body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
    const enc = (headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    if (enc !== 'identity' && enc !== '' && body.length > 0) {
      const zo = { maxOutputLength: l.maxDecodedBytes };
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
        } else return { ok: true, status, headers, body: null, skipped: 'bad-encoding', truncated, wireBytes: total, ttfbMs };
      } catch (err) {
        const tooBig = err instanceof RangeError || (err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE';
        return { ok: true, status, headers, body: null, skipped: tooBig ? 'decompressed-too-large' : 'bad-encoding', truncated, wireBytes: total, ttfbMs };
      }
    }
    return { ok: true, status, headers, body, truncated, wireBytes: total, ttfbMs };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.client.destroy().catch(() => undefined);
  }
}
