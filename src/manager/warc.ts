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
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { WARCRecord, WARCSerializer } from 'warcio';
import { USER_AGENT } from '../crawler/limits.js';

const gzipAsync = promisify(gzip);

export interface WarcPage {
  url: string;
  fetchedAt: number;
  text: string;
  meta: Record<string, unknown>;
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

  /** One gzip member per record (as WARC.gz requires). The block digest is computed
   * here with node:crypto and set on the record, so warcio does not hash again;
   * compression runs on libuv's thread pool. */
  private async record(p: WarcPage): Promise<Uint8Array> {
    const body = new TextEncoder().encode(p.text);
    const digest = 'sha256:' + createHash('sha256').update(body).digest('hex');
    const headers: Record<string, string> = { 'Content-Type': 'text/plain; charset=utf-8', 'WARC-Block-Digest': digest, 'WARC-Payload-Digest': digest };
    // The crawl metadata rides along as extension fields (WARC 1.1 §5: other named fields may be used).
    for (const [k, v] of Object.entries(p.meta)) {
      if (v === undefined || v === null) continue;
      const text = String(v).replace(/[\r\n]+/g, ' ').slice(0, 1000);
      headers[`Volcrawl-${k.replace(/[A-Z]/g, (c) => '-' + c).replace(/^./, (c) => c.toUpperCase())}`] = text;
    }
    const rec = WARCRecord.create({ url: p.url, date: new Date(p.fetchedAt).toISOString(), type: 'conversion', warcVersion: 'WARC/1.1', warcHeaders: headers }, [body]);
    const raw = await WARCSerializer.serialize(rec, { gzip: false });
    return gzipAsync(raw, { level: 1 });
  }

  /** Appends pages (serialised; safe to call concurrently). */
  append(pages: WarcPage[]): Promise<void> {
    // Compress in parallel, write in order.
    this.backlog += pages.length;
    const bufs = Promise.all(pages.map((p) => this.record(p)));
    const job = this.chain.then(async () => {
      try {
        for (const b of await bufs) {
          await this.write(b);
          this.records += 1;
        }
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
