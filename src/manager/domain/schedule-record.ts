// What the scheduler persists (scheduler.ts writes and restores it; data/ stores it):
// one record per channel, and the recrawl state without its channels.
import type { RecrawlState } from '../../recrawl/index.js';

/** Persisted per-channel scheduling record. */
export interface SchedRecord {
  g: number; // group
  ci: number; // change interval, minutes
  sub: number;
  suc: number;
  fail: number;
  round: number;
  gs?: number; // gapSum (minutes), when src/recrawl keeps it
  lu: number | null; // lastUpdate (minutes)
  ut: number[]; // updateTimes (minutes)
  dt: number[]; // downloadTimes (minutes)
  li: number; // last issue, epoch ms (NaN-free: 0 = never)
  ra: number; // retry at, epoch ms (0 = none)
  fl: string | null; // task in flight
  x?: number; // DATA_* bits of scheduler.ts (absent in old records: all assumed present)
}

export type RecrawlMeta = Omit<RecrawlState, 'channels' | 'triggerCount' | 'topCount'>;
