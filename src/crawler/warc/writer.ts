// The WARC writer: entries in, .warc.gz files (and their CDXJ indexes) out.
// Record building, digests, gzip and file writes run on a worker thread
// (worker.ts), so the thread that crawls or ingests only posts plain data.
// `append` resolves once its entries are written; `archive` is the
// fire-and-forget form a crawl uses: entries are batched per event-loop turn,
// and it returns a promise to wait on only while the worker lags behind.
// Entries are batched (up to 10 ms, 256 entries or 1 MiB) and a batch's
// exchanges go over in one transferred buffer: a message per page cost the
// crawling thread more than building the records costs the worker.
import { mkdirSync } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import { USER_AGENT } from '../limits.js';
import { siblingModule, startModuleWorker } from '../../worker-thread.js';
import type { ClosedFile, RecordCounts, WarcFileSetOptions } from './files.js';
import { entryBytes, packEntries, type ArchiveEntry } from './record.js';
import type { WarcReply, WarcRequest, WarcWorkerData } from './worker.js';

export interface WarcWriterOptions {
  dir: string;
  prefix: string;
  /** Rotation size (default 1 GB). */
  maxBytes?: number;
  /** Start time, epoch ms (default now). */
  now?: number;
  /** Extra warcinfo fields (isPartOf, description, robots …). */
  info?: Record<string, string | number | undefined>;
  /** `archive` waits while more than this many bytes are on their way to the worker (default 64 MiB). */
  maxBacklogBytes?: number;
}

export interface WarcSummary {
  files: ClosedFile[];
  counts: RecordCounts;
}

/** Where a crawl sends what it archives (a WarcWriter, or a test's collector). */
export interface ArchiveSink {
  archive(entry: ArchiveEntry): void | Promise<void>;
  /** Called once when the task's crawl is over: before its result is uploaded
   * (`keep`), or when it was handed over (not `keep`: drop what is not sent).
   * Must not throw: a sink reports its own failures. */
  end?(o: { keep: boolean }): Promise<void>;
}

export const WARC_INFO = {
  software: USER_AGENT,
  format: 'WARC File Format 1.1',
  conformsTo: 'http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/',
} as const;

/**
 * The worker's young generation, MB (V8 splits it into three: 2 MB semi-spaces).
 * What the worker allocates per record is mostly outside V8's heap — the block's
 * bytes, the serialised record, the gzip member — and such a buffer is freed only
 * when the small object that holds it is collected. With V8's default (16 MB
 * semi-spaces) a young collection came every ~1 000 pages and up to ~50 MB of
 * dead buffers waited for it in glibc's heap; with 2 MB ones it comes every ~100
 * and they stay a few MB. The old generation is not capped (a batch of any size
 * must fit). Measured on the manager's text export alone (20 000 pages of 20 KB):
 * peak RSS 153–165 against 199–228 MB, the same CPU per page.
 */
export const WARC_WORKER_YOUNG_GENERATION_MB = 6;

/** Starts a worker on a module next to this one (src/worker-thread.ts: also without a build step). */
function startWorker(name: string, workerData: WarcWorkerData): Worker {
  return startModuleWorker(siblingModule(import.meta.url, name), { workerData, resourceLimits: { maxYoungGenerationSizeMb: WARC_WORKER_YOUNG_GENERATION_MB } });
}

interface Pending {
  entries: number;
  bytes: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

export class WarcWriter implements ArchiveSink {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private failed: Error | null = null;
  private archiveError: Error | null = null;
  private closing = false;
  /** What ended the worker, if it did not end on close(). */
  private crashed: Error | null = null;
  private summary: WarcSummary | null = null;
  private readonly exited: Promise<void>;
  private readonly started: Promise<void>;
  private onStarted: (() => void) | null = null;
  private batch: ArchiveEntry[] = [];
  private batchBytes = 0;
  private flushTimer: NodeJS.Timeout | null = null;
  private drainWaiters: (() => void)[] = [];
  private readonly maxBacklogBytes: number;
  /** Entries written. */
  entries = 0;
  /** Entries handed over and not yet written. */
  backlog = 0;
  backlogBytes = 0;

  constructor(o: WarcWriterOptions) {
    mkdirSync(o.dir, { recursive: true });
    this.maxBacklogBytes = o.maxBacklogBytes ?? 64 * 1024 * 1024;
    const data: WarcFileSetOptions = { dir: o.dir, prefix: o.prefix, now: o.now ?? Date.now(), info: { ...WARC_INFO, ...o.info }, ...(o.maxBytes !== undefined ? { maxBytes: o.maxBytes } : {}) };
    this.worker = startWorker('worker', data);
    this.exited = new Promise((resolve) => this.worker.once('exit', () => resolve()));
    this.started = new Promise((resolve) => {
      this.onStarted = resolve;
    });
    void this.exited.then(() => this.onStarted?.());
    // The thread keeps the process alive only while entries are on their way.
    this.worker.unref();
    this.worker.on('message', (m: WarcReply) => this.settle(m));
    this.worker.on('error', (err) => {
      this.crashed = err;
      this.fail(err);
    });
    this.worker.on('exit', () => {
      if (this.summary === null) this.fail(new Error('the WARC worker has stopped'));
    });
  }

  /** The V8 limits the worker thread runs with, as the thread reports them (its young
   * generation is WARC_WORKER_YOUNG_GENERATION_MB; the rest V8's defaults); empty once it ended. */
  get workerLimits(): { maxYoungGenerationSizeMb?: number; maxOldGenerationSizeMb?: number } {
    return this.worker.resourceLimits ?? {};
  }

  /** Why writing failed, if it did: the worker's end, or the first entries `archive` could not write. */
  get failure(): Error | null {
    return this.failed ?? this.archiveError;
  }

  /** Resolves once the worker has loaded (or ended): a caller that wants the
   * thread's start-up (≈ 0.3 s with the TypeScript loader) out of its way waits here. */
  ready(): Promise<void> {
    this.worker.ref();
    return this.started.then(() => {
      if (this.pending.size === 0 && !this.closing) this.worker.unref();
    });
  }

  private settle(m: WarcReply): void {
    if (m.type === 'ready') {
      this.onStarted?.();
      return;
    }
    if (m.type === 'closed') {
      this.summary = { files: m.files, counts: m.counts };
      if (m.error !== undefined) this.failed ??= new Error(m.error);
      return;
    }
    const p = this.pending.get(m.id);
    if (p === undefined) return;
    this.pending.delete(m.id);
    this.backlog -= p.entries;
    this.backlogBytes -= p.bytes;
    if (this.pending.size === 0 && !this.closing) this.worker.unref();
    if (m.error !== undefined) p.reject(new Error(m.error));
    else {
      this.entries += p.entries;
      p.resolve();
    }
    this.wakeDrainers();
  }

  private wakeDrainers(): void {
    if (this.backlogBytes > this.maxBacklogBytes / 2 && this.failed === null) return;
    const w = this.drainWaiters.splice(0);
    for (const f of w) f();
  }

  /** The worker is gone: what it had not written is reported lost. */
  private fail(err: Error): void {
    this.failed ??= err;
    for (const [id, p] of this.pending) {
      this.pending.delete(id);
      this.backlog -= p.entries;
      this.backlogBytes -= p.bytes;
      p.reject(this.failed);
    }
    this.wakeDrainers();
  }

  /** Writes entries, in call order (safe to call concurrently); resolves once they are written. */
  append(entries: ArchiveEntry[]): Promise<void> {
    if (this.failed !== null) return Promise.reject(this.failed);
    if (this.closing) return Promise.reject(new Error('the WARC writer is closed'));
    if (entries.length === 0) return Promise.resolve();
    const id = ++this.nextId;
    let bytes = 0;
    for (const e of entries) bytes += entryBytes(e);
    this.backlog += entries.length;
    this.backlogBytes += bytes;
    if (this.pending.size === 0) this.worker.ref();
    return new Promise<void>((resolve, reject) => {
      this.pending.set(id, { entries: entries.length, bytes, resolve, reject });
      // The packed buffer is the writer's own: transferred, not copied.
      const batch = packEntries(entries);
      this.worker.postMessage({ type: 'append', id, batch } satisfies WarcRequest, [batch.bytes.buffer as ArrayBuffer]);
    });
  }

  /** Queues one entry (batched with the others of this event-loop turn). A
   * failure is kept and reported by `failure` and close(); the promise
   * returned while the worker lags resolves when it has caught up. */
  archive(entry: ArchiveEntry): void | Promise<void> {
    if (this.failed !== null || this.closing) return;
    this.batch.push(entry);
    this.batchBytes += entryBytes(entry);
    if (this.batchBytes >= 1 << 20 || this.batch.length >= 256) this.flush();
    else if (this.flushTimer === null) {
      this.flushTimer = setTimeout(() => this.flush(), 10);
      this.flushTimer.unref(); // close() flushes what is left
    }
    if (this.backlogBytes + this.batchBytes <= this.maxBacklogBytes) return;
    return new Promise<void>((resolve) => this.drainWaiters.push(resolve));
  }

  private flush(): void {
    if (this.flushTimer !== null) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    if (this.batch.length === 0) return;
    const b = this.batch;
    this.batch = [];
    this.batchBytes = 0;
    this.append(b).catch((err: Error) => {
      this.archiveError ??= err;
    });
  }

  /** Writes what was handed over, closes the file (writing its index) and ends
   * the worker. Rejects if writing failed; what was not written is lost. */
  async close(): Promise<WarcSummary> {
    this.flush();
    if (this.failed === null && !this.closing) {
      this.closing = true;
      this.worker.ref();
      this.worker.postMessage({ type: 'close' } satisfies WarcRequest);
    }
    this.closing = true;
    await this.exited;
    if (this.crashed !== null) throw this.crashed;
    if (this.summary === null) throw this.failed ?? new Error('the WARC worker has stopped');
    if (this.failed !== null) throw this.failed;
    return this.summary;
  }
}
