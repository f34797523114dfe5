// A binary min-heap of events on typed arrays: time (Float64) and an int32
// payload. Ties break on insertion order (a sequence number), so a run is
// reproducible regardless of the heap's internal layout.

export class EventQueue {
  private time: Float64Array;
  private seq: Float64Array;
  private data: Int32Array;
  private aux: Int32Array;
  private n = 0;
  private counter = 0;

  constructor(capacity = 1024) {
    this.time = new Float64Array(capacity);
    this.seq = new Float64Array(capacity);
    this.data = new Int32Array(capacity);
    this.aux = new Int32Array(capacity);
  }

  get size(): number {
    return this.n;
  }

  private grow(): void {
    const cap = this.time.length * 2;
    const t = new Float64Array(cap);
    t.set(this.time);
    const s = new Float64Array(cap);
    s.set(this.seq);
    const d = new Int32Array(cap);
    d.set(this.data);
    const a = new Int32Array(cap);
    a.set(this.aux);
    this.time = t;
    this.aux = a;
    this.seq = s;
    this.data = d;
  }

  push(t: number, payload: number, extra = 0): void {
    if (this.n === this.time.length) this.grow();
    const s = this.counter++;
    const time = this.time;
    const seq = this.seq;
    // Sift up: move the hole at the end towards the root past every later parent.
    let i = this.n++;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (precedes(time[p]!, seq[p]!, t, s)) break;
      this.moveSlot(p, i);
      i = p;
    }
    this.fillSlot(i, t, s, payload, extra);
  }

  /** Time of the earliest event (Infinity when empty). */
  peekTime(): number {
    return this.n > 0 ? this.time[0]! : Infinity;
  }

  /** Second payload of the earliest event (read before pop()). */
  peekExtra(): number {
    return this.aux[0]!;
  }

  /** Payload of the earliest event, left in place. */
  peekPayload(): number {
    return this.data[0]!;
  }

  /** Drops every event (the sequence numbers go on: ties still break by insertion). */
  clear(): void {
    this.n = 0;
  }

  /** Payload of the earliest event; call peekTime()/peekExtra() first. */
  pop(): number {
    const time = this.time;
    const seq = this.seq;
    const top = this.data[0]!;
    const last = --this.n;
    if (last > 0) {
      // Sift down: move the hole at the root towards the leaves, each time
      // filling it with the earlier child, until the last event fits there.
      const t = time[last]!;
      const s = seq[last]!;
      const payload = this.data[last]!;
      const extra = this.aux[last]!;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= last) break;
        const r = l + 1;
        const c = r < last && precedes(time[r]!, seq[r]!, time[l]!, seq[l]!) ? r : l;
        if (precedes(t, s, time[c]!, seq[c]!)) break;
        this.moveSlot(c, i);
        i = c;
      }
      this.fillSlot(i, t, s, payload, extra);
    }
    return top;
  }

  private moveSlot(from: number, to: number): void {
    this.time[to] = this.time[from]!;
    this.seq[to] = this.seq[from]!;
    this.data[to] = this.data[from]!;
    this.aux[to] = this.aux[from]!;
  }

  private fillSlot(i: number, t: number, s: number, payload: number, extra: number): void {
    this.time[i] = t;
    this.seq[i] = s;
    this.data[i] = payload;
    this.aux[i] = extra;
  }
}

/** Event order: by time, then by insertion sequence. */
function precedes(t1: number, s1: number, t2: number, s2: number): boolean {
  return t1 < t2 || (t1 === t2 && s1 < s2);
}
