/**
 * The density counts due, in time order. Every count is queued countEvery
 * after the moment it is queued (a join, or the count before), and those
 * moments come in time order (the engine's events, and counts made in time
 * order up to them), so the queue is first-in first-out: a ring, O(1) a count
 * (a heap cost a log n per count, and there are tens of millions at 10×).
 */
export class CountQueue {
  private time = new Float64Array(1024);
  private who = new Int32Array(1024);
  private head = 0;
  size = 0;

  push(t: number, c: number): void {
    const cap = this.time.length;
    if (this.size === cap) {
      const time = new Float64Array(cap * 2);
      const who = new Int32Array(cap * 2);
      for (let i = 0; i < this.size; i++) {
        time[i] = this.time[(this.head + i) % cap]!;
        who[i] = this.who[(this.head + i) % cap]!;
      }
      this.time = time;
      this.who = who;
      this.head = 0;
    }
    const last = this.size > 0 ? this.time[(this.head + this.size - 1) % this.time.length]! : -Infinity;
    if (t < last) throw new Error(`overlay: density counts queued out of time order (${t} after ${last})`);
    const i = (this.head + this.size) % this.time.length;
    this.time[i] = t;
    this.who[i] = c;
    this.size++;
  }

  peekTime(): number {
    return this.time[this.head]!;
  }

  pop(): number {
    const c = this.who[this.head]!;
    this.head = (this.head + 1) % this.time.length;
    this.size--;
    return c;
  }
}
