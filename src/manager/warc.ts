// The manager's WARC files. The text export (always, unless --no-warc): every
// stored page version becomes a WARC `conversion` record — Common Crawl's WET
// form: text/plain, WARC-Target-URI the page, WARC-Date its fetch time — with
// the crawl metadata (channel, version, status, digest, validators, title,
// task, crawler) in Volcrawl-* extension fields, each value through the WARC
// module's one field sanitiser. The network archive (`--archive full`): the
// response, revisit and request records of the exchanges volunteers upload
// (services/archive.ts checks them), in files of their own
// (volcrawl-archive-…), which replay tools index and replay.
//
// Files: <dir>/volcrawl-text-<start time>-<serial>.warc.gz, rotated at
// `maxBytes` (default 1 GB), each with a warcinfo record naming the file (no
// local path) and, once closed, a sorted CDXJ index beside it
// (volcrawl-text-….cdxj). The database is the source of truth; these files are
// an append-only export, written by the WARC module's worker thread
// (src/crawler/warc/): the thread that validates and commits uploads only
// posts the pages.
import { WarcWriter } from '../crawler/warc/writer.js';
import { DEFAULT_WARC_MAX_BYTES } from '../crawler/warc/files.js';
import type { ArchiveEntry, ConversionPage } from '../crawler/warc/record.js';

export type WarcPage = ConversionPage;

export const TEXT_EXPORT_PREFIX = 'volcrawl-text';
export const ARCHIVE_PREFIX = 'volcrawl-archive';

export class WarcExporter {
  private readonly writer: WarcWriter;

  constructor(dir: string, maxBytes = DEFAULT_WARC_MAX_BYTES, now = Date.now()) {
    this.writer = new WarcWriter({ dir, prefix: TEXT_EXPORT_PREFIX, maxBytes, now, info: { description: 'volcrawl manager text export: WET-like conversion records of extracted page text' } });
  }

  /** Pages written. */
  get records(): number {
    return this.writer.entries;
  }

  /** Pages handed to append() and not yet written. */
  get backlog(): number {
    return this.writer.backlog;
  }

  /** Resolves once the writer's thread has started (≈ 0.3 s with the TypeScript loader). */
  ready(): Promise<void> {
    return this.writer.ready();
  }

  /** Appends pages, in call order (safe to call concurrently); resolves once they are written. */
  append(pages: WarcPage[]): Promise<void> {
    return this.writer.append(pages.map((page) => ({ kind: 'conversion' as const, page })));
  }

  /** Writes what was appended, closes the file (writing its index) and ends the
   * worker; rejects if the worker failed (what it had not written is lost). */
  async close(): Promise<void> {
    await this.writer.close();
  }
}

/** The network archive: the exchanges volunteers upload, as response/revisit and request records. */
export class ArchiveWriter {
  private readonly writer: WarcWriter;

  constructor(dir: string, maxBytes = DEFAULT_WARC_MAX_BYTES, now = Date.now()) {
    this.writer = new WarcWriter({
      dir,
      prefix: ARCHIVE_PREFIX,
      maxBytes,
      now,
      info: { description: 'volcrawl network archive: the exchanges volunteers crawled, as received (response, revisit and request records)', robots: 'obey' },
    });
  }

  /** Entries written. */
  get entries(): number {
    return this.writer.entries;
  }

  ready(): Promise<void> {
    return this.writer.ready();
  }

  /** Writes the entries' records, in call order; resolves once they are written. */
  append(entries: ArchiveEntry[]): Promise<void> {
    return this.writer.append(entries);
  }

  async close(): Promise<void> {
    await this.writer.close();
  }
}
