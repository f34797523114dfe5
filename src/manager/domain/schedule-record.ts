// What the scheduler persists (domain/scheduler.ts computes it; data/ stores it):
// one record per channel, the recrawl state without its channels, the per-group
// window aggregates, and what a due-index entry and a task in flight hold.
import type { RecrawlState } from '../../recrawl/index.js';
import type { GroupStats } from '../../recrawl/window-stats.js';

/** Persisted per-channel scheduling record. Window counters (sub, suc, fail, gs) count
 * only while `round` is the current one; a task in flight is not written here (its
 * record holds its issue time and window, see InFlight). */
export interface SchedRecord {
  g: number; // group
  ci: number; // change interval, minutes
  sub: number;
  suc: number;
  fail: number;
  round: number;
  gs?: number; // gapSum (minutes)
  lu: number | null; // lastUpdate (minutes)
  ut: number[]; // updateTimes (minutes)
  dt: number[]; // downloadTimes (minutes)
  li: number; // last issue, epoch ms (0 = never)
  ra: number; // retry at, epoch ms (0 = none)
  fl?: string | null; // task in flight (written by databases before the due index; ignored)
  x?: number; // DATA_* bits of scheduler.ts (absent in old records: all assumed present)
  hh?: number; // the host's 30-bit key (in-flight.ts hostKey); absent in old records
}

export type RecrawlMeta = Omit<RecrawlState, 'channels' | 'triggerCount' | 'topCount'>;

/** The window aggregates per group (src/recrawl/window-stats.ts), written with every change. */
export type WindowStats = GroupStats[];

/** What the due index was built with: entries are placed by these, so a change rebuilds it. */
export interface DueIndexParams {
  version: number;
  rateCap: number | null;
  minInterval: number;
}

/** A channel in the due index: what deciding it is due, ordering it and building its
 * task need, without reading its records. */
export interface DueEntry {
  id: string;
  g: number;
  li: number;
  ra: number;
  ci: number;
  hh: number;
  x: number;
}

/** A task in flight, kept in memory (restored from the active task records on restart). */
export interface InFlight {
  task: string;
  issuedAt: number;
  /** The window its submission counts in (a move to another group re-counts it there). */
  round: number;
  deadline: number;
  running: boolean;
  hh: number;
  /** Data bits (scheduler.ts DATA_*) the channel gained while this task was in flight:
   * the record written when it ends carries them. */
  x?: number;
}
