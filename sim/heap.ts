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
    let i = this.n++;
    const s = this.counter++;
    const time = this.time;
    const seq = this.seq;
    const data = this.data;
    const aux = this.aux;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const tp = time[p]!;
      if (tp < t || (tp === t && seq[p]! < s)) break;
      time[i] = tp;
      seq[i] = seq[p]!;
      data[i] = data[p]!;
      aux[i] = aux[p]!;
      i = p;
    }
    time[i] = t;
    seq[i] = s;
    data[i] = payload;
    aux[i] = extra;
  }

  /** Time of the earliest event (Infinity when empty). */
  peekTime(): number {
    return this.n > 0 ? this.time[0]! : Infinity;
  }

  /** Second payload of the earliest event (read before pop()). */
  peekExtra(): number {
    return this.aux[0]!;
  }

  /** Payload of the earliest event; call peekTime()/peekExtra() first. */
  pop(): number {
    const time = this.time;
    const seq = this.seq;
    const data = this.data;
    const aux = this.aux;
    const top = data[0]!;
    const last = --this.n;
    if (last > 0) {
      const t = time[last]!;
      const s = seq[last]!;
      const d = data[last]!;
      const x = aux[last]!;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= last) break;
        const r = l + 1;
        let c = l;
        if (r < last && (time[r]! < time[l]! || (time[r] === time[l] && seq[r]! < seq[l]!))) c = r;
        const tc = time[c]!;
        if (t < tc || (t === tc && s < seq[c]!)) break;
        time[i] = tc;
        seq[i] = seq[c]!;
        data[i] = data[c]!;
        aux[i] = aux[c]!;
        i = c;
      }
      time[i] = t;
      seq[i] = s;
      data[i] = d;
      aux[i] = x;
    }
    return top;
  }
}
