// The WARC files themselves (warc.ts explains the record format): builds one
// 'conversion' record per page with warcio, compresses it as its own gzip member
// and appends it to <dir>/volcrawl-<start time>-<seq>.warc.gz, starting a new
// file (with its warcinfo record) once `maxBytes` is reached. Runs in the WARC
// worker thread (warc-worker.ts); single caller, calls not overlapping.
//
// The file is written with synchronous calls: that blocks only this thread, and a
// message is then handled from start to end before the next one is taken off the
// port. With a stream, each append waited for 'drain', the pages posted meanwhile
// were deserialised and queued on this thread's heap, lived long enough to be
// promoted, and the worker ran a full mark-compact every ~250 ms.
import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { WARCRecord, WARCSerializer } from 'warcio';
import { USER_AGENT } from '../crawler/limits.js';

export interface WarcPage {
  url: string;
  fetchedAt: number;
  text: string;
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

/** One record as its own gzip member (as WARC.gz requires). The block digest is
 * computed with node:crypto and set on the record, so warcio does not hash again.
 * Compression is synchronous at level 1 (this runs off the main thread): zlib's
 * async API, a Transform stream and two thread-pool round trips per record, cost
 * ~100 µs of CPU per 20 KB page on top of the ~40 µs the compression takes. */
export async function warcRecord(p: WarcPage): Promise<Buffer> {
  const body = Buffer.from(p.text, 'utf8');
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

export class WarcFile {
  private fd: number | null = null;
  private bytes = 0;
  private seq = 0;
  private readonly stamp: string;

  constructor(
    private readonly dir: string,
    private readonly maxBytes: number,
    now: number,
  ) {
    this.stamp = new Date(now).toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
  }

  /** Appends the pages' records in one write; a new file is started between
   * appends once `maxBytes` is reached (so a file may exceed it by one append). */
  async append(pages: WarcPage[]): Promise<void> {
    const members: Buffer[] = [];
    for (const p of pages) members.push(await warcRecord(p));
    if (members.length === 0) return;
    const fd = await this.current();
    this.write(fd, members.length === 1 ? members[0]! : Buffer.concat(members));
  }

  private write(fd: number, buf: Uint8Array): void {
    for (let off = 0; off < buf.byteLength; ) off += writeSync(fd, buf, off);
    this.bytes += buf.byteLength;
  }

  private async current(): Promise<number> {
    if (this.fd !== null && this.bytes < this.maxBytes) return this.fd;
    this.close();
    this.seq++;
    const name = join(this.dir, `volcrawl-${this.stamp}-${String(this.seq).padStart(5, '0')}.warc.gz`);
    const fd = openSync(name, 'a');
    this.fd = fd;
    this.bytes = 0;
    const info = WARCRecord.createWARCInfo({ filename: name, warcVersion: 'WARC/1.1' }, { software: USER_AGENT, format: 'WARC File Format 1.1' });
    this.write(fd, gzipSync(await WARCSerializer.serialize(info, { gzip: false }), { level: 1 }));
    return fd;
  }

  close(): void {
    if (this.fd === null) return;
    closeSync(this.fd);
    this.fd = null;
  }
}
