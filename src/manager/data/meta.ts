// The manager-wide records: the recrawl strategy's state (groups, intervals,
// window), the per-group window aggregates, what the due index was built with,
// the channel id sequence, the counters, and the recent reassignment rounds.
import type { RoundReport } from '../../recrawl/index.js';
import type { DueIndexParams, RecrawlMeta, WindowStats } from '../domain/schedule-record.js';
import { K } from './keys.js';
import type { Counters } from '../domain/records.js';
import type { BatchOp, Store } from './store.js';

export class MetaRepository {
  constructor(private readonly store: Store) {}

  recrawl(): Promise<RecrawlMeta | undefined> {
    return this.store.get<RecrawlMeta>(K.meta('recrawl'));
  }

  window(): Promise<WindowStats | undefined> {
    return this.store.get<WindowStats>(K.meta('window'));
  }

  dueIndex(): Promise<DueIndexParams | undefined> {
    return this.store.get<DueIndexParams>(K.meta('dueIndex'));
  }

  async channelSeq(): Promise<number> {
    return (await this.store.get<{ channel: number }>(K.meta('seq')))?.channel ?? 0;
  }

  counters(): Promise<Counters | undefined> {
    return this.store.get<Counters>(K.meta('counters'));
  }

  /** The last reassignment rounds, oldest first (databases written before they were kept: the last one, if any). */
  async rounds(): Promise<RoundReport[]> {
    const kept = await this.store.get<RoundReport[]>(K.meta('rounds'));
    if (kept !== undefined) return kept;
    const last = await this.store.get<RoundReport>(K.meta('lastRound'));
    return last !== undefined ? [last] : [];
  }

  recrawlOp(meta: RecrawlMeta): BatchOp {
    return { type: 'put', key: K.meta('recrawl'), value: meta };
  }

  /** The aggregates as they are now (a copy: the batch may be encoded after later changes). */
  windowOp(stats: WindowStats): BatchOp {
    return { type: 'put', key: K.meta('window'), value: structuredClone(stats) };
  }

  dueIndexOp(p: DueIndexParams): BatchOp {
    return { type: 'put', key: K.meta('dueIndex'), value: p };
  }

  channelSeqOp(seq: number): BatchOp {
    return { type: 'put', key: K.meta('seq'), value: { channel: seq } };
  }

  countersOp(c: Counters): BatchOp {
    return { type: 'put', key: K.meta('counters'), value: c };
  }

  roundsOp(rounds: RoundReport[]): BatchOp {
    return { type: 'put', key: K.meta('rounds'), value: rounds };
  }
}
