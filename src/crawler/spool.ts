// The upload spool: changed pages and validators written to a temp file while
// crawling (paper §2.2) and read back in order for the upload. Page text is
// stored raw after a small JSON header, so it is never JSON-escaped.
//   v<json>\n                       a validator
//   p<json without text>\t<bytes>\n<text bytes>   a page
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { PageRecord, ValidatorRecord } from './task.js';

export type SpoolRecord = { kind: 'p'; page: PageRecord } | { kind: 'v'; validator: ValidatorRecord };

export class Spool {
  private dir: string | null = null;
  private fd: number | null = null;
  private buf: string[] = [];
  private bufLen = 0;
  private written = 0;

  constructor(private readonly tmpDir: string) {}

  get bytes(): number {
    return this.written + this.bufLen;
  }

  addPage(p: PageRecord): void {
    const { text, ...meta } = p;
    this.push(`p${JSON.stringify(meta)}\t${Buffer.byteLength(text, 'utf8')}\n`);
    this.push(text);
  }

  addValidator(v: ValidatorRecord): void {
    this.push(`v${JSON.stringify(v)}\n`);
  }

  private push(s: string): void {
    this.buf.push(s);
    this.bufLen += s.length;
    // A small buffer: page text written out quickly dies young instead of being promoted to the old generation.
    if (this.bufLen >= 32 * 1024) this.flush();
  }

  flush(): void {
    if (this.bufLen === 0) return;
    if (this.fd === null) {
      this.dir = mkdtempSync(join(this.tmpDir, 'volcrawl-spool-'));
      this.fd = openSync(join(this.dir, 'records'), 'w+');
    }
    this.written += writeSync(this.fd, this.buf.join(''), null, 'utf8');
    this.buf = [];
    this.bufLen = 0;
  }

  /** Reads every record back in order. */
  *read(): Generator<SpoolRecord> {
    this.flush();
    if (this.fd === null) return;
    const fd = this.fd;
    let chunk = Buffer.alloc(256 * 1024);
    let start = 0; // unread data is chunk[start, end)
    let end = 0;
    let pos = 0; // file offset of the next read
    const fill = (need: number): boolean => {
      // Ensures `need` unread bytes are buffered; false at end of file.
      while (end - start < need) {
        if (start > 0) {
          chunk.copy(chunk, 0, start, end);
          end -= start;
          start = 0;
        }
        if (need > chunk.length) {
          const bigger = Buffer.alloc(Math.max(need, chunk.length * 2));
          chunk.copy(bigger, 0, 0, end);
          chunk = bigger;
        }
        const n = readSync(fd, chunk, end, chunk.length - end, pos);
        if (n === 0) return false;
        pos += n;
        end += n;
      }
      return true;
    };
    for (;;) {
      let nl = chunk.indexOf(10, start);
      while (nl < 0 || nl >= end) {
        const had = end - start;
        if (!fill(had + 1)) return;
        nl = chunk.indexOf(10, start);
      }
      const line = chunk.toString('utf8', start, nl);
      start = nl + 1;
      if (line[0] === 'v') {
        yield { kind: 'v', validator: JSON.parse(line.slice(1)) as ValidatorRecord };
      } else {
        const tab = line.lastIndexOf('\t');
        const n = Number(line.slice(tab + 1));
        if (!fill(n)) throw new Error('spool truncated');
        const text = chunk.toString('utf8', start, start + n);
        start += n;
        const meta = JSON.parse(line.slice(1, tab)) as Omit<PageRecord, 'text'>;
        yield { kind: 'p', page: { ...meta, text } };
      }
    }
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.dir = null;
    this.buf = [];
    this.bufLen = 0;
  }
}
