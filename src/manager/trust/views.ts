// The two sides of a check as compare.ts sees them (CrawlView): the subject's
// crawl read back from what the manager stored for its task (pages whose text
// it stored as versions, validators of every page the task saw), and a check
// crawl assembled from its upload parts, which are never stored as versions.
import type { Repositories } from '../data/repositories.js';
import type { UploadedResult } from '../domain/result-schema.js';
import type { CrawlView, PageView } from './compare.js';

/** Pages of a check crawl kept per page, at most this many (a channel's page cap bounds it anyway). */
const MAX_CHECK_PAGES = 20_000;

/** The subject's crawl of `channel` by task `taskId`, from the store. */
export async function storedCrawlView(
  repos: Repositories,
  channel: string,
  t: { id: string; issuedAt: number; holder: string; status: CrawlView['status']; receivedAt: number; interSiteUrls: readonly string[] },
): Promise<CrawlView> {
  const all = await repos.pages.latest(channel);
  const latest = all.filter((p) => p.latest.lastTask === t.id);
  const validators = latest.map((p) => ({ url: p.url, digest: p.latest.digest }));
  const wanted = latest.filter((p) => p.latest.version > 0).map((p) => ({ url: p.url, version: p.latest.version }));
  const versions = (await repos.pages.versionsWithText(channel, wanted)).filter((v) => v.taskId === t.id);
  const pages: PageView[] = versions.map((v) => ({ url: v.url, digest: v.digest, text: v.text, ...(v.title !== undefined ? { title: v.title } : {}), bytes: v.bytes, noindex: v.noindex, fetchedAt: v.fetchedAt }));
  // The pages the manager knows of the channel (what an incremental crawl could reach: compare.ts's `known`).
  const known = all.map((p) => p.url);
  return { volunteer: t.holder, taskId: t.id, status: t.status, issuedAt: t.issuedAt, receivedAt: t.receivedAt, pages, validators, interSiteUrls: [...t.interSiteUrls], known };
}

/**
 * The stored crawl of `channel` that can stand as a third opinion on coverage:
 * of the tasks whose pages are the channel's latest (seen since `since`, not
 * marked unverified), the one with the most such pages whose holder is not
 * `exclude`d and is `eligible` (in good standing). Null when there is none.
 */
export async function storedThirdCrawl(repos: Repositories, channel: string, o: { since: number; exclude: readonly string[]; eligible: (volunteer: string) => boolean }): Promise<CrawlView | null> {
  const pagesOf = new Map<string, number>();
  for (const { latest } of await repos.pages.latest(channel)) {
    if (latest.lastSeen < o.since || latest.unverified === true) continue;
    pagesOf.set(latest.lastTask, (pagesOf.get(latest.lastTask) ?? 0) + 1);
  }
  for (const [id] of [...pagesOf].sort((x, y) => y[1] - x[1] || x[0].localeCompare(y[0]))) {
    const t = await repos.tasks.finished(id);
    if (t === undefined || t.state !== 'done' || t.holder === undefined || o.exclude.includes(t.holder) || !o.eligible(t.holder)) continue;
    return storedCrawlView(repos, channel, { id, issuedAt: t.issuedAt, holder: t.holder, status: 'completed', receivedAt: t.finishedAt ?? t.issuedAt, interSiteUrls: [] });
  }
  return null;
}

/** Upload parts of a check crawl, merged as they arrive. */
export class CheckCrawl {
  private readonly pages = new Map<string, PageView>();
  private readonly validators = new Map<string, number>();
  private readonly inter = new Set<string>();
  private readonly parts = new Set<number>();
  status: CrawlView['status'] = 'failed';

  /** No part added yet. */
  get empty(): boolean {
    return this.parts.size === 0;
  }

  /** Adds one part; false when it was already added (a retried upload). */
  add(r: UploadedResult): boolean {
    if (this.parts.has(r.part)) return false;
    this.parts.add(r.part);
    for (const p of r.pages) {
      if (this.pages.size >= MAX_CHECK_PAGES) break;
      this.pages.set(p.url, { url: p.url, digest: p.digest, text: p.text, ...(p.title !== undefined ? { title: p.title } : {}), bytes: p.bytes, noindex: p.noindex, fetchedAt: p.fetchedAt });
      this.validators.set(p.url, p.digest);
    }
    for (const v of r.validators) if (this.validators.size < MAX_CHECK_PAGES) this.validators.set(v.url, v.digest);
    for (const u of r.interSiteUrls) this.inter.add(u);
    if (r.final) this.status = r.status;
    return true;
  }

  view(volunteer: string, taskId: string, issuedAt: number, receivedAt: number): CrawlView {
    return {
      volunteer,
      taskId,
      status: this.status,
      issuedAt,
      receivedAt,
      pages: [...this.pages.values()],
      validators: [...this.validators].map(([url, digest]) => ({ url, digest })),
      interSiteUrls: [...this.inter],
    };
  }
}
