// URLtodo (paper §2.2): a FIFO of URLs to fetch holding at most `memLimit`
// entries in memory; the rest are spilled to a temp file and read back in
// order. Invariant: everything in memory was enqueued before everything in
// the spill file, so once spilling starts every push goes to the file until
// the file is drained.
import { closeSync, ftruncateSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TodoItem {
  url: string;
  depth: number;
}

export class UrlTodo {
  private mem: TodoItem[] = [];
  private head = 0;
  private dir: string | null = null;
  private fd: number | null = null;
  private writeBuf: string[] = [];
  private writeBufLen = 0;
  private fileEnd = 0; // bytes written to the file
  private readPos = 0; // bytes consumed from the file
  private spilledCount = 0; // entries currently in the spill (file + write buffer)
  private readonly readChunk = Buffer.alloc(64 * 1024);
  private carry = ''; // read-back text not yet parsed (URLs are ASCII: URL.href percent-encodes)
  private carryPos = 0;
  /** Total entries that ever went through the spill file. */
  spilledTotal = 0;

  constructor(
    private readonly memLimit = 1000,
    private readonly tmpDir = tmpdir(),
  ) {}

  get length(): number {
    return this.mem.length - this.head + this.spilledCount;
  }

  /** Entries held in memory right now. */
  get inMemory(): number {
    return this.mem.length - this.head;
  }

  push(item: TodoItem): void {
    if (this.spilledCount === 0 && this.mem.length - this.head < this.memLimit) {
      this.mem.push(item);
      return;
    }
    const line = `${item.depth}\t${item.url}\n`;
    this.writeBuf.push(line);
    this.writeBufLen += line.length;
    this.spilledCount++;
    this.spilledTotal++;
    if (this.writeBufLen >= 64 * 1024) this.flush();
  }

  shift(): TodoItem | undefined {
    if (this.head >= this.mem.length) {
      if (this.spilledCount === 0) return undefined;
      this.refill();
    }
    const item = this.mem[this.head];
    this.mem[this.head] = undefined as unknown as TodoItem;
    this.head++;
    if (this.head >= this.mem.length) {
      this.mem = [];
      this.head = 0;
    } else if (this.head > 4096 && this.head * 2 > this.mem.length) {
      this.mem = this.mem.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  private openFile(): number {
    if (this.fd === null) {
      this.dir = mkdtempSync(join(this.tmpDir, 'volcrawl-todo-'));
      this.fd = openSync(join(this.dir, 'urltodo'), 'w+');
    }
    return this.fd;
  }

  private flush(): void {
    if (this.writeBufLen === 0) return;
    const fd = this.openFile();
    const buf = Buffer.from(this.writeBuf.join(''), 'utf8');
    writeSync(fd, buf, 0, buf.length, this.fileEnd);
    this.fileEnd += buf.length;
    this.writeBuf = [];
    this.writeBufLen = 0;
  }

  /** Reads up to memLimit entries back from the spill, oldest first. */
  private refill(): void {
    this.flush();
    const fd = this.openFile();
    this.mem = [];
    this.head = 0;
    while (this.mem.length < this.memLimit && this.spilledCount > 0) {
      const nl = this.carry.indexOf('\n', this.carryPos);
      if (nl < 0) {
        this.flush();
        const n = readSync(fd, this.readChunk, 0, this.readChunk.length, this.readPos);
        if (n === 0) throw new Error('URLtodo spill file ended early');
        this.readPos += n;
        this.carry = this.carry.slice(this.carryPos) + this.readChunk.toString('latin1', 0, n);
        this.carryPos = 0;
        continue;
      }
      const line = this.carry.slice(this.carryPos, nl);
      this.carryPos = nl + 1;
      const tab = line.indexOf('\t');
      this.mem.push({ depth: Number(line.slice(0, tab)), url: line.slice(tab + 1) });
      this.spilledCount--;
    }
    if (this.spilledCount === 0) {
      // Drained: reset the file so it does not grow without bound.
      ftruncateSync(fd, 0);
      this.fileEnd = 0;
      this.readPos = 0;
      this.carry = '';
      this.carryPos = 0;
    }
  }

  /** Removes the spill file. */
  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.dir = null;
    this.mem = [];
    this.head = 0;
    this.writeBuf = [];
    this.writeBufLen = 0;
    this.spilledCount = 0;
  }
}
