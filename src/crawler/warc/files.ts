// A series of .warc.gz files in one directory: records appended as gzip
// members with synchronous writes (the caller is a worker thread, so this
// blocks nobody), a new file once `maxBytes` is reached, each file opening
// with its warcinfo record (its name, never a local path) and every other
// record carrying that record's id in WARC-Warcinfo-ID. When a file is closed
// (rotation or close) its CDXJ index goes beside it: name.warc.gz →
// name.cdxj, sorted. A .warc.gz without its .cdxj is still being written, or
// its writer was killed (then `cdxj-indexer` makes the index).
//
// Files are named <prefix>-<start time>-<serial>.warc.gz (IIPC's
// Prefix-Timestamp-Serial) and opened exclusively: never appended to or
// overwritten.
import { closeSync, openSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { cdxjLine, sortCdxj } from './cdxj.js';
import { gzipMember, serialise, warcinfoRecord, type WarcRecord } from './record.js';

export interface WarcFileSetOptions {
  dir: string;
  /** File name prefix, e.g. "crawl" or "volcrawl-text". */
  prefix: string;
  /** Start a new file once this many bytes are written (default 1 GB, as Heritrix and wget do). */
  maxBytes?: number;
  /** Start time (epoch ms): the files' timestamp and their warcinfo date. */
  now: number;
  /** The warcinfo block's fields (software, format, operator, robots …). */
  info: Record<string, string | number | undefined>;
  /** gzip level per record (default 1). */
  gzipLevel?: number;
}

export const DEFAULT_WARC_MAX_BYTES = 1_000_000_000;

/** Records written, by WARC-Type. */
export type RecordCounts = Partial<Record<WarcRecord['type'], number>>;

export interface ClosedFile {
  name: string;
  bytes: number;
  records: number;
  index: string;
}

export class WarcFileSet {
  private fd: number | null = null;
  private name = '';
  private bytes = 0;
  private records = 0;
  private seq = 0;
  private warcinfoId = '';
  private index: string[] = [];
  private readonly stamp: string;
  private readonly maxBytes: number;
  readonly closed: ClosedFile[] = [];
  readonly counts: RecordCounts = {};

  constructor(private readonly o: WarcFileSetOptions) {
    this.stamp = new Date(o.now).toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
    this.maxBytes = o.maxBytes ?? DEFAULT_WARC_MAX_BYTES;
    if (!(this.maxBytes > 0)) throw new RangeError(`maxBytes must be positive, got ${this.maxBytes}`);
  }

  /** The file being written, if any. */
  get current(): string | null {
    return this.fd === null ? null : this.name;
  }

  /** Appends the records in one write, each as its own gzip member; a new file
   * is started between appends once `maxBytes` is reached (so a file may
   * exceed it by one append). */
  append(records: readonly WarcRecord[]): void {
    if (records.length === 0) return;
    const fd = this.open();
    const members: Buffer[] = [];
    const lines: string[] = [];
    let offset = this.bytes;
    for (const r of records) {
      const gz = gzipMember(serialise(r, this.warcinfoId), this.o.gzipLevel);
      members.push(gz);
      if (r.index !== null) lines.push(cdxjLine(r.index, offset, gz.length, this.name));
      offset += gz.length;
    }
    try {
      this.write(fd, members.length === 1 ? (members[0] as Buffer) : Buffer.concat(members));
    } catch (err) {
      // Whatever part of the append reached the file ends it; the next append starts a new one.
      this.close();
      throw err;
    }
    // Counted only once written: a failed write leaves no index line for bytes that are not there.
    for (const l of lines) this.index.push(l);
    for (const r of records) this.counts[r.type] = (this.counts[r.type] ?? 0) + 1;
    this.records += records.length;
  }

  private write(fd: number, buf: Uint8Array): void {
    for (let off = 0; off < buf.byteLength; ) off += writeSync(fd, buf, off);
    this.bytes += buf.byteLength;
  }

  private open(): number {
    if (this.fd !== null && this.bytes < this.maxBytes) return this.fd;
    this.close();
    this.seq++;
    const name = `${this.o.prefix}-${this.stamp}-${String(this.seq).padStart(5, '0')}.warc.gz`;
    const fd = openSync(join(this.o.dir, name), 'wx');
    this.fd = fd;
    this.name = name;
    this.bytes = 0;
    this.records = 0;
    this.index = [];
    const info = warcinfoRecord(name, this.o.now, this.o.info);
    this.warcinfoId = info.id;
    this.write(fd, gzipMember(serialise(info), this.o.gzipLevel));
    this.counts.warcinfo = (this.counts.warcinfo ?? 0) + 1;
    this.records = 1;
    return fd;
  }

  /** Closes the current file and writes its index beside it (written to a
   * temporary name first, so a .cdxj is always whole). */
  close(): void {
    if (this.fd === null) return;
    const fd = this.fd;
    this.fd = null;
    closeSync(fd);
    const index = this.name.replace(/\.warc\.gz$/, '.cdxj');
    const tmp = join(this.o.dir, `.${index}.tmp`);
    writeFileSync(tmp, sortCdxj(this.index).join(''));
    renameSync(tmp, join(this.o.dir, index));
    this.closed.push({ name: this.name, bytes: this.bytes, records: this.records, index });
    this.index = [];
  }
}
