// A late intro: the crawl a newcomer's intro check compares when its drawn
// crawl with text has not come within introLateTasks tasks (intro.ts's
// introLate). Session 10: a forger that drew only 2 crawls with text in 720 s
// never reached its intro, drawn at its 3rd or 4th, and its forged pages from
// those 2 crawls stayed current to the end (session 11: two forgers with 3 and
// 4 tasks in 600 s, 1 forged page current). Its text-less crawls give a check
// nothing to compare; its newest crawl that stored text does — the pages of it
// still current (what a check crawl of that channel now finds with the same
// body digest must carry the same text: compare.ts's contradiction).
import type { Repositories } from '../data/repositories.js';
import type { Channel } from '../domain/channel.js';
import type { CrawlView, PageView } from './compare.js';

/**
 * The newest crawl with text of `volunteer` whose pages are still current, as
 * the subject of a late intro check, with its channel; null when none is left.
 * Its view holds the current versions that crawl stored (later text-less crawls
 * of the same pages do not change them) and judges text alone: its `known`
 * pages are those, so coverage cannot count against it (what its later crawls
 * saw is not this crawl's). Dated from that crawl: the longer gap makes
 * compare.ts expect more changes, never fewer.
 */
export async function newestTextCrawl(repos: Repositories, volunteer: string): Promise<{ ch: Channel; subject: CrawlView } | null> {
  const works = (await repos.volunteers.works(volunteer)).sort((a, b) => b.work.at - a.work.at);
  for (const { channel, work } of works) {
    const [t, ch] = await Promise.all([repos.tasks.finished(work.taskId), repos.channels.get(channel)]);
    if (t === undefined || ch === undefined || t.holder !== volunteer) continue;
    const current = (await repos.pages.latest(channel)).filter((p) => p.latest.version > 0);
    const versions = (await repos.pages.versionsWithText(channel, current.map((p) => ({ url: p.url, version: p.latest.version })))).filter((v) => v.taskId === t.id);
    if (versions.length === 0) continue;
    const pages: PageView[] = versions.map((v) => ({ url: v.url, digest: v.digest, text: v.text, ...(v.title !== undefined ? { title: v.title } : {}), bytes: v.bytes, noindex: v.noindex, fetchedAt: v.fetchedAt }));
    const validators = pages.map((p) => ({ url: p.url, digest: p.digest }));
    const subject: CrawlView = { volunteer, taskId: t.id, status: 'completed', issuedAt: t.issuedAt, receivedAt: work.at, pages, validators, interSiteUrls: [], known: pages.map((p) => p.url) };
    return { ch, subject };
  }
  return null;
}
