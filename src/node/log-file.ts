// The volunteer's log in its data directory, bounded in size: when the file
// would pass maxBytes it becomes volunteer.log.1 (the older ones move up, the
// oldest is dropped) and a new file starts. A pino destination (it has
// write(string)). Writes are synchronous appends: a volunteer logs a few lines
// a minute, nothing buffered is lost when the process dies, and no worker
// thread is spent on it — why not pino-roll, which runs as a pino transport in
// a worker thread, or rotating-file-stream, an asynchronous stream, for the
// same rotate-by-size these sixty lines do.
import { closeSync, fstatSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';

export interface RotatingFileOptions {
  path: string;
  /** Size at which the file is rotated (default 10 MiB). */
  maxBytes?: number;
  /** Rotated files kept beside the current one (default 3). */
  keep?: number;
}

export class RotatingFile {
  private fd: number;
  private size: number;
  readonly maxBytes: number;
  readonly keep: number;

  constructor(private readonly opts: RotatingFileOptions) {
    this.maxBytes = opts.maxBytes ?? 10 * 1024 * 1024;
    this.keep = opts.keep ?? 3;
    if (!(this.maxBytes > 0) || !(this.keep >= 0)) throw new RangeError('maxBytes must be > 0 and keep >= 0');
    this.fd = openSync(opts.path, 'a', 0o600);
    this.size = fstatSync(this.fd).size;
  }

  /** Appends one chunk (pino writes one line per call); rotates first if it would not fit. */
  write(chunk: string | Uint8Array): boolean {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (this.size > 0 && this.size + buf.length > this.maxBytes) this.rotate();
    writeSync(this.fd, buf);
    this.size += buf.length;
    return true;
  }

  private rotate(): void {
    closeSync(this.fd);
    const p = this.opts.path;
    if (this.keep === 0) rmSync(p, { force: true });
    else {
      rmSync(`${p}.${this.keep}`, { force: true });
      for (let i = this.keep - 1; i >= 1; i--) {
        try {
          renameSync(`${p}.${i}`, `${p}.${i + 1}`);
        } catch {
          // not there yet
        }
      }
      renameSync(p, `${p}.1`);
    }
    this.fd = openSync(p, 'a', 0o600);
    this.size = 0;
  }

  close(): void {
    closeSync(this.fd);
  }
}
