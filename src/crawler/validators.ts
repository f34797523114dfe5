// Conditional GET (paper §2.2): the validators a known page carries into the
// request (If-None-Match, If-Modified-Since) and the ones a response leaves for
// the next task. Apart from the thread so that both directions, and the size
// caps that keep the next task valid, are in one place.
import type { KnownPage } from './task.js';

/** The conditional request headers for a known page, as the downloader's flat [name, value, …] list. */
export function conditionalHeaders(known: KnownPage | undefined): string[] {
  const headers: string[] = [];
  if (known?.etag) headers.push('if-none-match', known.etag);
  if (known?.lastModified) headers.push('if-modified-since', known.lastModified);
  return headers;
}

/** The response's validators, else the known page's (a 304 need not repeat them). */
export function pickValidators(h: Record<string, string>, known: KnownPage | undefined): { etag?: string; lastModified?: string } {
  const out: { etag?: string; lastModified?: string } = {};
  const etag = h['etag'] ?? known?.etag;
  const lm = h['last-modified'] ?? known?.lastModified;
  // Oversized validators would make the next task invalid (TASK schema caps): drop them.
  if (etag && etag.length <= 512) out.etag = etag;
  if (lm && lm.length <= 128) out.lastModified = lm;
  return out;
}
