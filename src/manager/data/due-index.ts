// The due index: every channel without a task in flight, in the streams
// domain/due-order.ts describes (one timed stream, a paced stream per group),
// or parked under its host while that host has a task in flight. Values are the
// DueEntry fields as a JSON array; the channel id ends the key.
//
// Reading is streamed in chunks from a resident cursor per stream: the first key
// that may still be in the stream. Taking entries moves it forward; putting an
// entry below it moves it back. So a scheduling pass starts where the last one
// stopped instead of stepping again over the deletions of the entries issued
// before (LevelDB keeps those as tombstones until compaction).
import type { DueEntry } from '../domain/schedule-record.js';
import type { Stream, StreamItem } from '../domain/due-order.js';
import { K } from './keys.js';
import type { BatchOp, RangeReader, Store } from './store.js';

type Value = [g: number, li: number, ra: number, ci: number, hh: number, x: number];

const idOf = (key: string): string => key.slice(key.lastIndexOf('!') + 1);
const toEntry = (key: string, v: Value): DueEntry => ({ id: idOf(key), g: v[0], li: v[1], ra: v[2], ci: v[3], hh: v[4], x: v[5] });
const toValue = (e: DueEntry): Value => [e.g, e.li, e.ra, e.ci, e.hh, e.x];

/** Reads stream `i` (0 = timed, 1 + g = paced group g) in chunks. */
export interface StreamReaders {
  next(stream: number, n: number): Promise<StreamItem[]>;
  close(): Promise<void>;
}

export class DueIndexRepository {
  /** Per stream, the first key that may still be in it (undefined: the stream's start). */
  private readonly cursors: (string | undefined)[];
  /** Per stream, the lowest key put since the current pass opened its readers (which do
   * not see it): the pass's cursor may not end above it. */
  private readonly putSincePass: (string | undefined)[];
  /** Host keys that may have parked entries (a superset: a host leaves it when a read finds
   * none). A parked host is busy, so this is bounded by the tasks in flight; it spares the
   * end of every task a read of its host's parked range. */
  private readonly parkedHosts = new Set<number>();

  constructor(
    private readonly store: Store,
    private readonly groups: number,
  ) {
    this.cursors = new Array<string | undefined>(1 + groups).fill(undefined);
    this.putSincePass = new Array<string | undefined>(1 + groups).fill(undefined);
  }

  get streams(): number {
    return 1 + this.groups;
  }

  private streamIndex(e: DueEntry, s: Stream): number {
    return s === 'timed' ? 0 : 1 + e.g;
  }

  /** The key of an entry in a stream; `timedAt` is its timed key time (due-order.ts). */
  private key(e: DueEntry, s: Stream, timedAt: number): string {
    return s === 'timed' ? K.dueTimed(timedAt, e.g, e.id) : K.duePaced(e.g, e.li, e.id);
  }

  /** Puts an entry into a stream (the caller computed where: due-order.ts streamOf/timedAt). */
  putOp(e: DueEntry, s: Stream, timedAt: number): BatchOp {
    const key = this.key(e, s, timedAt);
    const i = this.streamIndex(e, s);
    const c = this.cursors[i];
    if (c !== undefined && key < c) this.cursors[i] = key;
    const p = this.putSincePass[i];
    if (p === undefined || key < p) this.putSincePass[i] = key;
    return { type: 'put', key, value: toValue(e) };
  }

  delOp(e: DueEntry, s: Stream, timedAt: number): BatchOp {
    return { type: 'del', key: this.key(e, s, timedAt) };
  }

  /** Removes an entry from wherever it may be: its timed place, its paced place, parked.
   * (An entry's value fixes all three; deleting a key that is absent is harmless.) */
  delAnywhereOps(e: DueEntry, timedAt: number): BatchOp[] {
    return [this.delOp(e, 'timed', timedAt), this.delOp(e, 'paced', timedAt), { type: 'del', key: K.dueParked(e.hh, e.id) }];
  }

  moveOps(e: DueEntry, from: Stream, to: Stream, timedAt: number): BatchOp[] {
    return [this.delOp(e, from, timedAt), this.putOp(e, to, timedAt)];
  }

  /** The entry waits under its host until the host's task in flight ends. */
  parkOps(e: DueEntry, from: Stream, timedAt: number): BatchOp[] {
    this.parkedHosts.add(e.hh);
    return [this.delOp(e, from, timedAt), { type: 'put', key: K.dueParked(e.hh, e.id), value: toValue(e) }];
  }

  /** Startup: the end marker of the parked range, and which hosts have parked entries. */
  async open(): Promise<void> {
    if ((await this.store.get(K.dueParkedEnd())) === undefined) await this.store.batch([{ type: 'put', key: K.dueParkedEnd(), value: 1 }]);
    this.parkedHosts.clear();
    await this.eachParked((e) => this.parkedHosts.add(e.hh));
  }

  /** The entries parked under a host. */
  async parked(hh: number): Promise<DueEntry[]> {
    if (!this.parkedHosts.has(hh)) return [];
    const out = (await this.store.range<Value>(K.dueParkedHost(hh))).map((r) => toEntry(r.rest, r.value));
    if (out.length === 0) this.parkedHosts.delete(hh);
    return out;
  }

  unparkOp(e: DueEntry): BatchOp {
    return { type: 'del', key: K.dueParked(e.hh, e.id) };
  }

  /** Every parked entry (restart check, counts). */
  async eachParked(fn: (e: DueEntry) => void): Promise<number> {
    return this.store.scan<Value>(K.dueParkedAll(), (rest, v) => fn(toEntry(rest, v)));
  }

  /** Readers of every stream from its cursor, each on the database as it is now; the
   * timed stream only up to `now`. */
  readers(now: number): StreamReaders {
    this.putSincePass.fill(undefined);
    const rs: RangeReader<Value>[] = [];
    for (let i = 0; i < this.streams; i++) rs.push(this.store.reader<Value>(i === 0 ? K.dueTimedUpTo(now) : K.duePacedGroup(i - 1), this.cursors[i]));
    return {
      next: async (i, n) => (await rs[i]!.next(n)).map((r) => ({ key: r.key, e: toEntry(r.key, r.value) })),
      close: async () => {
        await Promise.all(rs.map((r) => r.close()));
      },
    };
  }

  /** After a pass: stream i's first entry not taken (or, when all it read was taken,
   * just past the last key read: `after`) — or lower, where the pass itself put an entry. */
  setCursor(stream: number, first: string | null, after: string | null): void {
    let c = first ?? (after !== null ? after + '\u0000' : this.cursors[stream]);
    const p = this.putSincePass[stream];
    if (p !== undefined && (c === undefined || p < c)) c = p;
    this.cursors[stream] = c;
  }

  /** Forgets where passes stopped (after a failed write: the next pass reads from the start). */
  resetCursors(): void {
    this.cursors.fill(undefined);
  }

  /** Deletes the whole index (before a rebuild). */
  async clear(): Promise<void> {
    for (const r of [K.dueTimedAll(), K.duePacedAll(), K.dueParkedAll()]) await this.store.clear(r);
    this.resetCursors();
    this.parkedHosts.clear();
  }
}
