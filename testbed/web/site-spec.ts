// What a test web is made of: the sites to generate (size, link structure,
// robots.txt, validators, change rate, the bad and archive cases to serve) and
// the web's options. Apart so that tests and benchmarks can describe a web
// without reading the server (testweb.ts re-exports these).
import type { TestClock } from './change-schedule.js';

export type RobotsSpec =
  | { status: number; text?: string; delayMs?: number }
  | 'none' // 404
  | 'unreachable'; // connection dropped

export interface SiteSpec {
  name: string;
  /** Number of pages in the generated tree (page 0 is '/'). */
  pages: number;
  /** Children per page (default 5). Page i's children are fanout*i+1 .. fanout*i+fanout. */
  fanout?: number;
  /** Approximate page size in bytes (default 2000). */
  pageBytes?: number;
  /** robots.txt (default: 200 with "Disallow: /private/"). */
  robots?: RobotsSpec;
  /** Mean page changes per page per virtual day (0 = static, default). */
  changesPerDay?: number;
  /** Other sites (by name) each page links to: the inter-site URLs. */
  linksTo?: string[];
  /** Serve the bad-response paths (/bad/...) and link them from '/'. */
  bad?: boolean;
  /** Send ETag (default true) and Last-Modified (default true). */
  etag?: boolean;
  lastModified?: boolean;
  /** gzip pages when the client accepts it (default false). */
  gzip?: boolean;
  /** Delay for /bad/slow-* endpoints, ms (default 3000). */
  slowMs?: number;
  /** Host name in this site's URLs (default: the web's host), e.g. "localhost" for a site reached through DNS. */
  host?: string;
  /** Loopback address this site listens on (default 127.0.0.1), e.g. 127.0.0.2 for a second address. */
  bindHost?: string;
  /** Serve the archive cases (/warc/...: repeated and Latin-1 headers with an
   * odd reason phrase, a chunked body, a redirect) and link them from '/'. */
  archiveCases?: boolean;
  /** Keep the last body sent for each path (`site.sentBodies`), as it went on the wire. */
  recordBodies?: boolean;
}

export interface TestWebOptions {
  seed?: number;
  /** Virtual clock start, epoch ms (default 2026-01-01). */
  epoch?: number;
  /** A clock to share (e.g. with a simulation); its current time is the epoch. */
  clock?: TestClock;
  host?: string;
}

