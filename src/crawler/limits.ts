// Limits of a task thread and their defaults (see docs/crawler.md).

export interface CrawlLimits {
  /** Longest URL followed (spider-trap guard). */
  maxUrlLength: number;
  /** Redirect hops followed per URL. */
  maxRedirects: number;
  /** Body bytes on the wire. */
  maxBodyBytes: number;
  /** Body bytes after decompression. */
  maxDecodedBytes: number;
  /** robots.txt bytes parsed (RFC 9309: at least 500 KiB). */
  maxRobotsBytes: number;
  /** Cap on a robots.txt Crawl-delay. */
  maxCrawlDelayMs: number;
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  /** Idle time between body chunks. */
  bodyTimeoutMs: number;
  /** Whole request, headers to last byte. */
  requestTimeoutMs: number;
  /** Links taken from one page. */
  maxLinksPerPage: number;
  /** Inter-site URLs reported per task. */
  maxInterSiteUrls: number;
  /** Text characters uploaded per page. */
  maxTextChars: number;
  /** URLtodo entries kept in memory before spilling to disk. */
  todoMemory: number;
  /** Pages per uploaded result part. */
  pagesPerPart: number;
}

export const DEFAULT_LIMITS: CrawlLimits = {
  maxUrlLength: 2048,
  maxRedirects: 5,
  maxBodyBytes: 2 * 1024 * 1024,
  maxDecodedBytes: 8 * 1024 * 1024,
  maxRobotsBytes: 500 * 1024,
  maxCrawlDelayMs: 10_000,
  connectTimeoutMs: 10_000,
  headersTimeoutMs: 15_000,
  bodyTimeoutMs: 15_000,
  requestTimeoutMs: 60_000,
  maxLinksPerPage: 5000,
  maxInterSiteUrls: 10_000,
  maxTextChars: 200_000,
  todoMemory: 1000,
  pagesPerPart: 50,
};

export const USER_AGENT = 'volcrawl/0.1 (+https://github.com/volcrawl/volcrawl; volunteer web crawler)';

/** The User-Agent naming the operator's contact page instead of the project's (the robots.txt token stays 'volcrawl'). */
export function userAgentWithContact(contactUrl: string): string {
  return `volcrawl/0.1 (+${contactUrl}; volunteer web crawler)`;
}
/** The product token matched against robots.txt User-agent lines. */
export const ROBOTS_TOKEN = 'volcrawl';
