// The frontier of one task: where every URL the crawl meets goes. Inside the
// channel it joins URLtodo (FIFO, spills to disk) unless URLseen, the depth
// limit, the task's filters or robots.txt stop it; outside it becomes an
// inter-site URL for the manager. Apart from the thread so that the routing
// rules of §2.2 read in one place, with their outcomes counted as they fall.
import { DigestSet, sha1_32 } from './hash.js';
import type { CrawlLimits } from './limits.js';
import type { OutcomeLog } from './outcome-log.js';
import type { RobotsRules } from './robots.js';
import { inScope, type Task } from './task.js';
import { UrlSeen } from './urlseen.js';
import { UrlTodo } from './urltodo.js';

export class Frontier {
  readonly seen: UrlSeen;
  readonly todo: UrlTodo;
  /** The channel's robots.txt once fetched; until then nothing is refused by it. */
  robots: RobotsRules | null = null;
  private readonly interSite = new Set<string>();
  private readonly knownInterSite: DigestSet;
  private readonly filters: RegExp[];

  constructor(
    private readonly task: Task,
    private readonly limits: CrawlLimits,
    private readonly log: OutcomeLog,
    tmpDir: string,
  ) {
    this.knownInterSite = new DigestSet(task.interSiteDigests);
    this.filters = task.filters.map((f) => new RegExp(f));
    this.seen = new UrlSeen(Math.max(task.expectedPages, task.known.length, task.seeds.length));
    this.todo = new UrlTodo(limits.todoMemory, tmpDir);
  }

  /** The inter-site URLs found, for the final part of the result. */
  interSiteUrls(): string[] {
    return [...this.interSite];
  }

  /** True when the task has no filters or one of them matches. */
  passesFilters(url: string): boolean {
    if (this.filters.length === 0) return true;
    for (const f of this.filters) if (f.test(url)) return true;
    return false;
  }

  /**
   * Routes a URL: inside the channel → URLtodo (if depth, filters, robots and
   * URLseen allow); outside → an inter-site URL. Seeds and known pages skip
   * the filters.
   */
  consider(url: string, depth: number, trusted: boolean, parsed?: URL): void {
    if (url.length > this.limits.maxUrlLength) {
      this.log.count('url-too-long');
      return;
    }
    let u: URL;
    if (parsed) u = parsed;
    else {
      try {
        u = new URL(url);
      } catch {
        return;
      }
    }
    if (!inScope(u, this.task.scope)) {
      this.reportInterSite(url);
      return;
    }
    if (!this.seen.add(url)) return; // already discovered (one hash for the test and the insert)
    if (depth > this.task.maxDepth) {
      this.log.count('depth-limit');
      return;
    }
    if (!trusted && !this.passesFilters(url)) {
      this.log.count('filtered');
      return;
    }
    if (this.robots && !this.robots.isAllowed(url)) {
      this.log.count('robots-disallowed');
      return;
    }
    this.todo.push({ url, depth });
  }

  /** Keeps a URL outside the channel for the manager, unless it is too long, already kept, over the cap, or one the manager already knows. */
  reportInterSite(url: string): void {
    if (url.length > this.limits.maxUrlLength) {
      this.log.count('url-too-long');
      return;
    }
    if (this.interSite.has(url)) return;
    if (this.interSite.size >= this.limits.maxInterSiteUrls) return;
    if (this.knownInterSite.size > 0 && this.knownInterSite.has(sha1_32(url))) return;
    this.interSite.add(url);
  }
}
