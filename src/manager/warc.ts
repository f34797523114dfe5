// WARC export of stored pages. Volunteers upload extracted text, not the raw
// HTTP response, so each stored page version becomes a WARC 'conversion' record
// (text/plain, WARC-Target-URI = the page, WARC-Date = fetch time) whose crawl
// metadata (channel, version, status, digest, validators, title, task, crawler)
// rides in Volcrawl-* extension fields. Written with warcio (the library
// `volunteer-crawler crawl` uses; its WarcWriter is private to that command and
// writes 'response' records from raw bodies, which the manager never has).
// Files rotate at `maxBytes`: <dir>/volcrawl-<start time>-<seq>.warc.gz.
// The database is the source of truth; WARC files are an append-only export.
//
// The records are built, hashed, compressed and written in a worker thread
// (warc-worker.ts, warc-file.ts): for a 20 KB page that is ~100 µs of CPU the
// main thread, which validates and commits uploads, no longer spends. Posting a
// page costs a copy of its text.
import { mkdirSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { WarcPage } from './warc-file.js';
import type { WarcReply, WarcRequest, WarcWorkerData } from './warc-worker.js';

export type { WarcPage } from './warc-file.js';

/** Starts a worker on a module next to this one. Without a build step the sources
 * are TypeScript, and tsx's loader hooks (registered on the main thread by
 * bin/run-ts.js) do not reach worker threads on Node 20: the worker registers them
 * itself before importing the module. */
function startWorker(name: string, workerData: WarcWorkerData): Worker {
  const ts = import.meta.url.endsWith('.ts');
  const url = new URL(`./${name}.${ts ? 'ts' : 'js'}`, import.meta.url);
  if (!ts) return new Worker(url, { workerData });
  const api = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const boot = `import(${api}).then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); });`;
  return new Worker(boot, { eval: true, workerData });
}

interface Pending {
  pages: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

export class WarcExporter {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private failed: Error | null = null;
  private closing = false;
  /** What ended the worker, if it did not end on close(). */
  private crashed: Error | null = null;
  private readonly exited: Promise<void>;
  records = 0;
  /** Pages handed to append() and not yet written. */
  backlog = 0;

  constructor(dir: string, maxBytes = 1 << 30, now = Date.now()) {
    mkdirSync(dir, { recursive: true });
    this.worker = startWorker('warc-worker', { dir, maxBytes, now });
    this.exited = new Promise((resolve) => this.worker.once('exit', () => resolve()));
    // The thread keeps the process alive only while pages are on their way.
    this.worker.unref();
    this.worker.on('message', (m: WarcReply) => this.settle(m));
    this.worker.on('error', (err) => {
      this.crashed = err;
      this.fail(err);
    });
    this.worker.on('exit', () => this.fail(new Error('the WARC worker has stopped')));
  }

  private settle(m: WarcReply): void {
    const p = this.pending.get(m.id);
    if (p === undefined) return;
    this.pending.delete(m.id);
    this.backlog -= p.pages;
    if (this.pending.size === 0 && !this.closing) this.worker.unref();
    if (m.error !== undefined) p.reject(new Error(m.error));
    else {
      this.records += p.pages;
      p.resolve();
    }
  }

  /** The worker is gone: what it had not written is reported lost. */
  private fail(err: Error): void {
    this.failed ??= err;
    for (const [id, p] of this.pending) {
      this.pending.delete(id);
      this.backlog -= p.pages;
      p.reject(this.failed);
    }
  }

  /** Appends pages, in call order (safe to call concurrently); resolves once they are written. */
  append(pages: WarcPage[]): Promise<void> {
    if (this.failed !== null) return Promise.reject(this.failed);
    if (this.closing) return Promise.reject(new Error('the WARC exporter is closed'));
    if (pages.length === 0) return Promise.resolve();
    const id = ++this.nextId;
    this.backlog += pages.length;
    if (this.pending.size === 0) this.worker.ref();
    return new Promise<void>((resolve, reject) => {
      this.pending.set(id, { pages: pages.length, resolve, reject });
      this.worker.postMessage({ type: 'append', id, pages } satisfies WarcRequest);
    });
  }

  /** Writes what was appended, closes the file and ends the worker; rejects if the
   * worker failed (what it had not written is lost, as append() reported). */
  async close(): Promise<void> {
    if (this.failed === null && !this.closing) {
      this.closing = true;
      this.worker.ref();
      this.worker.postMessage({ type: 'close' } satisfies WarcRequest);
    }
    await this.exited;
    if (this.crashed !== null) throw this.crashed;
  }
}
