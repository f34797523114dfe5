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
import type { InFlight } from './schedule-record.js';

export class InFlightSet {
  private readonly byChannel = new Map<string, InFlight>();
  /** host key → the channel whose task holds it. */
  private readonly byHost = new Map<number, string>();

  get size(): number {
    return this.byChannel.size;
  }

  get(channel: string): InFlight | undefined {
    return this.byChannel.get(channel);
  }

  /** True while `taskId` is the task in flight of its channel. */
  isActive(channel: string, taskId: string): boolean {
    return this.byChannel.get(channel)?.task === taskId;
  }

  /** True while a task for this host key is in flight. */
  busy(hh: number): boolean {
    return this.byHost.has(hh);
  }

  add(channel: string, f: InFlight): void {
    const prev = this.byChannel.get(channel);
    if (prev !== undefined) this.release(channel, prev);
    this.byChannel.set(channel, f);
    this.byHost.set(f.hh, channel);
  }

  /** The channel's task ended (or the channel is gone); returns what was in flight. */
  end(channel: string): InFlight | undefined {
    const f = this.byChannel.get(channel);
    if (f === undefined) return undefined;
    this.byChannel.delete(channel);
    this.release(channel, f);
    return f;
  }

  private release(channel: string, f: InFlight): void {
    if (this.byHost.get(f.hh) === channel) this.byHost.delete(f.hh);
  }

  /** Tasks whose deadline + grace has passed: [channel, task]. */
  overdue(nowMs: number, graceMs: number, limit = Infinity): [string, string][] {
    const out: [string, string][] = [];
    for (const [ch, f] of this.byChannel) {
      if (out.length >= limit) break;
      if (nowMs > f.deadline + graceMs) out.push([ch, f.task]);
    }
    return out;
  }

  /** Up to `limit` tasks, optionally only issued or only running: [channel, task]. */
  list(limit: number, state?: 'issued' | 'running'): [string, string][] {
    const out: [string, string][] = [];
    for (const [ch, f] of this.byChannel) {
      if (out.length >= limit) break;
      if (state !== undefined && f.running !== (state === 'running')) continue;
      out.push([ch, f.task]);
    }
    return out;
  }

  counts(): { issued: number; running: number } {
    let running = 0;
    for (const f of this.byChannel.values()) if (f.running) running++;
    return { issued: this.byChannel.size - running, running };
  }
}

/** A host's 30-bit key: FNV-1a, folded. */
export function hostKey(host: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < host.length; i++) h = Math.imul(h ^ host.charCodeAt(i), 0x01000193);
  return (h ^ (h >>> 30)) & 0x3fffffff;
}
