// A task's archive on a volunteer (`--archive full` on the manager): the
// crawler's response and revisit entries for one task, gathered into batches
// of about 1 MiB and uploaded to the task's storage node while the crawl goes
// on (src/dht/archive-upload.ts), so nothing of the archive waits on disk or
// grows in memory with the crawl. At most two batches are on their way; the
// crawl waits for one to land before it adds more. An entry too large for a
// batch is left out (and counted), as is everything after the storage node
// refused a batch: the task's text result is uploaded whatever happens here.
import type { Logger } from 'pino';
import type { ArchiveEntry } from '../crawler/warc/record.js';
import type { ArchiveSink } from '../crawler/warc/writer.js';
import { encodeUploadBatch, UPLOAD_BATCH_LIMITS } from '../crawler/warc/upload-batch.js';
import { packedSize } from '../crawler/warc/exchange.js';

/** Sends one encoded batch (uploadArchiveBatch bound to the task's order). */
export type SendBatch = (batch: number, entries: unknown[], raw: Uint8Array) => Promise<void>;

export interface TaskArchiveStats {
  batches: number;
  entries: number;
  bytes: number;
  /** Entries left out: too large for a batch, or after a failure. */
  dropped: number;
  failed: number;
}

// Small enough that five task threads hold a few MiB each on the owner's machine (pending + two on their way).
const TARGET_BATCH_BYTES = 1024 * 1024;
const MAX_IN_FLIGHT = 2;

export class TaskArchive implements ArchiveSink {
  private pending: ArchiveEntry[] = [];
  private pendingBytes = 0;
  private nextBatch = 0;
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;
  readonly stats: TaskArchiveStats = { batches: 0, entries: 0, bytes: 0, dropped: 0, failed: 0 };

  constructor(
    private readonly taskId: string,
    private readonly send: SendBatch,
    private readonly log: Logger,
    private readonly targetBytes = TARGET_BATCH_BYTES,
  ) {}

  archive(entry: ArchiveEntry): void | Promise<void> {
    if (entry.kind === 'conversion') return;
    if (this.stopped) {
      this.stats.dropped++;
      return;
    }
    const size = packedSize(entry.exchange);
    if (size > UPLOAD_BATCH_LIMITS.bodyBytes) {
      this.stats.dropped++;
      return;
    }
    if (this.pendingBytes + size > this.targetBytes && this.pending.length > 0) this.flush();
    this.pending.push(entry);
    this.pendingBytes += size;
    if (this.pendingBytes >= this.targetBytes || this.pending.length >= UPLOAD_BATCH_LIMITS.entries) this.flush();
    // Back-pressure: the crawl waits while two batches are on their way.
    if (this.inFlight.size >= MAX_IN_FLIGHT) return Promise.race(this.inFlight);
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    const entries = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    const batch = this.nextBatch++;
    const p = (async () => {
      const enc = encodeUploadBatch(entries);
      try {
        await this.send(batch, enc.entries, enc.raw);
        this.stats.batches++;
        this.stats.entries += enc.entries.length;
        this.stats.bytes += enc.raw.byteLength;
      } catch (err) {
        // A refusal (or a storage node gone for good) ends the task's archive; the text still goes.
        this.stats.failed++;
        this.stats.dropped += entries.length;
        if (!this.stopped) this.log.warn({ task: this.taskId, batch, err: String(err) }, 'archive upload failed; the rest of the task is not archived');
        this.stopped = true;
      }
    })();
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  /** Uploads what is left (keep) or drops it (handed over), and waits for the batches on their way. */
  async end(o: { keep: boolean }): Promise<void> {
    if (o.keep && !this.stopped) this.flush();
    else {
      this.stats.dropped += this.pending.length;
      this.pending = [];
    }
    await Promise.allSettled([...this.inFlight]);
  }
}
