// The manager's database: one LevelDB (classic-level) in <data-dir>/db, JSON
// values, string keys from the key table (keys.ts). Every accepted change is
// written with one atomic batch before it is acknowledged, so a crash (even
// kill -9) loses nothing that was acknowledged: LevelDB appends the batch to its
// write-ahead log before the write returns. With `sync: true` the log is also
// fsynced (power-loss safe, slower); see docs/manager.md.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Level } from 'level';
import type { AbstractBatchOperation } from 'abstract-level';
import { StoreLockedError } from '../errors.js';
import type { KeyRange } from './keys.js';
import { TextStore } from './text-store.js';

export type BatchOp = { type: 'put'; key: string; value: unknown; valueEncoding?: 'utf8' } | { type: 'del'; key: string };

/** LevelDB's memtable size (see Store.open). */
export const WRITE_BUFFER_BYTES = 8 * 1024 * 1024;

/** Where LevelDB cuts a compaction's output into table files (its default; was 8 MB). LevelDB
 * maps the table files it reads, and a compaction reads its inputs whole — up to 25 files'
 * worth, plus up to 10 of the next level — so the mapped tables counted in RSS while one runs
 * follow this size: 90–110 MB at 3 M channels with 8 MB files, ≈ 25 MB with 2 MB
 * (docs/manager.md, "Lowering the peak (session 6)"). A memtable flush still writes one file. */
export const MAX_FILE_BYTES = 2 * 1024 * 1024;

/** Past the last key of a range: '\uffff' sorts after every character a key uses. */
const END = '\uffff';

function bounds(r: KeyRange, after?: string): { gt?: string; gte?: string; lt: string } {
  const lt = r.to ?? r.prefix + END;
  return after !== undefined ? { gt: r.prefix + after, lt } : { gte: r.from ?? r.prefix, lt };
}

/** Chunks of a key range in key order (whole keys). */
export interface RangeReader<T> {
  /** Up to n entries; fewer only at the end of the range. */
  next(n: number): Promise<{ key: string; value: T }[]>;
  close(): Promise<void>;
}

export class Store {
  private constructor(
    private readonly db: Level<string, unknown>,
    readonly dir: string,
    private readonly sync: boolean,
    /** Page texts (append-only segment files beside the database, see text-store.ts). */
    readonly texts: TextStore,
  ) {}

  /** Opens (creating) the database. Throws StoreLockedError when another
   * process (a running `dht-manager serve`) holds it. */
  static async open(dataDir: string, opts: { sync?: boolean } = {}): Promise<Store> {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const dir = join(dataDir, 'db');
    // The write buffer: uploads write 20 KB page texts, and LevelDB's default 4 MB memtable
    // would flush (and stall writers on level-0 files) every ~200 pages; 32 MB cost ≈ 50 MB
    // more RSS than 8 MB (two memtables while one flushes, and glibc keeping what they
    // freed), for an ingest rate that could not be told apart under load (docs/manager.md).
    const db = new Level<string, unknown>(dir, { valueEncoding: 'json', writeBufferSize: WRITE_BUFFER_BYTES, maxFileSize: MAX_FILE_BYTES });
    try {
      await db.open();
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      const text = `${(err as Error).message} ${cause?.message ?? ''}`;
      if (cause?.code === 'LEVEL_LOCKED' || /lock/i.test(text)) {
        throw new StoreLockedError(`the database in ${dataDir} is locked by another process (is 'dht-manager serve' running? use its HTTP API instead)`);
      }
      throw err;
    }
    let texts: TextStore;
    try {
      texts = await TextStore.open(dataDir, opts);
    } catch (err) {
      await db.close();
      throw err;
    }
    return new Store(db, dir, opts.sync ?? false, texts);
  }

  async get<T>(key: string): Promise<T | undefined> {
    return (await this.db.get(key)) as T | undefined;
  }

  async getMany<T>(keys: string[]): Promise<(T | undefined)[]> {
    if (keys.length === 0) return [];
    return (await this.db.getMany(keys)) as (T | undefined)[];
  }

  /** Values stored with valueEncoding 'utf8' (page texts of databases written before the text store). */
  async getManyText(keys: string[]): Promise<(string | undefined)[]> {
    if (keys.length === 0) return [];
    return (await this.db.getMany<string, string>(keys, { valueEncoding: 'utf8' })) as (string | undefined)[];
  }

  async batch(ops: BatchOp[]): Promise<void> {
    if (ops.length === 0) return;
    // Two ways to one atomic write. The array form clones every operation and keeps the
    // clones and their encoded JSON until the write returns — long enough for V8 to
    // promote them to the old generation, whose garbage waits for a full collection.
    // A chained batch hands each operation to LevelDB's native batch as it is added, so
    // they die young; but classic-level frees that native batch only when its JS object
    // is collected, so a batch carrying page texts (hundreds of KB) would sit in the
    // malloc heap until then. Chained for the many small records (scheduling, task
    // records), the array form for page texts.
    if (ops.some((op) => op.type === 'put' && op.valueEncoding !== undefined)) {
      await this.db.batch(ops as AbstractBatchOperation<Level<string, unknown>, string, unknown>[], { sync: this.sync });
      return;
    }
    const b = this.db.batch();
    try {
      for (const op of ops) {
        if (op.type === 'del') b.del(op.key);
        else b.put(op.key, op.value);
      }
    } catch (err) {
      await b.close();
      throw err;
    }
    await b.write({ sync: this.sync });
  }

  /** Entries of the range in key order, at most `limit`, starting after the key `after`. Keys
   * are returned without the range's prefix. */
  async range<T>(r: KeyRange, opts: { limit?: number; after?: string } = {}): Promise<{ rest: string; value: T }[]> {
    const out: { rest: string; value: T }[] = [];
    await this.each<T>(r, opts, (rest, value) => out.push({ rest, value }));
    return out;
  }

  /** Streams the range's entries to `fn` in chunks (for large scans at startup); returns how many. */
  async scan<T>(r: KeyRange, fn: (rest: string, value: T) => void): Promise<number> {
    return this.each<T>(r, {}, fn);
  }

  private async each<T>(r: KeyRange, opts: { limit?: number; after?: string }, fn: (rest: string, value: T) => void): Promise<number> {
    const it = this.db.iterator({ ...bounds(r, opts.after), limit: r.rest === undefined ? (opts.limit ?? -1) : -1 });
    const cut = r.prefix.length;
    const limit = opts.limit ?? Infinity;
    let n = 0;
    try {
      for (;;) {
        const batch = await it.nextv(5000);
        if (batch.length === 0) break;
        for (const [key, value] of batch) {
          const rest = key.slice(cut);
          if (r.rest !== undefined && !r.rest.test(rest)) continue;
          fn(rest, value as T);
          if (++n >= limit) return n;
        }
      }
    } finally {
      await it.close();
    }
    return n;
  }

  /** An iterator over the range from the key `from` (inclusive; default: the range's start),
   * read in chunks. It sees the database as it was when opened (LevelDB's implicit snapshot). */
  reader<T>(r: KeyRange, from?: string): RangeReader<T> {
    const b = bounds(r);
    const it = this.db.iterator({ gte: from !== undefined && from > (b.gte ?? '') ? from : b.gte, lt: b.lt });
    let done = false;
    return {
      async next(n: number) {
        const out: { key: string; value: T }[] = [];
        // nextv may return fewer than asked before the end (it caps a batch's bytes): only an
        // empty batch ends the range.
        while (!done && out.length < n) {
          const batch = await it.nextv(n - out.length);
          if (batch.length === 0) done = true;
          for (const [key, value] of batch) out.push({ key, value: value as T });
        }
        return out;
      },
      close: () => it.close(),
    };
  }

  /** Keys of the range (whole keys, for deletion), without values. */
  async keys(r: KeyRange): Promise<string[]> {
    const out: string[] = [];
    for await (const k of this.db.keys(bounds(r))) if (r.rest === undefined || r.rest.test(k.slice(r.prefix.length))) out.push(k);
    return out;
  }

  /** Deletes every key of the range. */
  async clear(r: KeyRange): Promise<void> {
    const b = bounds(r);
    await this.db.clear({ gte: b.gte, lt: b.lt });
  }

  async close(): Promise<void> {
    await this.texts.close();
    await this.db.close();
  }
}
