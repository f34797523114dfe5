// Page texts outside LevelDB: append-only segment files in <data-dir>/texts, each text
// referenced from its version's metadata record (K.pageVersion) by segment, offset and length.
// LevelDB rewrote every 20 KB text at each level it compacted through (≈ 200 µs of CPU per
// stored page at 3 M channels, and the mapped tables those compactions read); a segment file
// is written once. Crash safety comes from the order: the texts are written (pwrite, fsynced
// first with --sync) before the batch that references them is committed, so a reference never
// points at bytes that are not there; what a crash or a refused upload leaves unreferenced is
// dead space, as is what a deleted channel's versions referenced (no reclamation yet, see
// docs/manager.md). Databases written before this keep their texts in LevelDB (K.pageText); both are read.
import { constants, mkdirSync, readdirSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

/** Where a text lies: segment number, byte offset, byte length (UTF-8). */
export type TextRef = [segment: number, offset: number, length: number];

/** A segment file is closed for appends once it reaches this size. */
export const SEGMENT_BYTES = 256 * 1024 * 1024;
/** Segments kept open for reading beside the one being appended to. */
const OPEN_READERS = 8;

const NAME = /^seg-(\d{6})\.txt$/;
const name = (n: number): string => `seg-${String(n).padStart(6, '0')}.txt`;
// Read-write, created if missing, and not O_APPEND: Linux's pwrite ignores the offset on a file
// opened for appending, and concurrent appends write at offsets reserved in advance.
const WRITE_FLAGS = constants.O_RDWR | constants.O_CREAT;

export class TextStore {
  private readonly readers = new Map<number, Promise<FileHandle>>();
  private rotating: Promise<void> | undefined;
  private constructor(
    readonly dir: string,
    private readonly sync: boolean,
    private segment: number,
    private writer: FileHandle,
    private size: number,
    private readonly segmentBytes: number,
  ) {}

  /** `segmentBytes` (default SEGMENT_BYTES) is for tests. */
  static async open(dataDir: string, opts: { sync?: boolean; segmentBytes?: number } = {}): Promise<TextStore> {
    const dir = join(dataDir, 'texts');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const last = readdirSync(dir).reduce((m, f) => Math.max(m, Number(NAME.exec(f)?.[1] ?? -1)), -1);
    const segment = Math.max(0, last);
    // New texts go after whatever the file holds (a crash may have left an unreferenced tail).
    const writer = await open(join(dir, name(segment)), WRITE_FLAGS, 0o600);
    const { size } = await writer.stat();
    return new TextStore(dir, opts.sync ?? false, segment, writer, size, opts.segmentBytes ?? SEGMENT_BYTES);
  }

  /** Writes the texts (one write for all of them) and returns where each lies. */
  async append(texts: string[]): Promise<TextRef[]> {
    if (texts.length === 0) return [];
    const lengths = texts.map((t) => Buffer.byteLength(t, 'utf8'));
    const total = lengths.reduce((a, b) => a + b, 0);
    while (this.size > 0 && this.size + total > this.segmentBytes) await (this.rotating ??= this.rotate().finally(() => (this.rotating = undefined)));
    const segment = this.segment;
    const writer = this.writer;
    const start = this.size;
    this.size += total; // reserved now: concurrent appends write disjoint ranges
    const buf = Buffer.allocUnsafe(total);
    const refs: TextRef[] = [];
    let at = 0;
    for (let i = 0; i < texts.length; i++) {
      buf.write(texts[i]!, at, 'utf8');
      refs.push([segment, start + at, lengths[i]!]);
      at += lengths[i]!;
    }
    let done = 0;
    while (done < total) done += (await writer.write(buf, done, total - done, start + done)).bytesWritten;
    if (this.sync) await writer.datasync();
    return refs;
  }

  private async rotate(): Promise<void> {
    const old = this.writer;
    const next = this.segment + 1;
    const writer = await open(join(this.dir, name(next)), WRITE_FLAGS, 0o600);
    if (this.sync) {
      const d = await open(this.dir, 'r');
      await d.sync().finally(() => d.close());
    }
    // The old handle becomes a reader: writes still in flight on it finish there.
    this.readers.set(this.segment, Promise.resolve(old));
    this.segment = next;
    this.writer = writer;
    this.size = 0;
  }

  /** The texts at these references (in order). */
  async read(refs: TextRef[]): Promise<string[]> {
    return Promise.all(
      refs.map(async ([segment, offset, length]) => {
        const fh = segment === this.segment ? this.writer : await this.reader(segment);
        const buf = Buffer.allocUnsafe(length);
        let done = 0;
        while (done < length) {
          const { bytesRead } = await fh.read(buf, done, length - done, offset + done);
          if (bytesRead === 0) throw new Error(`page text ${segment}:${offset}+${length} is past the end of ${name(segment)}`);
          done += bytesRead;
        }
        return buf.toString('utf8');
      }),
    );
  }

  private reader(segment: number): Promise<FileHandle> {
    let fh = this.readers.get(segment);
    if (fh === undefined) {
      if (this.readers.size >= OPEN_READERS) {
        const [oldest, h] = this.readers.entries().next().value as [number, Promise<FileHandle>];
        this.readers.delete(oldest);
        setTimeout(() => void h.then((x) => x.close()).catch(() => undefined), 10_000).unref();
      }
      fh = open(join(this.dir, name(segment)), 'r');
      this.readers.set(segment, fh);
    }
    return fh;
  }

  async close(): Promise<void> {
    const hs = [...this.readers.values()];
    this.readers.clear();
    await Promise.all(hs.map((h) => h.then((x) => x.close()).catch(() => undefined)));
    await this.writer.close();
  }
}
