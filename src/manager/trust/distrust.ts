// A distrusted volunteer's pages stop being current: when it is quarantined or
// outvoted, its versions are marked unverified until a re-crawl replaces them.
import type { PageLatest, PageVersion } from '../domain/records.js';
import type { ServiceCore } from '../services/core.js';

/**
 * Marks the channel's current pages supplied by `peer` (after `since`, or by
 * task `onlyTask`) unverified, and empties the channel's known pages so its
 * next crawl brings every page's text. Returns how many pages were marked.
 */
export async function distrustPages(core: ServiceCore, channel: string, peer: string, since: number | null, onlyTask?: string): Promise<number> {
  const { repos, channelLocks, commit } = core;
  return channelLocks.run(channel, async () => {
    const latest = (await repos.pages.latest(channel)).filter((p) => p.latest.version > 0 && p.latest.unverified !== true);
    const versions = await repos.pages.versionsWithText(channel, latest.map((p) => ({ url: p.url, version: p.latest.version })));
    const bad = new Set(versions.filter((v: PageVersion) => v.crawler === peer && (onlyTask === undefined || v.taskId === onlyTask)).map((v) => v.url));
    const marked: { url: string; latest: PageLatest }[] = latest.filter((p) => bad.has(p.url)).map((p) => ({ url: p.url, latest: { ...p.latest, unverified: true as const } }));
    if (marked.length === 0) return 0;
    const after = since === null ? marked.length : versions.filter((v) => bad.has(v.url) && v.storedAt > since).length;
    await commit.run(() => repos.commit([...marked.map((m) => repos.pages.latestOp(channel, m.url, m.latest)), repos.channels.knownOp(channel, [])]));
    core.log.info({ channel, volunteer: peer, pages: marked.length, sinceLastVerified: after }, 'pages marked unverified');
    return marked.length;
  });
}
