// The crawlers' state in the simulator: online or not, the tasks running on
// their threads and waiting in their queues. Plain typed arrays (the routing
// reads them directly through CrawlerView, sim/routing.ts).
//
// A crawler runs at most `threads` tasks and queues at most `queue` more (the
// paper's 5 and 5). A queued task still waiting after its deadline is
// cancelled (checked lazily, recorded at the deadline). In the paper's reading
// of a full system (`hold`, sim/model.ts) a task no crawler had room for waits
// at one beyond the queue's slots, in an overflow list that refills the queue
// as it drains; the routing never sees the overflow (to it the crawler is full).
import { ST_QUEUED, ST_RUNNING, type TaskPool } from './task-pool.js';

export interface CrawlerHooks {
  /** Task s starts on crawler c at t (the engine schedules its completion). */
  start(s: number, c: number, t: number): void;
  /** Queued task s passed its deadline without starting. */
  cancel(s: number, deadline: number): void;
}

export class Crawlers {
  readonly online: Uint8Array;
  readonly running: Uint8Array;
  readonly qLen: Uint8Array;
  readonly runSlots: Int32Array;
  readonly qSlots: Int32Array;
  /** Earliest deadline among c's queued and held tasks (Infinity when none): purge is O(1) until then. */
  private readonly qMinDeadline: Float64Array;
  /** Tasks held beyond the queue's slots, per crawler (only in `hold` mode). */
  private readonly overflow: (number[] | undefined)[];
  onlineCount = 0;
  /** Tasks held beyond the queue's slots, all crawlers. */
  heldCount = 0;
  maxRunningSeen = 0;
  maxQueueSeen = 0;

  constructor(
    readonly count: number,
    readonly threads: number,
    readonly queue: number,
    private readonly pool: TaskPool,
    private readonly hooks: CrawlerHooks,
  ) {
    this.online = new Uint8Array(count);
    this.running = new Uint8Array(count);
    this.qLen = new Uint8Array(count);
    this.runSlots = new Int32Array(count * threads);
    this.qSlots = new Int32Array(count * queue);
    this.qMinDeadline = new Float64Array(count).fill(Infinity);
    this.overflow = new Array<number[] | undefined>(count);
  }

  /** Drops expired tasks from crawler c's queue and overflow (cancelled at their deadline). */
  purge(c: number, t: number): void {
    if (this.qMinDeadline[c]! >= t) return;
    const pool = this.pool;
    const n = this.qLen[c]!;
    const base = c * this.queue;
    let w = 0;
    let minD = Infinity;
    for (let i = 0; i < n; i++) {
      const s = this.qSlots[base + i]!;
      const d = pool.deadline[s]!;
      if (d < t) this.hooks.cancel(s, d);
      else {
        this.qSlots[base + w++] = s;
        if (d < minD) minD = d;
      }
    }
    this.qLen[c] = w;
    const held = this.overflow[c];
    if (held !== undefined && held.length > 0) {
      let k = 0;
      for (const s of held) {
        const d = pool.deadline[s]!;
        if (d < t) {
          this.hooks.cancel(s, d);
          this.heldCount--;
        } else {
          held[k++] = s;
          if (d < minD) minD = d;
        }
      }
      held.length = k;
      this.refill(c);
    }
    this.qMinDeadline[c] = minD;
  }

  /** Moves held tasks into free queue slots, oldest first. */
  private refill(c: number): void {
    const held = this.overflow[c];
    if (held === undefined) return;
    let n = this.qLen[c]!;
    let taken = 0;
    while (n < this.queue && taken < held.length) this.qSlots[c * this.queue + n++] = held[taken++]!;
    if (taken > 0) {
      held.splice(0, taken);
      this.heldCount -= taken;
      this.qLen[c] = n;
    }
  }

  private enqueue(s: number, c: number): void {
    const n = this.qLen[c]!;
    this.qSlots[c * this.queue + n] = s;
    this.qLen[c] = n + 1;
    if (n + 1 > this.maxQueueSeen) this.maxQueueSeen = n + 1;
    this.markQueued(s, c);
  }

  private markQueued(s: number, c: number): void {
    const pool = this.pool;
    pool.state[s] = ST_QUEUED;
    pool.crawler[s] = c;
    if (pool.deadline[s]! < this.qMinDeadline[c]!) this.qMinDeadline[c] = pool.deadline[s]!;
  }

  /** Starts task s on crawler c, or queues it there; false when c is full. */
  accept(s: number, c: number, t: number): boolean {
    if (this.running[c]! < this.threads) {
      this.run(s, c, t);
      return true;
    }
    this.purge(c, t);
    if (this.qLen[c]! < this.queue) {
      this.enqueue(s, c);
      return true;
    }
    return false;
  }

  /** Holds task s at crawler c beyond its queue's slots (the paper's forward-never-reject reading). */
  hold(s: number, c: number, t: number): void {
    if (this.accept(s, c, t)) return;
    let held = this.overflow[c];
    if (held === undefined) held = this.overflow[c] = [];
    held.push(s);
    this.heldCount++;
    this.markQueued(s, c);
  }

  private run(s: number, c: number, t: number): void {
    const pool = this.pool;
    pool.state[s] = ST_RUNNING;
    pool.crawler[s] = c;
    pool.started[s] = t;
    const r = this.running[c]!;
    this.runSlots[c * this.threads + r] = s;
    this.running[c] = r + 1;
    if (r + 1 > this.maxRunningSeen) this.maxRunningSeen = r + 1;
    this.hooks.start(s, c, t);
  }

  /** Task s finished on crawler c at t: frees its thread and starts the next queued task. */
  finish(s: number, c: number, t: number): void {
    const base = c * this.threads;
    const n = this.running[c]!;
    for (let i = 0; i < n; i++) {
      if (this.runSlots[base + i] === s) {
        this.runSlots[base + i] = this.runSlots[base + n - 1]!;
        break;
      }
    }
    this.running[c] = n - 1;
    this.purge(c, t);
    if (this.qLen[c]! > 0) {
      const qb = c * this.queue;
      const next = this.qSlots[qb]!;
      this.qSlots.copyWithin(qb, qb + 1, qb + this.qLen[c]!);
      this.qLen[c] = this.qLen[c]! - 1;
      this.refill(c);
      this.run(next, c, t);
    }
  }

  join(c: number): void {
    this.online[c] = 1;
    this.onlineCount++;
  }

  /** Crawler c leaves at t: returns its running, queued and held tasks (after
   * cancelling the expired ones) in `out`, and empties it. */
  leave(c: number, t: number, out: number[]): void {
    this.online[c] = 0;
    this.onlineCount--;
    out.length = 0;
    for (let i = 0; i < this.running[c]!; i++) out.push(this.runSlots[c * this.threads + i]!);
    this.purge(c, t);
    for (let i = 0; i < this.qLen[c]!; i++) out.push(this.qSlots[c * this.queue + i]!);
    const held = this.overflow[c];
    if (held !== undefined) {
      for (const s of held) out.push(s);
      this.heldCount -= held.length;
      held.length = 0;
    }
    this.running[c] = 0;
    this.qLen[c] = 0;
    this.qMinDeadline[c] = Infinity;
  }

  /** Running and queued (incl. held) tasks over the online crawlers, after purging at t. */
  load(t: number): { running: number; queued: number } {
    let queued = 0;
    let running = 0;
    for (let c = 0; c < this.count; c++) {
      if (!this.online[c]) continue;
      this.purge(c, t);
      queued += this.qLen[c]!;
      running += this.running[c]!;
    }
    return { running, queued: queued + this.heldCount };
  }
}
