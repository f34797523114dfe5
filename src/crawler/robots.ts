// robots.txt (RFC 9309) through robots-parser: fetched first on the task's
// connection. 2xx: parsed (first maxRobotsBytes only). 4xx (except 429) or
// too many redirects: no restrictions. 5xx, 429 or unreachable: the whole
// site is disallowed for now and the task ends "robots-unavailable".
import { createRequire } from 'node:module';
import type { Downloader } from './downloader.js';
import type { CrawlLimits } from './limits.js';

interface Robot {
  isAllowed(url: string, ua?: string): boolean | undefined;
  getCrawlDelay(ua?: string): number | undefined;
}
// robots-parser is CommonJS and its typings do not expose a callable default under NodeNext.
const robotsParser = createRequire(import.meta.url)('robots-parser') as (url: string, contents: string) => Robot;

export interface RobotsRules {
  kind: 'parsed' | 'allow-all' | 'unavailable';
  /** HTTP status or failure outcome, for the report. */
  detail: string;
  isAllowed(url: string): boolean;
  /** Crawl-delay in ms for our token, uncapped; 0 when absent. */
  crawlDelayMs: number;
}

const allowAll = (detail: string): RobotsRules => ({ kind: 'allow-all', detail, isAllowed: () => true, crawlDelayMs: 0 });
const unavailable = (detail: string): RobotsRules => ({ kind: 'unavailable', detail, isAllowed: () => false, crawlDelayMs: 0 });

/** Builds rules from robots.txt text (exposed for tests and the crawl command). */
export function parseRobots(robotsUrl: string, text: string, token: string): RobotsRules {
  const robot = robotsParser(robotsUrl, text);
  const delay = robot.getCrawlDelay(token);
  return {
    kind: 'parsed',
    detail: '200',
    isAllowed: (url) => robot.isAllowed(url, token) !== false,
    crawlDelayMs: typeof delay === 'number' && Number.isFinite(delay) && delay > 0 ? delay * 1000 : 0,
  };
}

export async function fetchRobots(dl: Downloader, origin: string, token: string, limits: CrawlLimits): Promise<RobotsRules> {
  let url = new URL('/robots.txt', origin);
  for (let hop = 0; hop <= limits.maxRedirects; hop++) {
    const r = await dl.get(url, { truncate: true, maxBytes: limits.maxRobotsBytes });
    if (!r.ok) return unavailable(r.outcome);
    const s = r.status;
    if (s >= 300 && s < 400 && s !== 304) {
      const loc = r.headers['location'];
      let next: URL | null;
      try {
        next = loc ? new URL(loc, url) : null;
      } catch {
        next = null;
      }
      // Our single connection serves one origin; a cross-origin robots.txt redirect is treated as "no robots.txt" (RFC 9309 allows treating redirect failures as unavailable/4xx).
      if (!next || next.origin !== url.origin) return allowAll(`redirect ${s} off-origin`);
      url = next;
      continue;
    }
    if (s >= 200 && s < 300) {
      if (r.skipped) return r.skipped === 'too-large' || r.skipped === 'decompressed-too-large' ? unavailable(`robots.txt ${r.skipped}`) : allowAll(`robots.txt ${r.skipped}`);
      const text = (r.body ?? Buffer.alloc(0)).subarray(0, limits.maxRobotsBytes).toString('utf8');
      const rules = parseRobots(url.href, text, token);
      rules.detail = r.truncated ? `${s} (truncated to ${limits.maxRobotsBytes} bytes)` : String(s);
      return rules;
    }
    if (s === 429 || s >= 500) return unavailable(String(s));
    if (s >= 400) return allowAll(String(s));
    return allowAll(String(s));
  }
  return allowAll('too many redirects');
}
