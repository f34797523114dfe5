// Channels and what is kept per channel: the channel itself, its identity
// (origin + prefixes, for duplicates) and origin index (for inter-site URLs),
// its scheduling record, recrawl history, known pages for the next task, and
// the inter-site seeds and digests other crawls gave it.
import type { Channel, RecrawlHistoryRecord } from '../domain/channel.js';
import type { SchedRecord } from '../domain/schedule-record.js';
import { K } from './keys.js';
import type { KnownEntry } from '../domain/records.js';
import type { BatchOp, Store } from './store.js';

/** What a task for a channel is built from (the optional parts only when asked for). */
export interface TaskInputs {
  channel: Channel | undefined;
  known: KnownEntry[];
  interSeeds: string[];
  interDigests: number[];
}

export class ChannelRepository {
  constructor(private readonly store: Store) {}

  get(id: string): Promise<Channel | undefined> {
    return this.store.get<Channel>(K.channel(id));
  }

  /** Channels in id order, `limit` of them after the id `after`. */
  async list(opts: { after?: string; limit?: number } = {}): Promise<Channel[]> {
    const rows = await this.store.range<Channel>(K.channels(), { limit: opts.limit ?? 100, ...(opts.after !== undefined ? { after: opts.after } : {}) });
    return rows.map((r) => r.value);
  }

  /** The ids stored under these identities (channelKey), undefined where none. */
  idsOf(identities: string[]): Promise<(string | undefined)[]> {
    return this.store.getMany<string>(identities.map((k) => K.channelKey(k)));
  }

  /** The channels of an origin with their path prefixes. */
  async ofOrigin(origin: string): Promise<{ id: string; prefixes: string[] }[]> {
    return (await this.store.range<string[]>(K.originChannels(origin))).map((r) => ({ id: r.rest, prefixes: r.value }));
  }

  /** A channel's scheduling record (undefined: no such channel). */
  schedule(id: string): Promise<SchedRecord | undefined> {
    return this.store.get<SchedRecord>(K.sched(id));
  }

  schedules(ids: string[]): Promise<(SchedRecord | undefined)[]> {
    return this.store.getMany<SchedRecord>(ids.map((id) => K.sched(id)));
  }

  /** Streams every scheduling record (ICR's round, reports), read in chunks. */
  async scanSchedules(fn: (id: string, rec: SchedRecord) => void): Promise<number> {
    return this.scanScheduleChunks(async (rows) => {
      for (const [id, rec] of rows) fn(id, rec);
    });
  }

  /** Every scheduling record, a chunk at a time (an index rebuild writes per chunk). */
  async scanScheduleChunks(fn: (rows: [string, SchedRecord][]) => Promise<void>, chunk = 5000): Promise<number> {
    const r = this.store.reader<SchedRecord>(K.scheds());
    const cut = K.sched('').length;
    let n = 0;
    try {
      for (;;) {
        const rows = await r.next(chunk);
        await fn(rows.map(({ key, value }) => [key.slice(cut), value]));
        n += rows.length;
        if (rows.length < chunk) return n;
      }
    } finally {
      await r.close();
    }
  }

  /** Hosts of these channels (undefined where the channel is gone). */
  async hostsOf(ids: string[]): Promise<(string | undefined)[]> {
    return (await this.store.getMany<Channel>(ids.map((id) => K.channel(id)))).map((c) => c?.host);
  }

  /** A channel with, when `withRecrawl`, its scheduling record and history: one read (an upload's final part). */
  async withRecrawl(id: string, withRecrawl: boolean): Promise<{ channel: Channel | undefined; schedule: SchedRecord | undefined; history: RecrawlHistoryRecord[] }> {
    if (!withRecrawl) return { channel: await this.get(id), schedule: undefined, history: [] };
    const [channel, schedule, history] = await this.store.getMany<unknown>([K.channel(id), K.sched(id), K.history(id)]);
    return { channel: channel as Channel | undefined, schedule: schedule as SchedRecord | undefined, history: (history as RecrawlHistoryRecord[] | undefined) ?? [] };
  }

  async history(id: string): Promise<RecrawlHistoryRecord[]> {
    return (await this.store.get<RecrawlHistoryRecord[]>(K.history(id))) ?? [];
  }

  async interDigests(id: string): Promise<number[]> {
    return (await this.store.get<number[]>(K.interDigests(id))) ?? [];
  }

  async interSeedsOf(ids: string[]): Promise<(string[] | undefined)[]> {
    return this.store.getMany<string[]>(ids.map((id) => K.interSeeds(id)));
  }

  /** One read for many channels' task inputs; `want(id)` says which optional records exist
   * (a miss still costs LevelDB a lookup). */
  async taskInputs(ids: string[], want: (id: string) => { known: boolean; interSeeds: boolean; interDigests: boolean }): Promise<TaskInputs[]> {
    const keys: string[] = [];
    const at: [number, number, number, number][] = [];
    const slot = (on: boolean, key: string): number => {
      if (!on) return -1;
      keys.push(key);
      return keys.length - 1;
    };
    for (const id of ids) {
      const w = want(id);
      at.push([slot(true, K.channel(id)), slot(w.known, K.known(id)), slot(w.interSeeds, K.interSeeds(id)), slot(w.interDigests, K.interDigests(id))]);
    }
    const vals = await this.store.getMany<unknown>(keys);
    const val = <T>(i: number): T | undefined => (i < 0 ? undefined : (vals[i] as T | undefined));
    return at.map(([c, k, s, x]) => ({ channel: val<Channel>(c), known: val<KnownEntry[]>(k) ?? [], interSeeds: val<string[]>(s) ?? [], interDigests: val<number[]>(x) ?? [] }));
  }

  // ---- batch operations (the caller writes them with the change they belong to)

  /** A new channel: the record, its identity and its origin index entry. */
  addOps(ch: Channel, identity: string): BatchOp[] {
    return [
      { type: 'put', key: K.channel(ch.id), value: ch },
      { type: 'put', key: K.channelKey(identity), value: ch.id },
      { type: 'put', key: K.origin(ch.origin, ch.id), value: ch.pathPrefixes },
    ];
  }

  putOp(ch: Channel): BatchOp {
    return { type: 'put', key: K.channel(ch.id), value: ch };
  }

  scheduleOp(id: string, rec: SchedRecord): BatchOp {
    return { type: 'put', key: K.sched(id), value: rec };
  }

  historyOp(id: string, history: RecrawlHistoryRecord[]): BatchOp {
    return { type: 'put', key: K.history(id), value: history };
  }

  knownOp(id: string, known: KnownEntry[]): BatchOp {
    return { type: 'put', key: K.known(id), value: known };
  }

  interSeedsOp(id: string, seeds: string[]): BatchOp {
    return { type: 'put', key: K.interSeeds(id), value: seeds };
  }

  interDigestsOp(id: string, digests: number[]): BatchOp {
    return { type: 'put', key: K.interDigests(id), value: digests };
  }

  /** Everything kept per channel (its pages are the page repository's). */
  deleteOps(ch: Channel, identity: string): BatchOp[] {
    const id = ch.id;
    return [K.channel(id), K.channelKey(identity), K.origin(ch.origin, id), K.sched(id), K.history(id), K.known(id), K.interSeeds(id), K.interDigests(id)].map((key) => ({ type: 'del', key }));
  }
}
