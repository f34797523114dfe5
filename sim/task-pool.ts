// The simulator's tasks: a recycled pool of typed arrays. A slot's generation
// counter changes whenever the slot is released or its task leaves a crawler,
// so a completion event scheduled for an earlier incarnation is recognised as
// stale (engine.ts compares the event's generation with the slot's).

export const ST_FREE = 0;
export const ST_QUEUED = 1;
export const ST_RUNNING = 2;

export class TaskPool {
  private cap: number;
  /** The channel (host) the task recrawls. */
  channel: Int32Array;
  /** The crawler holding it (queued or running). */
  crawler: Int32Array;
  state: Uint8Array;
  gen: Int32Array;
  /** Cancelled when still queued after this time (its channel's interval at submission). */
  deadline: Float64Array;
  /** Download time (minutes) and host–crawler RTT (ms) of a running task. */
  download: Float64Array;
  rtt: Float64Array;
  /** When the task started on its current crawler (minutes). */
  started: Float64Array;
  private freeList: Int32Array;
  private freeTop = 0;
  private used = 0;
  /** Tasks allocated and not yet released. */
  live = 0;

  constructor(capacity = 1 << 15) {
    this.cap = capacity;
    this.channel = new Int32Array(capacity);
    this.crawler = new Int32Array(capacity);
    this.state = new Uint8Array(capacity);
    this.gen = new Int32Array(capacity);
    this.deadline = new Float64Array(capacity);
    this.download = new Float64Array(capacity);
    this.rtt = new Float64Array(capacity);
    this.started = new Float64Array(capacity);
    this.freeList = new Int32Array(capacity);
  }

  private grow(): void {
    const n = this.cap * 2;
    const g32 = (a: Int32Array) => {
      const b = new Int32Array(n);
      b.set(a);
      return b;
    };
    const g64 = (a: Float64Array) => {
      const b = new Float64Array(n);
      b.set(a);
      return b;
    };
    this.channel = g32(this.channel);
    this.crawler = g32(this.crawler);
    this.gen = g32(this.gen);
    this.freeList = g32(this.freeList);
    const s = new Uint8Array(n);
    s.set(this.state);
    this.state = s;
    this.deadline = g64(this.deadline);
    this.download = g64(this.download);
    this.rtt = g64(this.rtt);
    this.started = g64(this.started);
    this.cap = n;
  }

  /** A free slot for a new task of `channel` due by `deadline`. */
  alloc(channel: number, deadline: number): number {
    let s: number;
    if (this.freeTop > 0) s = this.freeList[--this.freeTop]!;
    else {
      if (this.used === this.cap) this.grow();
      s = this.used++;
    }
    this.channel[s] = channel;
    this.deadline[s] = deadline;
    this.live++;
    return s;
  }

  /** Invalidates events scheduled for the task's current incarnation. */
  bump(s: number): void {
    this.gen[s] = (this.gen[s]! + 1) | 0;
  }

  release(s: number): void {
    this.state[s] = ST_FREE;
    this.live--;
    this.bump(s);
    this.freeList[this.freeTop++] = s;
  }
}
