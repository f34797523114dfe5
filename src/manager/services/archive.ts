// The storage side of the network archive (`dht-manager serve --archive full`):
// takes a batch of WARC entries a volunteer uploaded for a task
// (src/dht/archive-upload.ts), checks that the sender holds the task, that
// every exchange is on the task's origin and dated within the task's life,
// and that every digest the volunteer claimed matches the bytes
// (src/crawler/warc/upload-batch.ts), then writes the records into the
// archive's WARC files (warc.ts's ArchiveWriter) before acknowledging.
//
// A digest mismatch is counted against the volunteer: its batch is refused, and
// after MAX_MISMATCHES its uploads are refused for as long as the manager runs.
// A retried batch (a lost acknowledgement) is acknowledged without being
// written again, as long as the manager remembers it (the last 100 000
// batches, in memory).
import { checkHandoverChain, type Handover } from '../../dht/signing.js';
import { decodeUploadBatch, UploadBatchError } from '../../crawler/warc/upload-batch.js';
import type { ArchiveEntry } from '../../crawler/warc/record.js';
import { UploadRefused } from '../errors.js';
import type { ServiceCore } from './core.js';
import type { TaskService } from './tasks.js';

/** Where checked entries are written (warc.ts's ArchiveWriter). */
export interface ArchiveRecordSink {
  append(entries: ArchiveEntry[]): Promise<void>;
}

/** A batch as the archive protocol delivers it (header fields; entries unchecked). */
export interface ArchiveBatchIn {
  orderId: string;
  batch: number;
  handover?: Handover[];
  entries: unknown[];
}

/** Digest mismatches after which a volunteer's archive uploads are refused. */
export const MAX_MISMATCHES = 3;
/** Slack on exchange dates: volunteers' clocks are not the manager's. */
const CLOCK_SLACK_MS = 10 * 60_000;
const REMEMBERED_BATCHES = 100_000;
const REMEMBERED_PEERS = 10_000;

export class ArchiveService {
  private readonly written = new Set<string>();
  private readonly mismatches = new Map<string, number>();

  constructor(
    private readonly core: ServiceCore,
    private readonly tasks: TaskService,
    private readonly sink: ArchiveRecordSink,
  ) {}

  private refuse(from: string, why: string): never {
    this.core.counters.archiveRefused++;
    this.core.log.debug({ from, why }, 'archive batch refused');
    throw new UploadRefused(why);
  }

  /** Checks and writes one batch from peer `from`; throws UploadRefused (the volunteer is told why). */
  async receive(b: ArchiveBatchIn, raw: Uint8Array, from: string): Promise<'written' | 'duplicate'> {
    if ((this.mismatches.get(from) ?? 0) >= MAX_MISMATCHES) return this.refuse(from, 'too many archive batches with bad digests from this peer');
    const { repos, counters } = this.core;
    const t = (await this.tasks.active(b.orderId)) ?? (await repos.tasks.finished(b.orderId));
    if (t === undefined) return this.refuse(from, `unknown task ${b.orderId}`);
    if (t.holder !== undefined && t.holder !== 'unknown' && t.holder !== from) {
      const why = b.handover === undefined ? 'no hand-over' : await checkHandoverChain(b.handover, t.id, t.holder, from);
      if (why !== undefined) return this.refuse(from, `archive from a peer that does not hold this task (${why})`);
    }
    const key = `${t.id}#${b.batch}`;
    if (this.written.has(key)) return 'duplicate';
    const ch = await repos.channels.get(t.channel);
    if (ch === undefined) return this.refuse(from, `channel ${t.channel} no longer exists`);
    let entries: ArchiveEntry[];
    try {
      entries = decodeUploadBatch(b.entries, raw, { origin: ch.origin, notBefore: t.issuedAt - CLOCK_SLACK_MS, notAfter: this.core.clock() + CLOCK_SLACK_MS });
    } catch (err) {
      if (!(err instanceof UploadBatchError)) throw err;
      if (err.kind === 'digest-mismatch') this.countMismatch(from, t.id, err.message);
      return this.refuse(from, err.message);
    }
    if (this.written.has(key)) return 'duplicate'; // the same batch, retried while this one was checked
    this.remember(key);
    try {
      await this.sink.append(entries);
    } catch (err) {
      this.written.delete(key);
      throw err;
    }
    counters.archiveBatches++;
    counters.archiveEntries += entries.length;
    counters.archiveBytes += raw.byteLength;
    return 'written';
  }

  private countMismatch(from: string, task: string, why: string): void {
    this.core.counters.archiveDigestMismatches++;
    const n = (this.mismatches.get(from) ?? 0) + 1;
    if (this.mismatches.size >= REMEMBERED_PEERS && !this.mismatches.has(from)) this.mismatches.delete(this.mismatches.keys().next().value as string);
    this.mismatches.set(from, n);
    this.core.log.warn({ peer: from, task, why, mismatches: n }, n >= MAX_MISMATCHES ? 'archive digests do not match, again: refusing this peer' : 'archive digests do not match the bytes');
  }

  private remember(key: string): void {
    if (this.written.size >= REMEMBERED_BATCHES) this.written.delete(this.written.values().next().value as string);
    this.written.add(key);
  }
}
