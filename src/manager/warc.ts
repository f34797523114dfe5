// WARC export of stored pages. Volunteers upload extracted text, not the raw
// HTTP response, so each stored page version becomes a WARC 'conversion' record
// (text/plain, WARC-Target-URI = the page, WARC-Date = fetch time) whose crawl
// metadata (channel, version, status, digest, validators, title, task, crawler)
// rides in Volcrawl-* extension fields. Written with warcio (the library
// `volunteer-crawler crawl` uses; its WarcWriter is private to that command and
// writes 'response' records from raw bodies, which the manager never has).
// Files rotate at `maxBytes`: <dir>/volcrawl-<start time>-<seq>.warc.gz.
// The database is the source of truth; WARC files are an append-only export.
import { once } from 'node:events';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { WARCRecord, WARCSerializer } from 'warcio';
import { USER_AGENT } from '../crawler/limits.js';

export interface WarcPage {
  url: string;
  fetchedAt: number;
  /** The page text, or its UTF-8 bytes when the caller already has them (the
   * storage module encodes each text once, for LevelDB and for this file). */
  text: string | Uint8Array;
  meta: Record<string, unknown>;
}

/** `lastModified` → `Volcrawl-Last-Modified`. Metadata keys are a small fixed set
 * (a page version's fields), so the names are derived once, not per record. */
const fieldNames = new Map<string, string>();
function fieldName(key: string): string {
  let name = fieldNames.get(key);
  if (name === undefined) {
    name = `Volcrawl-${key.replace(/[A-Z]/g, (c) => '-' + c).replace(/^./, (c) => c.toUpperCase())}`;
    if (fieldNames.size < 256) fieldNames.set(key, name);
  }
  return name;
}

/** A header value on one line (a title or ETag may hold a line break), bounded. */
function fieldValue(v: unknown): string {
  const text = String(v);
  return (/[\r\n]/.test(text) ? text.replace(/[\r\n]+/g, ' ') : text).slice(0, 1000);
}

export class WarcExporter {
  private out: WriteStream | null = null;
  private bytes = 0;
  private seq = 0;
  private readonly stamp: string;
  private chain: Promise<void> = Promise.resolve();
  records = 0;
  /** Pages handed to append() and not yet written. */
  backlog = 0;

  constructor(
    private readonly dir: string,
    private readonly maxBytes = 1 << 30,
    now = Date.now(),
  ) {
    mkdirSync(dir, { recursive: true });
    this.stamp = new Date(now).toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
  }

  /** Appends one or more whole records; a new file is started once `maxBytes` is
   * reached (checked between writes, so a file may exceed it by one append). */
  private async write(buf: Uint8Array): Promise<void> {
    if (this.out === null || this.bytes >= this.maxBytes) {
      if (this.out !== null) {
        this.out.end();
        await once(this.out, 'finish');
      }
      this.seq++;
      const name = join(this.dir, `volcrawl-${this.stamp}-${String(this.seq).padStart(5, '0')}.warc.gz`);
      this.out = createWriteStream(name, { flags: 'a' });
      this.bytes = 0;
      const info = WARCRecord.createWARCInfo({ filename: name, warcVersion: 'WARC/1.1' }, { software: USER_AGENT, format: 'WARC File Format 1.1' });
      const ib = await WARCSerializer.serialize(info, { gzip: true });
      this.bytes += ib.byteLength;
      if (!this.out.write(ib)) await once(this.out, 'drain');
    }
    this.bytes += buf.byteLength;
    if (!this.out.write(buf)) await once(this.out, 'drain');
  }

  /** One record as its own gzip member (as WARC.gz requires). The block digest is
   * computed here with node:crypto and set on the record, so warcio does not hash
   * again. Compression is synchronous at level 1: for a 20 KB page zlib's async
   * API (a Transform stream and two thread-pool round trips per record) cost
   * about 100 µs of CPU more than the compression itself (docs/manager.md). */
  private async record(p: WarcPage): Promise<Uint8Array> {
    const body = typeof p.text === 'string' ? Buffer.from(p.text, 'utf8') : p.text;
    const digest = 'sha256:' + createHash('sha256').update(body).digest('hex');
    const headers: Record<string, string> = { 'Content-Type': 'text/plain; charset=utf-8', 'WARC-Block-Digest': digest, 'WARC-Payload-Digest': digest };
    // The crawl metadata rides along as extension fields (WARC 1.1 §5: other named fields may be used).
    for (const k in p.meta) {
      const v = p.meta[k];
      if (v !== undefined && v !== null) headers[fieldName(k)] = fieldValue(v);
    }
    const rec = WARCRecord.create({ url: p.url, date: new Date(p.fetchedAt).toISOString(), type: 'conversion', warcVersion: 'WARC/1.1', warcHeaders: headers }, [body]);
    const raw = await WARCSerializer.serialize(rec, { gzip: false });
    return gzipSync(raw, { level: 1 });
  }

  /** Appends pages in call order (safe to call concurrently). The work runs in
   * the export chain, after the caller's acknowledgement, and the records of one
   * call go to the file in one write. */
  append(pages: WarcPage[]): Promise<void> {
    this.backlog += pages.length;
    const job = this.chain.then(async () => {
      try {
        const members: Uint8Array[] = [];
        for (const p of pages) members.push(await this.record(p));
        if (members.length > 0) await this.write(members.length === 1 ? members[0]! : Buffer.concat(members));
        this.records += pages.length;
      } finally {
        this.backlog -= pages.length;
      }
    });
    this.chain = job.catch(() => undefined);
    return job;
  }

  async close(): Promise<void> {
    await this.chain;
    if (this.out !== null) {
      this.out.end();
      await once(this.out, 'finish');
      this.out = null;
    }
  }
}
