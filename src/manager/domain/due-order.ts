// The order due channels are issued in, and how it is read from the due index
// (data/due-index.ts) in bounded pieces. Pure.
//
// Order: by due time, then priority group (0 first), then channel id — the most
// overdue channel first; a channel whose host is busy waits (parked) and keeps
// its place for when the host is free.
//
// The index cannot be keyed by the due time itself: a channel's due time is its
// last issue + its group's interval, and a round changes the intervals of whole
// groups at once. So it is split into streams whose keys do not move with a round:
//   - one PACED stream per group, keyed by last issue: due = last issue + the
//     group's interval (floored), the same offset for the whole stream, so key
//     order is due order whatever the interval is now;
//   - one TIMED stream keyed by an absolute time: never issued (0), retry after a
//     failure (retry time), or a channel whose rate cap holds it back beyond its
//     group's interval (last issue + change interval / cap: that part of its due
//     time does not depend on the group's interval).
// Each stream's key gives a LOWER BOUND of the entry's due time. It is exact unless
// a round moved a group's interval past a channel's rate cap (or back); such an
// entry is found when the merge reaches it, moved to the stream that now gives its
// due time exactly, and still issued in its place (`DueMerge`).
import type { DueEntry } from './schedule-record.js';
import type { Scheduler } from './scheduler.js';

/** Where an entry is kept: the timed stream, or its group's paced stream. */
export type Stream = 'timed' | 'paced';

/** The stream an entry belongs in now. */
export function streamOf(s: Scheduler, e: DueEntry): Stream {
  if (e.ra > 0 || e.li === 0) return 'timed';
  const o = s.state.options;
  if (o.rateCap === null) return 'paced';
  return e.ci / o.rateCap > Math.max(s.state.groups[e.g]!.interval, o.minInterval) ? 'timed' : 'paced';
}

/** The timed stream's key time of an entry (epoch ms): exact for retries and new
 * channels, a lower bound (the rate cap's part) otherwise. */
export function timedAt(s: Scheduler, e: DueEntry): number {
  if (e.ra > 0) return e.ra;
  if (e.li === 0) return 0;
  const o = s.state.options;
  return e.li + Math.max(o.rateCap === null ? 0 : e.ci / o.rateCap, o.minInterval) * 60_000;
}

/** The due time an entry's place in `stream` promises (≤ its due time). */
export function lowerBound(s: Scheduler, e: DueEntry, stream: Stream): number {
  if (stream === 'timed') return timedAt(s, e);
  return e.li + Math.max(s.state.groups[e.g]!.interval, s.state.options.minInterval) * 60_000;
}

export interface DueKey {
  due: number;
  g: number;
  id: string;
}

/** The issue order: due time, then group, then id. */
export function compareDue(a: DueKey, b: DueKey): number {
  return a.due - b.due || a.g - b.g || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** An entry as read from a stream; `key` is opaque here (the data layer's). */
export interface StreamItem {
  key: string;
  e: DueEntry;
}

/** What the merge asks for or yields next. */
export type MergeStep =
  /** Read more of stream `stream` (0 = timed, 1 + g = group g's paced stream). */
  | { kind: 'need'; stream: number }
  /** The next due channel in issue order, and where it is kept now. */
  | { kind: 'due'; e: DueEntry; at: Stream; due: number }
  /** A misplaced entry: move it (it may still come as 'due' later in this pass). */
  | { kind: 'move'; e: DueEntry; from: Stream; to: Stream }
  /** No channel is due before `now` any more. */
  | { kind: 'done' };

interface Pending extends DueKey {
  e: DueEntry;
  at: Stream;
}

/**
 * A k-way merge of the streams, yielding due channels in issue order. Each stream is
 * fed in chunks (`feed`) when the merge asks for it; heads are compared by their lower
 * bounds, and a head whose due time is later than its bound is moved and kept aside
 * (in `held`, a small heap) until it is the smallest — so every channel yielded is the
 * smallest due one left, and stopping at any point leaves a correct prefix.
 */
export class DueMerge {
  private readonly bufs: StreamItem[][];
  private readonly pos: number[];
  /** The stream has nothing more to read (end of its range) or its head is not due yet. */
  private readonly closed: boolean[];
  private readonly ended: boolean[];
  private readonly held: Pending[] = [];
  /** Each stream's head as last computed (undefined: to compute; it changes only when the
   * stream moves on or is fed), so a step does not rebuild every stream's head. */
  private readonly heads: (Pending | null | undefined)[];

  constructor(
    private readonly s: Scheduler,
    private readonly now: number,
  ) {
    const n = 1 + s.state.groups.length;
    this.bufs = Array.from({ length: n }, () => []);
    this.pos = new Array<number>(n).fill(0);
    this.closed = new Array<boolean>(n).fill(false);
    this.ended = new Array<boolean>(n).fill(false);
    this.heads = new Array<Pending | null | undefined>(n).fill(undefined);
  }

  private kind(stream: number): Stream {
    return stream === 0 ? 'timed' : 'paced';
  }

  /** Items of `stream` in key order; `last` when the stream has no more. */
  feed(stream: number, items: StreamItem[], last: boolean): void {
    const b = this.bufs[stream]!;
    if (this.pos[stream]! > 0) {
      b.splice(0, this.pos[stream]!);
      this.pos[stream] = 0;
    }
    for (const it of items) b.push(it);
    this.heads[stream] = undefined;
    if (last) this.ended[stream] = true;
  }

  /** The first item of each stream that this pass did not take, or null (used up to the
   * end of what was read): where the next pass may start reading. */
  untaken(stream: number): StreamItem | null {
    return this.bufs[stream]![this.pos[stream]!] ?? null;
  }

  /** Whether the whole stream was read (nothing after the last item). */
  readAll(stream: number): boolean {
    return this.ended[stream]! && this.untaken(stream) === null;
  }

  private head(stream: number): Pending | null {
    const cached = this.heads[stream];
    if (cached !== undefined) return cached;
    const it = this.bufs[stream]![this.pos[stream]!];
    const at = this.kind(stream);
    const h = it === undefined ? null : { due: lowerBound(this.s, it.e, at), g: it.e.g, id: it.e.id, e: it.e, at };
    this.heads[stream] = h;
    return h;
  }

  next(): MergeStep {
    for (;;) {
      let best = -1;
      let bestKey: Pending | null = null;
      for (let i = 0; i < this.bufs.length; i++) {
        if (this.closed[i]) continue;
        const h = this.head(i);
        if (h === null) {
          if (this.ended[i]) {
            this.closed[i] = true;
            continue;
          }
          return { kind: 'need', stream: i };
        }
        if (h.due > this.now) {
          this.closed[i] = true; // sorted: nothing after it is due either
          continue;
        }
        if (bestKey === null || compareDue(h, bestKey) < 0) {
          best = i;
          bestKey = h;
        }
      }
      const top = this.held[0];
      if (top !== undefined && (bestKey === null || compareDue(top, bestKey) <= 0)) {
        heapPop(this.held);
        return { kind: 'due', e: top.e, at: top.at, due: top.due };
      }
      if (bestKey === null) return { kind: 'done' };
      this.pos[best] = this.pos[best]! + 1;
      this.heads[best] = undefined;
      const due = this.s.dueOf(bestKey.e);
      if (due === bestKey.due) return { kind: 'due', e: bestKey.e, at: bestKey.at, due };
      // Its due time is later than its place says (a round moved its group's interval
      // past its rate cap or back): it belongs in the other stream.
      const to = streamOf(this.s, bestKey.e);
      const moved = { ...bestKey, due, at: to };
      if (due <= this.now) heapPush(this.held, moved);
      if (to !== bestKey.at) return { kind: 'move', e: bestKey.e, from: bestKey.at, to };
    }
  }
}

function heapPush(h: Pending[], x: Pending): void {
  h.push(x);
  let i = h.length - 1;
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (compareDue(h[p]!, h[i]!) <= 0) break;
    [h[p], h[i]] = [h[i]!, h[p]!];
    i = p;
  }
}

function heapPop(h: Pending[]): void {
  const last = h.pop()!;
  if (h.length === 0) return;
  h[0] = last;
  let i = 0;
  for (;;) {
    const l = 2 * i + 1;
    const r = l + 1;
    let m = i;
    if (l < h.length && compareDue(h[l]!, h[m]!) < 0) m = l;
    if (r < h.length && compareDue(h[r]!, h[m]!) < 0) m = r;
    if (m === i) return;
    [h[m], h[i]] = [h[i]!, h[m]!];
    i = m;
  }
}
