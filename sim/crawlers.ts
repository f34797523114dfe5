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
//
// A crawler's overflow can hold hundreds of tasks in a saturated region (the
// 10× world), so it is not scanned on every expiry: each overflow keeps its
// tasks in hold order (refilling takes the oldest) and, beside them, a heap by
// deadline that names the expired ones at once. A task leaves the overflow
// lazily: its hold number (`holdSeq`) is cleared, and the list and the heap
// skip entries whose number no longer matches.
import { EventQueue } from './heap.js';
import { ST_QUEUED, ST_RUNNING, type TaskPool } from './task-pool.js';

export interface CrawlerHooks {
  /** Task s starts on crawler c at t (the engine schedules its completion). */
  start(s: number, c: number, t: number): void;
  /** Queued task s passed its deadline without starting. */
  cancel(s: number, deadline: number): void;
}

/** The tasks one crawler holds beyond its queue. */
class Overflow {
  /** Task slots and their hold numbers, in hold order from `head` (entries that left are skipped). */
  slots: number[] = [];
  seqs: number[] = [];
  head = 0;
  /** Tasks still held. */
  live = 0;
  /** The same entries by deadline (payload: the slot; extra: the hold number). */
  readonly byDeadline = new EventQueue(8);

  /** Forgets every entry (none is held any more). */
  reset(): void {
    this.slots.length = 0;
    this.seqs.length = 0;
    this.head = 0;
    this.live = 0;
    this.byDeadline.clear();
  }
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
  private readonly overflow: (Overflow | undefined)[];
  /** Each task slot's current hold number (0: not held); a number is never reused. */
  private holdSeq = new Int32Array(1024);
  private holds = 0;
  /** Scratch: the held tasks one purge cancels (hold number, slot), in pairs. */
  private readonly expired: number[] = [];
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
    this.overflow = new Array<Overflow | undefined>(count);
  }

  /** Drops expired tasks from crawler c's queue and overflow (cancelled at their deadline). */
  purge(c: number, t: number): void {
    // Called for every full candidate of every decision: the test stays small enough to inline.
    if (this.qMinDeadline[c]! < t) this.purgeExpired(c, t);
  }

  private purgeExpired(c: number, t: number): void {
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
    if (held !== undefined && held.live > 0) {
      // The expired held tasks, cancelled in hold order (as a scan of the list would).
      const q = held.byDeadline;
      const seqOf = this.holdSeq;
      const ex = this.expired;
      ex.length = 0;
      while (q.size > 0 && q.peekTime() < t) {
        const seq = q.peekExtra();
        const s = q.pop();
        if (seqOf[s] === seq) ex.push(seq, s);
      }
      if (ex.length > 2) sortPairs(ex);
      for (let i = 0; i < ex.length; i += 2) {
        const s = ex[i + 1]!;
        seqOf[s] = 0;
        held.live--;
        this.heldCount--;
        this.hooks.cancel(s, pool.deadline[s]!);
      }
      // The earliest deadline still held: the heap's first entry that is still held.
      while (q.size > 0 && seqOf[q.peekPayload()] !== q.peekExtra()) q.pop();
      if (q.size > 0 && q.peekTime() < minD) minD = q.peekTime();
      this.refill(c);
    }
    this.qMinDeadline[c] = minD;
  }

  /** Moves held tasks into free queue slots, oldest first. */
  private refill(c: number): void {
    const held = this.overflow[c];
    if (held === undefined) return;
    if (held.live === 0) {
      held.reset();
      return;
    }
    let n = this.qLen[c]!;
    if (n >= this.queue) return;
    const seqOf = this.holdSeq;
    const slots = held.slots;
    const seqs = held.seqs;
    let i = held.head;
    let taken = 0;
    while (n < this.queue && i < slots.length) {
      const s = slots[i]!;
      if (seqOf[s] === seqs[i]) {
        seqOf[s] = 0;
        this.qSlots[c * this.queue + n++] = s;
        taken++;
      }
      i++;
    }
    held.head = i;
    if (taken > 0) {
      held.live -= taken;
      this.heldCount -= taken;
      this.qLen[c] = n;
    }
    if (held.live === 0) held.reset();
    else if (held.head > 64 && held.head * 2 > slots.length) {
      slots.splice(0, held.head);
      seqs.splice(0, held.head);
      held.head = 0;
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
    if (held === undefined) held = this.overflow[c] = new Overflow();
    if (s >= this.holdSeq.length) {
      const grown = new Int32Array(Math.max(s + 1, this.holdSeq.length * 2));
      grown.set(this.holdSeq);
      this.holdSeq = grown;
    }
    const seq = ++this.holds;
    this.holdSeq[s] = seq;
    held.slots.push(s);
    held.seqs.push(seq);
    held.byDeadline.push(this.pool.deadline[s]!, s, seq);
    held.live++;
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
    if (held !== undefined && held.live > 0) {
      for (let i = held.head; i < held.slots.length; i++) {
        const s = held.slots[i]!;
        if (this.holdSeq[s] !== held.seqs[i]) continue;
        this.holdSeq[s] = 0;
        out.push(s);
      }
      this.heldCount -= held.live;
      held.reset();
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

/** Sorts (key, value) pairs laid out flat in `a` by key, ascending (insertion sort: a purge cancels a few). */
function sortPairs(a: number[]): void {
  for (let i = 2; i < a.length; i += 2) {
    const k = a[i]!;
    const v = a[i + 1]!;
    let j = i - 2;
    while (j >= 0 && a[j]! > k) {
      a[j + 2] = a[j]!;
      a[j + 3] = a[j + 1]!;
      j -= 2;
    }
    a[j + 2] = k;
    a[j + 3] = v;
  }
}
