// The crawlers' load as CAF steers on it (src/recrawl/caf.ts: online task threads,
// tasks running on them, tasks queued), summed from the copies of each crawler's
// own report that the manager's peer table keeps (src/dht/peers.ts: coordinate
// info replies, task replies, a crawler's own requests). Pure: the time is an
// argument.
//
// A report is a volunteer's claim, so each is bounded before it is summed: its
// threads count at most `maxThreads` (a bigger report is scaled down whole, so an
// honest big volunteer keeps its utilisation and queue ratios), its running tasks
// at most its threads, its queued tasks at most `maxQueuePerThread` per thread.
// One liar therefore moves the sums by at most maxThreads threads' worth of claims
// (docs/recrawl.md "CAF in the manager" says what that does to the budget).
import type { PeerState } from '../dht/peers.js';
import type { SystemLoad } from '../recrawl/index.js';

export interface CrawlerLoadOptions {
  /** A crawler whose load was last learned longer ago than this counts as offline, ms. */
  staleMs: number;
  /** Threads one crawler counts for at most. */
  maxThreads: number;
  /** Queued tasks one crawler counts for at most, per thread it counts for. */
  maxQueuePerThread: number;
}

/** Three passes of the manager's load survey (network.ts asks every crawler whose copy
 * is older than one minute), and the router's own bound on a coordinate copy
 * (src/dht/router.ts maxStaleMs): a live crawler answers one of three, and one that
 * fails to answer is marked down at once, so only a crawler gone silent waits this long. */
export const DEFAULT_LOAD_STALE_MS = 180_000;

export const DEFAULT_CRAWLER_LOAD: Readonly<CrawlerLoadOptions> = Object.freeze({
  staleMs: DEFAULT_LOAD_STALE_MS,
  // A volunteer runs 5 threads by default (`volunteer-crawler join --threads`, up to 256).
  maxThreads: 64,
  // The crawler's default queue holds one task per thread (5 and 5); two allow a longer one.
  maxQueuePerThread: 2,
});

/** What the aggregate was made of (the log line and the API show it). */
export interface CrawlerLoad {
  /** The sum CAF steers on, or null when no crawler reported within `staleMs`. */
  load: SystemLoad | null;
  /** Crawlers counted, and those left out: their copy too old, or marked down. */
  crawlers: number;
  stale: number;
  /** Crawlers whose report was cut to the bounds. */
  bounded: number;
}

/**
 * One crawler's report {running, queued, free} as threads, running and queued.
 * The wire carries no thread count: `free` is idle threads plus free queue slots
 * (src/crawler/manager.ts), so running + queued + free = threads + queue length
 * whatever the crawler is doing. With tasks both running and queued every thread
 * is busy (the crawler queues only when none is free): threads = running.
 * Otherwise the crawler's default queue of one task per thread gives threads =
 * (running + queued + free) / 2, never below running. (Not `queued > 0` alone: a
 * volunteer still loading its crawler reports its first tasks as queued with none
 * running, src/node/lazy-runner.ts.) A volunteer with a shorter queue than threads
 * is counted with fewer threads (it looks busier), one with a longer queue with
 * more (it looks idler: the demo's 3 threads and 6 queue slots count as 4.5).
 * Volunteers since session 12 report `threads` and are counted by it (never
 * below their running tasks: a draining crawler's running ones still count).
 */
export function threadsOf(l: { running: number; queued: number; free: number; threads?: number }): number {
  if (l.threads !== undefined && Number.isFinite(l.threads) && l.threads >= 0) return Math.max(l.running, l.threads);
  if (l.queued > 0 && l.running > 0) return l.running;
  return Math.max(l.running, (l.running + l.queued + l.free) / 2);
}

/** The sum over the crawlers heard from within `o.staleMs` before `now` (performance.now ms). */
export function aggregateLoad(peers: Iterable<PeerState>, now: number, o: CrawlerLoadOptions = DEFAULT_CRAWLER_LOAD): CrawlerLoad {
  let threads = 0;
  let running = 0;
  let queued = 0;
  let crawlers = 0;
  let stale = 0;
  let bounded = 0;
  for (const p of peers) {
    if (!p.crawler) continue;
    const l = p.load;
    if (p.down || l === undefined || p.loadAt === undefined || !(now - p.loadAt <= o.staleMs)) {
      stale++;
      continue;
    }
    if (![l.running, l.queued, l.free].every((x) => Number.isFinite(x) && x >= 0)) {
      stale++; // the wire schema already refuses these; a copy from elsewhere is not trusted either
      continue;
    }
    let t = threadsOf(l);
    let r = l.running;
    let q = l.queued;
    if (t > o.maxThreads) {
      const f = o.maxThreads / t;
      t = o.maxThreads;
      r *= f;
      q *= f;
      bounded++;
    }
    if (q > o.maxQueuePerThread * t) {
      q = o.maxQueuePerThread * t;
      bounded++;
    }
    threads += t;
    running += Math.min(r, t);
    queued += q;
    crawlers++;
  }
  return { load: crawlers > 0 ? { threads, running, queued } : null, crawlers, stale, bounded };
}
