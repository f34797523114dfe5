// Yardsticks for the load imbalance figure of #19, (max − mean) / mean pages
// per crawler. Crawlers differ in bandwidth (512–2048 kbit/s) and in how long
// they are online (churn), so even a placement that kept every thread busy
// in proportion to what it can fetch would not give every crawler the same
// pages. Two figures say how much of the imbalance is the world's:
//
// - `ideal`: the imbalance of pages exactly proportional to each crawler's
//   capacity — its online minutes × the pages per minute its threads fetch
//   at its bandwidth (a channel of the world's mean page size, plus the
//   politeness wait; RTT left out: it depends on the placement). A placement
//   cannot go below it without leaving fast crawlers idle.
// - `perCapacity`: the imbalance of pages ÷ capacity over the crawlers online
//   at least `minOnlineShare` of the run (a crawler online for minutes gives
//   a ratio of noise): how unevenly the placement used what was there.
//
// Pure: plain arrays in, numbers out.

export interface CapacityWorld {
  /** Per crawler: bandwidth, kbit/s. */
  bandwidthKbps: ArrayLike<number>;
  threads: number;
  /** Politeness wait per page, ms. */
  waitMs: number;
  /** The world's mean page size, bytes (total bytes ÷ total pages). */
  meanPageBytes: number;
}

export interface ImbalanceYardsticks {
  ideal: number;
  perCapacity: number;
}

/** Pages a crawler can fetch per online minute with every thread busy. */
export function pagesPerMinute(kbps: number, w: CapacityWorld): number {
  const kbpsPerThread = kbps / w.threads;
  const msPerPage = w.waitMs + ((w.meanPageBytes * 8) / 1000 / kbpsPerThread) * 1000;
  return (w.threads * 60_000) / msPerPage;
}

/** (max − mean) / mean of xs over the indices `use` keeps (0 when the mean is 0). */
export function imbalanceOf(xs: ArrayLike<number>, use: (i: number) => boolean = () => true): number {
  let sum = 0;
  let max = 0;
  let n = 0;
  for (let i = 0; i < xs.length; i++) {
    if (!use(i)) continue;
    sum += xs[i]!;
    n++;
    if (xs[i]! > max) max = xs[i]!;
  }
  const mean = n > 0 ? sum / n : 0;
  return mean > 0 ? (max - mean) / mean : 0;
}

/**
 * The two yardsticks for pages per crawler `pages`, given each crawler's
 * online minutes over a run of `runMinutes`.
 */
export function imbalanceYardsticks(pages: ArrayLike<number>, onlineMinutes: ArrayLike<number>, runMinutes: number, w: CapacityWorld, minOnlineShare = 0.25): ImbalanceYardsticks {
  const n = pages.length;
  const capacity = new Float64Array(n);
  for (let c = 0; c < n; c++) capacity[c] = onlineMinutes[c]! * pagesPerMinute(w.bandwidthKbps[c]!, w);
  const ratio = new Float64Array(n);
  for (let c = 0; c < n; c++) ratio[c] = capacity[c]! > 0 ? pages[c]! / capacity[c]! : 0;
  const long = (c: number) => onlineMinutes[c]! >= minOnlineShare * runMinutes;
  return { ideal: imbalanceOf(capacity), perCapacity: imbalanceOf(ratio, long) };
}

/** Each crawler's online minutes, from its joins and leaves. */
export class OnlineMinutes {
  readonly minutes: Float64Array;
  private readonly since: Float64Array;

  constructor(crawlers: number) {
    this.minutes = new Float64Array(crawlers);
    this.since = new Float64Array(crawlers).fill(NaN);
  }

  join(c: number, t: number): void {
    if (Number.isNaN(this.since[c]!)) this.since[c] = t;
  }

  leave(c: number, t: number): void {
    if (Number.isNaN(this.since[c]!)) return;
    this.minutes[c] = this.minutes[c]! + (t - this.since[c]!);
    this.since[c] = NaN;
  }

  /** The run ends at t: every crawler still online is counted up to t. */
  close(t: number): void {
    for (let c = 0; c < this.since.length; c++) this.leave(c, t);
  }
}
