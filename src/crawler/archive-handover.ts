// What a task thread hands its archive sink (the crawl command's WARC writer):
// the exchanges the downloader captured, as response records (robots.txt,
// redirects, changed pages, 4xx/5xx when asked) or as revisits (a 304:
// server-not-modified; a 200 whose payload digest is the known one:
// identical-payload-digest). Apart from the thread because the WARC terms and
// the carrying forward of an earlier capture are a job of their own; without a
// sink nothing is captured and every call here is a no-op.
import type { KnownPage } from './task.js';
import type { Exchange } from './warc/exchange.js';
import type { RefersTo, RevisitProfile } from './warc/record.js';
import type { ArchiveSink } from './warc/writer.js';

export class ArchiveHandOver {
  /** Exchanges the downloader captured since they were last taken (archive on). */
  private captured: Exchange[] = [];

  constructor(private readonly sink: ArchiveSink | undefined) {}

  /** The downloader's onExchange hook. */
  readonly onExchange = (ex: Exchange): void => void this.captured.push(ex);

  /** The exchanges captured since the last call (one per request). */
  take(): Exchange[] {
    if (this.captured.length === 0) return this.captured;
    const c = this.captured;
    this.captured = [];
    return c;
  }

  async response(ex: Exchange, payloadDigest?: string): Promise<void> {
    if (payloadDigest !== undefined) ex.payloadDigest = payloadDigest;
    await this.sink?.archive({ kind: 'response', exchange: ex });
  }

  async revisit(ex: Exchange, profile: RevisitProfile, refersTo: RefersTo, payloadDigest?: string): Promise<void> {
    if (payloadDigest !== undefined) ex.payloadDigest = payloadDigest;
    // A revisit holds the response head only.
    await this.sink?.archive({ kind: 'revisit', exchange: { ...ex, body: new Uint8Array(0) }, profile, refersTo });
  }
}

/** The capture an unchanged page's validators carry forward: the payload digest and date of its last response record. */
export function earlierCapture(known: KnownPage | undefined): { payloadDigest?: string; capturedAt?: number } {
  const out: { payloadDigest?: string; capturedAt?: number } = {};
  if (known?.payloadDigest !== undefined) out.payloadDigest = known.payloadDigest;
  if (known?.capturedAt !== undefined) out.capturedAt = known.capturedAt;
  return out;
}

/** WARC-Refers-To-Date and the earlier payload digest, as far as they are known. */
export function refersToCapture(known: KnownPage | undefined): { date?: number; payloadDigest?: string } {
  const out: { date?: number; payloadDigest?: string } = {};
  if (known?.capturedAt !== undefined) out.date = known.capturedAt;
  if (known?.payloadDigest !== undefined) out.payloadDigest = known.payloadDigest;
  return out;
}
