// The tasks in flight, in memory: per channel its task, issue time, window,
// deadline and host; the host gate; the deadlines. This is the manager's whole
// resident per-task state (channels stay on disk), restored on restart from the
// active task records and bounded by the service's in-flight cap.
//
// Politeness across channels: a host may be a channel of its own and also hold
// sub-directory channels, each recrawled on its own schedule. Each task crawls
// its channel politely, but two tasks on one host would hit it in parallel
// (from one volunteer or from two), so at most one task per host is in flight;
// the other channels of that host stay due and go out once it is free. Hosts are
// kept as 30-bit hashes (small integers to V8); a collision only makes a channel
// wait for another host's task.
//
// Layout: a task's fields live in typed-array columns at a slot, and a task id
// is kept as its sequence number (the id is rebuilt from channel, issue time and
// number, task-builder.ts's taskId). An object per task cost ≈ 370 bytes of V8
// heap (the record, two boxed doubles, the id string, two map entries); this
// costs ≈ 130, and V8 lets the heap grow to a multiple of what is live, so every
// byte kept here counts several times in the process's memory (docs/manager.md).
import type { InFlight } from './schedule-record.js';
import { taskId } from './task-builder.js';

const RUNNING = 1;

export class InFlightSet {
  /** channel → slot */
  private readonly slots = new Map<string, number>();
  /** host key → the slot of the task that holds it. */
  private readonly byHost = new Map<number, number>();
  /** Task ids that are not taskId(channel, issuedAt, n) (none the manager issues): slot → id. */
  private readonly oddIds = new Map<number, string>();
  private free: number[] = [];
  private cap = 0;
  private issuedAt = new Float64Array(0);
  private deadline = new Float64Array(0);
  private seq = new Float64Array(0);
  private round = new Float64Array(0);
  private hh = new Int32Array(0);
  private x = new Int32Array(0);
  private flags = new Uint8Array(0);
  private nRunning = 0;

  get size(): number {
    return this.slots.size;
  }

  get(channel: string): InFlight | undefined {
    const s = this.slots.get(channel);
    return s === undefined ? undefined : this.read(channel, s);
  }

  /** True while `taskId` is the task in flight of its channel. */
  isActive(channel: string, id: string): boolean {
    const s = this.slots.get(channel);
    return s !== undefined && this.taskOf(channel, s) === id;
  }

  /** True while a task for this host key is in flight. */
  busy(hh: number): boolean {
    return this.byHost.has(hh);
  }

  add(channel: string, f: InFlight): void {
    let s = this.slots.get(channel);
    if (s !== undefined) this.release(s);
    else {
      s = this.alloc();
      this.slots.set(channel, s);
    }
    this.issuedAt[s] = f.issuedAt;
    this.deadline[s] = f.deadline;
    this.round[s] = f.round;
    this.hh[s] = f.hh;
    this.x[s] = f.x ?? 0;
    this.flags[s] = f.running ? RUNNING : 0;
    if (f.running) this.nRunning++;
    const n = seqOf(f.task);
    if (n !== null && taskId(channel, f.issuedAt, n) === f.task) this.seq[s] = n;
    else this.oddIds.set(s, f.task);
    this.byHost.set(f.hh, s);
  }

  /** The channel's task was accepted by a crawler. */
  markRunning(channel: string): void {
    const s = this.slots.get(channel);
    if (s === undefined || (this.flags[s]! & RUNNING) !== 0) return;
    this.flags[s] = this.flags[s]! | RUNNING;
    this.nRunning++;
  }

  /** The channel gained optional records (scheduler.ts DATA_*) while its task is in flight. */
  addData(channel: string, bits: number): void {
    const s = this.slots.get(channel);
    if (s !== undefined) this.x[s] = this.x[s]! | bits;
  }

  /** The channel's task ended (or the channel is gone); returns what was in flight. */
  end(channel: string): InFlight | undefined {
    const s = this.slots.get(channel);
    if (s === undefined) return undefined;
    const f = this.read(channel, s);
    this.slots.delete(channel);
    this.release(s);
    this.free.push(s);
    return f;
  }

  /** Tasks whose deadline + grace has passed: [channel, task]. */
  overdue(nowMs: number, graceMs: number, limit = Infinity): [string, string][] {
    const out: [string, string][] = [];
    for (const [ch, s] of this.slots) {
      if (out.length >= limit) break;
      if (nowMs > this.deadline[s]! + graceMs) out.push([ch, this.taskOf(ch, s)]);
    }
    return out;
  }

  /** Up to `limit` tasks, optionally only issued or only running: [channel, task]. */
  list(limit: number, state?: 'issued' | 'running'): [string, string][] {
    const out: [string, string][] = [];
    for (const [ch, s] of this.slots) {
      if (out.length >= limit) break;
      if (state !== undefined && ((this.flags[s]! & RUNNING) !== 0) !== (state === 'running')) continue;
      out.push([ch, this.taskOf(ch, s)]);
    }
    return out;
  }

  counts(): { issued: number; running: number } {
    return { issued: this.slots.size - this.nRunning, running: this.nRunning };
  }

  private read(channel: string, s: number): InFlight {
    const f: InFlight = { task: this.taskOf(channel, s), issuedAt: this.issuedAt[s]!, round: this.round[s]!, deadline: this.deadline[s]!, running: (this.flags[s]! & RUNNING) !== 0, hh: this.hh[s]! };
    if (this.x[s] !== 0) f.x = this.x[s]!;
    return f;
  }

  private taskOf(channel: string, s: number): string {
    return this.oddIds.get(s) ?? taskId(channel, this.issuedAt[s]!, this.seq[s]!);
  }

  /** Frees what the slot's task held: its host, its running count, an odd id. */
  private release(s: number): void {
    const hh = this.hh[s]!;
    if (this.byHost.get(hh) === s) this.byHost.delete(hh);
    if ((this.flags[s]! & RUNNING) !== 0) this.nRunning--;
    this.flags[s] = 0;
    this.oddIds.delete(s);
  }

  private alloc(): number {
    const s = this.free.pop();
    if (s !== undefined) return s;
    const n = this.slots.size + this.free.length;
    if (n >= this.cap) this.grow(Math.max(1024, this.cap * 2));
    return n;
  }

  private grow(cap: number): void {
    this.issuedAt = grown(this.issuedAt, cap);
    this.deadline = grown(this.deadline, cap);
    this.seq = grown(this.seq, cap);
    this.round = grown(this.round, cap);
    this.hh = grown(this.hh, cap);
    this.x = grown(this.x, cap);
    this.flags = grown(this.flags, cap);
    this.cap = cap;
  }
}

/** A copy of a column with room for `cap` slots. */
function grown<T extends Float64Array | Int32Array | Uint8Array>(a: T, cap: number): T {
  const b = new (a.constructor as new (n: number) => T)(cap);
  b.set(a);
  return b;
}

/** The sequence number at the end of a task id (taskId's last part), or null. */
function seqOf(id: string): number | null {
  const i = id.lastIndexOf('.');
  if (i < 0) return null;
  const n = parseInt(id.slice(i + 1), 36);
  return Number.isSafeInteger(n) ? n : null;
}

/** A host's 30-bit key: FNV-1a, folded. */
export function hostKey(host: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < host.length; i++) h = Math.imul(h ^ host.charCodeAt(i), 0x01000193);
  return (h ^ (h >>> 30)) & 0x3fffffff;
}
