// What one upload part changes in a channel's stored pages, without I/O: for
// every page the crawler saw (validators of unchanged pages, changed pages with
// text) the next latest record, and for each changed page a new version.
import type { PageLatest, PageVersion } from './records.js';
import type { Channel } from './channel.js';
import type { UploadedResult } from './result-schema.js';

type Validator = { digest: number; depth: number; etag?: string; lastModified?: string; payloadDigest?: string; capturedAt?: number };

export interface PartDiff {
  /** Every live page of the part, in upload order, with its next latest record. */
  latest: Map<string, PageLatest>;
  /** New versions: metadata and text. */
  versions: { meta: Omit<PageVersion, 'text'>; text: string }[];
  revisited: number;
  changed: number;
  newPages: number;
  /** Characters of text stored. */
  bytes: number;
}

/** The part's live pages: the validators of every page fetched, plus the changed pages. */
export function livePages(r: UploadedResult): Map<string, Validator> {
  const live = new Map<string, Validator>();
  for (const v of r.validators) live.set(v.url, v);
  for (const p of r.pages) {
    if (!live.has(p.url)) live.set(p.url, { digest: p.digest, depth: p.depth, ...(p.etag !== undefined ? { etag: p.etag } : {}), ...(p.lastModified !== undefined ? { lastModified: p.lastModified } : {}) });
  }
  return live;
}

/** True when `url` is inside the channel's origin and path prefixes. */
export function inScope(url: string, ch: Channel): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  return u.origin === ch.origin && ch.pathPrefixes.some((p) => u.pathname.startsWith(p));
}

/**
 * The diff of one part against the stored latest records (`prevs[i]` for `urls[i]`, the
 * keys of `live`). A page gets a new version when it came with text and its digest
 * differs from the stored one (or nothing with text was stored yet, or the stored one is unverified).
 */
export function diffPart(r: UploadedResult, live: Map<string, Validator>, urls: string[], prevs: (PageLatest | undefined)[], o: { now: number; taskId: string; crawler: string }): PartDiff {
  const pageOf = new Map(r.pages.map((p) => [p.url, p]));
  const d: PartDiff = { latest: new Map(), versions: [], revisited: 0, changed: 0, newPages: 0, bytes: 0 };
  urls.forEach((url, i) => {
    const v = live.get(url)!;
    const prev = prevs[i];
    if (prev !== undefined) {
      d.revisited++;
      if (prev.digest !== v.digest) d.changed++;
    } else {
      d.newPages++;
    }
    const next: PageLatest = { ...(prev ?? { version: 0 }), digest: v.digest, depth: v.depth, lastSeen: o.now, lastTask: o.taskId };
    if (v.etag !== undefined) next.etag = v.etag;
    else delete next.etag;
    if (v.lastModified !== undefined) next.lastModified = v.lastModified;
    else delete next.lastModified;
    // Only a capture that was archived is kept (text-only crawls report no capturedAt).
    if (v.payloadDigest !== undefined && v.capturedAt !== undefined) {
      next.payloadDigest = v.payloadDigest;
      next.capturedAt = v.capturedAt;
    }
    const p = pageOf.get(url);
    if (p !== undefined && (prev === undefined || prev.version === 0 || prev.digest !== p.digest || prev.unverified === true)) {
      delete next.unverified;
      next.version = (prev?.version ?? 0) + 1;
      next.fetchedAt = p.fetchedAt;
      next.bytes = p.bytes;
      if (p.title !== undefined) next.title = p.title;
      const { text, ...pageMeta } = p;
      d.versions.push({ meta: { ...pageMeta, version: next.version, taskId: o.taskId, crawler: o.crawler, storedAt: o.now }, text });
      d.bytes += text.length;
    }
    d.latest.set(url, next);
  });
  return d;
}
