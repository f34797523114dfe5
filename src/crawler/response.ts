// What one final response of a task becomes (after redirects): a 304 or a 200
// with the known payload keeps the page's validators and goes to the archive
// as a revisit; a 4xx/5xx is a counted failure; a new capture is parsed, its
// links go to the frontier, and unless Pageseen knows its text it is spooled
// as a page record for upload. Apart from the thread so that the fetch loop
// (politeness, budget, redirects) and the page's fate read separately.
import type { ArchiveHandOver } from './archive-handover.js';
import { earlierCapture, refersToCapture } from './archive-handover.js';
import type { FetchResult } from './downloader.js';
import type { Frontier } from './frontier.js';
import { sha1, sha1_32, type DigestSet } from './hash.js';
import { decodeBody, parseHtml } from './html.js';
import type { CrawlLimits } from './limits.js';
import type { OutcomeLog } from './outcome-log.js';
import type { Spool } from './spool.js';
import type { KnownPage, PageRecord, TaskStats } from './task.js';
import { pickValidators } from './validators.js';
import { sha1Label } from './warc/digest.js';
import type { Exchange } from './warc/exchange.js';

/** The task's state a response is recorded into. */
export interface ResponseContext {
  readonly stats: TaskStats;
  readonly log: OutcomeLog;
  readonly frontier: Frontier;
  readonly spool: Spool;
  readonly archive: ArchiveHandOver;
  /** Pageseen: digests of page texts the manager already holds. */
  readonly pageSeen: DigestSet;
  readonly limits: CrawlLimits;
  readonly robotsToken: string;
  /** Archive 4xx/5xx responses too. */
  readonly archiveErrors: boolean;
}

/** One fetched URL: where the crawl started it, where the redirects ended, and what was known of it. */
export interface Fetched {
  startUrl: string;
  url: URL;
  depth: number;
  fetchedAt: number;
  known: KnownPage | undefined;
  /** The captured exchange (archive on). */
  ex: Exchange | undefined;
}

export async function handleResponse(ctx: ResponseContext, f: Fetched, r: FetchResult & { ok: true }): Promise<void> {
  const { stats, log, archive } = ctx;
  const { startUrl, url, depth, known, ex } = f;
  const s = r.status;
  if (s === 304) {
    stats.pagesUnchanged++;
    stats.pagesNotModified++;
    log.count('not-modified');
    ctx.spool.addValidator({
      url: startUrl,
      depth,
      digest: known?.digest ?? 0,
      ...pickValidators(r.headers, known),
      ...earlierCapture(known),
    });
    if (ex) await archive.revisit(ex, 'server-not-modified', { uri: url.href, ...refersToCapture(known) });
    return;
  }
  if (s < 200 || s >= 300) {
    stats.pagesFailed++;
    log.fail(url.href, s >= 500 ? 'http-5xx' : s >= 400 ? 'http-4xx' : 'http-other', `status ${s}`);
    if (ex && ctx.archiveErrors) await archive.response(ex);
    return;
  }
  if (r.skipped) {
    if (r.skipped === 'not-html') log.count('not-html');
    else {
      stats.pagesFailed++;
      log.fail(url.href, r.skipped, `content-length ${r.headers['content-length'] ?? '?'}, encoding ${r.headers['content-encoding'] ?? 'identity'}`);
    }
    return;
  }
  const body = r.body ?? Buffer.alloc(0);
  // The payload digest (of the body as transferred: what WARC files and other
  // archives compare) and the 32-bit digest of the decoded body (Pageseen):
  // one SHA-1 when the body was not content-encoded.
  const raw = r.raw ?? body;
  const full = sha1(raw);
  const payloadDigest = sha1Label(full);
  const digest = raw === body ? full.readUInt32BE(0) : sha1_32(body);
  const validators = pickValidators(r.headers, undefined);
  // Unchanged at this URL: the payload digest recorded for it, or (validators
  // from before payload digests were recorded) the same decoded body.
  const identicalPayload = known?.payloadDigest !== undefined && known.payloadDigest === payloadDigest;
  if (identicalPayload || (known?.payloadDigest === undefined && known?.digest === digest)) {
    // Like a 304: its links are the ones found last time, so it is neither parsed nor uploaded.
    stats.pagesUnchanged++;
    log.count('unchanged');
    if (identicalPayload) {
      ctx.spool.addValidator({ url: startUrl, depth, digest, ...validators, payloadDigest, ...earlierCapture(known) });
      if (ex) await archive.revisit(ex, 'identical-payload-digest', { uri: url.href, ...refersToCapture(known) }, payloadDigest);
    } else {
      // No payload digest to show it is the same capture: the archive gets the response.
      ctx.spool.addValidator({ url: startUrl, depth, digest, ...validators, payloadDigest, ...(ex ? { capturedAt: ex.date } : {}) });
      if (ex) await archive.response(ex, payloadDigest);
    }
    return;
  }
  // A new capture of this URL (changed, or text already known from elsewhere: Pageseen).
  if (ex) await archive.response(ex, payloadDigest);
  const capture = { payloadDigest, ...(ex ? { capturedAt: ex.date } : {}) };
  const decoded = decodeBody(body, r.headers['content-type']);
  if (decoded.fallback) log.count('charset-fallback');
  const page = parseHtml(decoded.text, url, {
    maxLinks: ctx.limits.maxLinksPerPage,
    maxText: ctx.limits.maxTextChars,
    userAgentToken: ctx.robotsToken,
  });
  if (page.nofollow) log.count('nofollow', page.links.length);
  else {
    for (const l of page.links) {
      if (l.nofollow) {
        log.count('nofollow');
        continue;
      }
      ctx.frontier.consider(l.url, depth + 1, false, l.parsed);
    }
  }
  const unchanged = ctx.pageSeen.has(digest);
  ctx.spool.addValidator({ url: startUrl, depth, digest, ...validators, ...capture });
  if (unchanged) {
    stats.pagesUnchanged++;
    log.count('unchanged');
    return;
  }
  stats.pagesChanged++;
  log.count('changed');
  if (page.noindex) log.count('noindex');
  const rec: PageRecord = {
    url: startUrl,
    status: s,
    depth,
    fetchedAt: f.fetchedAt,
    contentType: (r.headers['content-type'] ?? '').slice(0, 256),
    bytes: body.length,
    digest,
    ...validators,
    text: page.noindex ? '' : page.text,
  };
  if (url.href !== startUrl) rec.finalUrl = url.href;
  if (page.title) rec.title = page.title;
  if (page.noindex) rec.noindex = true;
  ctx.spool.addPage(rec);
}
