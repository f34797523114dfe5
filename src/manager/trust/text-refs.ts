// Text references: what earlier crawls of a channel extracted from each page
// body the manager has seen (URL and body digest → a digest of the normalised
// text, title and noindex flag, and whose crawl it was). One body gives one
// extraction (compare.ts's contradiction), so a crawl that uploads a page with
// the same body digest must carry the same text whenever it was fetched: no
// change model is needed, and a page that changed has another digest and is
// simply not compared. A reference is evidence already paid for — every check
// crawl (second or third) uploads the text of every page it found, and the
// subject's crawl of every check is read back from the store — so two things
// can be had from it without a new crawl (checks.ts, service.ts; docs/trust.md):
//
//  - a newcomer's intro check passes when every page with text of the drawn
//    crawl matches a reference by another volunteer that a check has vouched
//    for (or trusted); anything else — a page nobody else saw in that body, a
//    contradiction — falls back to the real second crawl;
//  - a contradiction between a subject and its verifier is settled by
//    references of those page bodies from a third such volunteer, when they
//    all side with one of the two.
//
// In memory and bounded (a restart forgets them: the next intro or dispute
// costs its crawl, as before). The pure judgement is `judgeByReferences`.
import type { CrawlView, PageView } from './compare.js';
import { textDigest } from './text.js';

/** Channels remembered (the least recently referenced are forgotten first). */
const MAX_CHANNELS = 10_000;
/** Page bodies kept per channel (the oldest forgotten first). */
const MAX_BODIES = 4000;
/** References kept per page body (the newest, one per volunteer). */
const PER_BODY = 4;

export interface TextRef {
  volunteer: string;
  taskId: string;
  /** When the manager received the crawl. */
  at: number;
  /** textDigest of the page's normalised text, title and noindex flag. */
  extraction: number;
}

/** What one page body's extraction is judged by: its text, title and noindex flag. */
export function extractionDigest(p: Pick<PageView, 'text' | 'title' | 'noindex'>): number {
  return textDigest(`${p.text}\u0001${p.title ?? ''}\u0001${p.noindex === true ? 1 : 0}`);
}

const key = (url: string, digest: number): string => `${digest}\u0000${url}`;

export class TextReferences {
  private readonly byChannel = new Map<string, Map<string, TextRef[]>>();

  /** `keep` false: nothing is remembered (no rule reads the references, so
   * they would only cost the manager memory: up to MAX_CHANNELS × MAX_BODIES). */
  constructor(private readonly keep = true) {}

  get channels(): number {
    return this.byChannel.size;
  }

  /** Keeps the extraction of every page with text of a crawl of `channel`. */
  add(channel: string, view: Pick<CrawlView, 'volunteer' | 'taskId' | 'receivedAt' | 'pages'>): void {
    if (!this.keep || view.pages.length === 0) return;
    const bodies = this.byChannel.get(channel) ?? new Map<string, TextRef[]>();
    for (const p of view.pages) {
      const k = key(p.url, p.digest);
      const ref: TextRef = { volunteer: view.volunteer, taskId: view.taskId, at: view.receivedAt, extraction: extractionDigest(p) };
      const list = (bodies.get(k) ?? []).filter((r) => r.volunteer !== ref.volunteer);
      bodies.delete(k); // re-inserted last: the map's order is the recency order
      bodies.set(k, [ref, ...list].slice(0, PER_BODY));
    }
    while (bodies.size > MAX_BODIES) bodies.delete(bodies.keys().next().value!);
    this.byChannel.delete(channel);
    this.byChannel.set(channel, bodies);
    while (this.byChannel.size > MAX_CHANNELS) this.byChannel.delete(this.byChannel.keys().next().value!);
  }

  /** The references of one page body by volunteers `eligible` now, newest first. */
  find(channel: string, url: string, digest: number, eligible: (volunteer: string) => boolean): TextRef[] {
    return (this.byChannel.get(channel)?.get(key(url, digest)) ?? []).filter((r) => eligible(r.volunteer));
  }
}

export interface ReferenceJudgement {
  /** 'agree': every page was matched by a reference and none contradicted it;
   * 'contradicted': a reference of the same body carries another extraction;
   * 'incomplete': some page has no reference (nothing is said of it). */
  verdict: 'agree' | 'contradicted' | 'incomplete';
  matched: number;
  contradicted: string[];
  unreferenced: number;
  /** Who vouched (the references that matched). */
  by: string[];
}

/** Judges `pages` (with text) by the references `refsOf` gives for each body. Pure. */
export function judgeByReferences(pages: readonly PageView[], refsOf: (p: PageView) => readonly TextRef[]): ReferenceJudgement {
  let matched = 0;
  let unreferenced = 0;
  const contradicted: string[] = [];
  const by = new Set<string>();
  for (const p of pages) {
    const refs = refsOf(p);
    if (refs.length === 0) {
      unreferenced++;
      continue;
    }
    const mine = extractionDigest(p);
    if (refs.some((r) => r.extraction !== mine)) contradicted.push(p.url);
    else {
      matched++;
      for (const r of refs) by.add(r.volunteer);
    }
  }
  const verdict = contradicted.length > 0 ? 'contradicted' : unreferenced > 0 || matched === 0 ? 'incomplete' : 'agree';
  return { verdict, matched, contradicted, unreferenced, by: [...by] };
}

/**
 * A contradiction between subject `a` and verifier `b` (the same body digest,
 * another extraction, on `urls`) judged by third references of those bodies:
 * the side every reference matches on every referenced page, while none
 * matches the other side, is upheld and the other outvoted. Null when no page
 * has a reference or the references are split. Pure.
 */
export function sideByReferences(
  urls: readonly string[],
  a: readonly PageView[],
  b: readonly PageView[],
  refsOf: (p: PageView) => readonly TextRef[],
): { odd: 'a' | 'b'; pages: number; by: string[] } | null {
  const byUrl = (ps: readonly PageView[]): Map<string, PageView> => new Map(ps.map((p) => [p.url, p]));
  const pa = byUrl(a);
  const pb = byUrl(b);
  let forA = 0;
  let forB = 0;
  let pages = 0;
  const by = new Set<string>();
  for (const url of urls) {
    const x = pa.get(url);
    const y = pb.get(url);
    if (x === undefined || y === undefined) continue;
    const refs = refsOf(x);
    if (refs.length === 0) continue;
    pages++;
    const ea = extractionDigest(x);
    const eb = extractionDigest(y);
    for (const r of refs) {
      by.add(r.volunteer);
      if (r.extraction === ea) forA++;
      else if (r.extraction === eb) forB++;
      else return null; // a third extraction: nothing is settled
    }
  }
  if (pages === 0 || (forA > 0 && forB > 0)) return null;
  return { odd: forA > 0 ? 'b' : 'a', pages, by: [...by] };
}
