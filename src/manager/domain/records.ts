// What the repositories store besides channels (domain/channel.ts) and the
// scheduler's records (domain/scheduler.ts): tasks, pages, candidate channels,
// host reports and the manager's counters. Plain JSON data.
import type { KnownPage, PageRecord } from '../../crawler/task.js';
import type { WireCoord } from '../../dht/signing.js';

export type TaskState = 'issued' | 'running' | 'done' | 'failed';

export interface TaskRecord {
  id: string;
  channel: string;
  host: string;
  issuedAt: number;
  /** The crawler's deadline (task.deadline); the manager waits `graceMs` more for the upload. */
  deadline: number;
  state: TaskState;
  /** Upload parts already applied (idempotency). */
  applied?: number[];
  /** The recrawl observation window (RecrawlState.rounds) it was issued in. */
  round: number;
  holder?: string;
  reason?: string;
  finishedAt?: number;
  parts: number;
  pagesStored: number;
  livePages: number;
  revisited: number;
  changed: number;
  newPages: number;
}

/** A validator of a stored page (the next task's `known`), kept per channel. */
export type KnownEntry = KnownPage & { digest: number; depth: number };

/** The latest validators and version of a stored page. */
export interface PageLatest {
  digest: number;
  depth: number;
  etag?: string;
  lastModified?: string;
  /** 0 until a version with text was stored. */
  version: number;
  fetchedAt?: number;
  title?: string;
  bytes?: number;
  lastSeen: number;
  lastTask: string;
  /** The archived capture of this page (`--archive full`): its payload digest and date, for revisit records. */
  payloadDigest?: string;
  capturedAt?: number;
  /** The current version came from a volunteer since quarantined (or outvoted) and was
   * never confirmed: the next crawl's text replaces it even under the same digest. */
  unverified?: true;
}

/** One stored version of a page (its text is stored beside it). */
export interface PageVersion extends PageRecord {
  version: number;
  taskId: string;
  crawler: string;
  storedAt: number;
}

/** A site that crawled pages link to and no channel covers. */
export interface Candidate {
  origin: string;
  status: 'pending' | 'accepted' | 'rejected';
  firstSeen: number;
  lastSeen: number;
  count: number;
  urls: string[];
  from: string[];
  channel?: string;
}

/** Crawlers' RTT reports to a host (the landmarks that place it). */
export interface HostReports {
  reports: { crawler: string; coord: WireCoord; rttMs: number; at: number }[];
}

/** The manager's running totals (persisted at shutdown; the metrics' counters). */
export interface Counters {
  tasksIssued: number;
  tasksSucceeded: number;
  tasksFailed: number;
  tasksOverdue: number;
  uploadsApplied: number;
  uploadsDuplicate: number;
  uploadsRefused: number;
  pagesStored: number;
  pageBytes: number;
  groupMoves: number;
  rounds: number;
  /** `--archive full`: batches of WARC entries written, their entries and bytes, batches refused, and of those the digest mismatches. */
  archiveBatches: number;
  archiveEntries: number;
  archiveBytes: number;
  archiveRefused: number;
  archiveDigestMismatches: number;
}

export function zeroCounters(): Counters {
  return {
    tasksIssued: 0,
    tasksSucceeded: 0,
    tasksFailed: 0,
    tasksOverdue: 0,
    uploadsApplied: 0,
    uploadsDuplicate: 0,
    uploadsRefused: 0,
    pagesStored: 0,
    pageBytes: 0,
    groupMoves: 0,
    rounds: 0,
    archiveBatches: 0,
    archiveEntries: 0,
    archiveBytes: 0,
    archiveRefused: 0,
    archiveDigestMismatches: 0,
  };
}
