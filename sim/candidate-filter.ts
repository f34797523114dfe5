// The candidate pass shared by the manager's choice and a full crawler's
// forward: of the crawlers a search (or a known-peer scan) wrote out, only
// those that can rank among the placement order's first k get their loads
// read and join the CandidateSet. It stands apart from the router because
// both routing.ts and forwarding.ts run it, on their own sets.
import { candidateScore, type CandidateSet, type PlacementOptions } from '../src/dht/placement.js';
import type { CrawlerView } from './crawler-view.js';
import { keepLeast, kthSmallest } from './spatial.js';

export class CandidateFilter {
  /** Scratch: the k nearest RTTs (when the caller did not keep them), and the k best scores. */
  private readonly kNearestRtt: Float64Array;
  private readonly topScores: Float64Array;

  constructor(
    private readonly policy: PlacementOptions,
    private readonly crawlers: CrawlerView,
  ) {
    this.kNearestRtt = new Float64Array(Math.max(policy.maxAttempts, policy.forwardFanout));
    this.topScores = new Float64Array(Math.max(policy.maxAttempts, policy.forwardFanout));
  }


  /**
   * Adds to `set`, with their loads, those of the crawlers ids[0 .. n) (RTTs
   * in rtt) that can be among the first k of the placement order: one of the
   * k nearest (the order after the crawlers with room within the spill
   * bound), or one with room within that bound that scores better than the
   * k-th best such so far (a score is never below the RTT); a full crawler
   * beyond the k-th nearest is left out (the k nearest rank before it). With
   * roomOnly (the last forwarding hop) only crawlers with room, by score. Reading
   * the loads of just these changes no ranking. (The others' expired queued
   * tasks are then purged later, when the crawler is next touched, which can
   * shift later decisions a little: quick rec ICR 80 283 tasks, 81 071 when
   * every candidate was purged.)
   */
  add(set: CandidateSet<number>, ids: Int32Array, rtt: Float64Array, n: number, k: number, roomOnly: boolean, t: number, known?: { nearest: number; kth: number }): void {
    let nearest = Infinity;
    let kthNearest: number;
    if (known !== undefined) {
      // The search kept both as it wrote the candidates out (the same values).
      nearest = known.nearest;
      kthNearest = known.kth;
    } else {
      for (let i = 0; i < n; i++) if (rtt[i]! < nearest) nearest = rtt[i]!;
      kthNearest = roomOnly ? -Infinity : kthSmallest(rtt, n, k, this.kNearestRtt);
    }
    const spill = roomOnly ? Infinity : this.policy.spill * nearest;
    const queueSpill = roomOnly ? Infinity : Math.min(this.policy.spill, this.policy.queueSpill) * nearest;
    const top = this.topScores;
    let tops = 0;
    const cr = this.crawlers;
    const running = cr.running;
    const qLen = cr.qLen;
    const threads = cr.threads;
    const queue = cr.queue;
    for (let i = 0; i < n; i++) {
      const r = rtt[i]!;
      if (r > kthNearest && (r > spill || (tops === k && r >= top[k - 1]!))) continue;
      const c = ids[i]!;
      if (qLen[c] === queue) cr.purge(c, t);
      // A full crawler beyond the k-th nearest never ranks among the first k:
      // the k nearest (each with room within the bound, or nearer) come first.
      if (running[c] === threads && qLen[c] === queue && (roomOnly || r > kthNearest)) continue;
      set.add(c, r, running[c]!, qLen[c]!, threads - running[c]! + (queue - qLen[c]!));
      const j = set.n - 1;
      if (r > spill || !set.room[j] || (set.queued[j] === 1 && r > queueSpill)) continue;
      // The k best scores of the crawlers with room within the spill bound (queueSpill for one with tasks queued), ascending.
      tops = keepLeast(top, tops, k, candidateScore(set, j, this.policy));
    }
  }
}
