// The manager's database: one LevelDB (classic-level) in <data-dir>/db, JSON
// values, string keys with a short prefix per record kind. Every accepted change
// is written with one atomic batch before it is acknowledged, so a crash (even
// kill -9) loses nothing that was acknowledged: LevelDB appends the batch to its
// write-ahead log before the write returns. With `sync: true` the log is also
// fsynced (power-loss safe, slower); see docs/manager.md.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Level } from 'level';
import type { AbstractBatchOperation } from 'abstract-level';

/** Key prefixes. Keep them short: there are millions of keys. */
export const K = {
  channel: (id: string) => `c!${id}`,
  channelKey: (key: string) => `ck!${key}`,
  origin: (origin: string, id: string) => `co!${origin}!${id}`,
  originPrefix: (origin: string) => `co!${origin}!`,
  sched: (id: string) => `s!${id}`,
  history: (id: string) => `h!${id}`,
  known: (id: string) => `kn!${id}`,
  interSeeds: (id: string) => `is!${id}`,
  interDigests: (id: string) => `xd!${id}`,
  pageLatest: (id: string, url: string) => `pl!${id}!${url}`,
  pageLatestPrefix: (id: string) => `pl!${id}!`,
  pageVersion: (id: string, url: string, v: number) => `pv!${id}!${url}!${String(v).padStart(8, '0')}`,
  /** Keys of every version of one page: `pv!<id>!<url>!` followed by digits only. A
   * plain prefix scan would also match the versions of `<url>!…` (another page). */
  pageVersionRange: (id: string, url: string) => ({ gte: `pv!${id}!${url}!0`, lt: `pv!${id}!${url}!:`, rest: /^\d+$/ }),
  /** The page text of a version, stored as a raw UTF-8 string (no JSON escaping: 4× faster for 20 KB pages). */
  pageText: (id: string, url: string, v: number) => `px!${id}!${url}!${String(v).padStart(8, '0')}`,
  task: (id: string) => `t!${id}`,
  active: (id: string) => `ta!${id}`,
  candidate: (origin: string) => `cd!${origin}`,
  hostRtt: (host: string) => `hr!${host}`,
  hostCoord: (host: string) => `hc!${host}`,
  meta: (name: string) => `m!${name}`,
} as const;

export type BatchOp = { type: 'put'; key: string; value: unknown; valueEncoding?: 'utf8' } | { type: 'del'; key: string };

export class StoreLockedError extends Error {
  override name = 'StoreLockedError';
}

export class Store {
  private constructor(
    readonly db: Level<string, unknown>,
    readonly dir: string,
    private readonly sync: boolean,
  ) {}

  /** Opens (creating) the database. Throws StoreLockedError when another
   * process (a running `dht-manager serve`) holds it. */
  static async open(dataDir: string, opts: { sync?: boolean } = {}): Promise<Store> {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const dir = join(dataDir, 'db');
    // A larger write buffer: uploads write 20 KB page texts, and LevelDB's default 4 MB
    // memtable would flush (and stall writers on level-0 files) every ~200 pages.
    const db = new Level<string, unknown>(dir, { valueEncoding: 'json', writeBufferSize: 32 * 1024 * 1024, maxFileSize: 8 * 1024 * 1024 });
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
    return new Store(db, dir, opts.sync ?? false);
  }

  async get<T>(key: string): Promise<T | undefined> {
    return (await this.db.get(key)) as T | undefined;
  }

  async getMany<T>(keys: string[]): Promise<(T | undefined)[]> {
    if (keys.length === 0) return [];
    return (await this.db.getMany(keys)) as (T | undefined)[];
  }

  /** Values stored with valueEncoding 'utf8' (page texts). */
  async getManyText(keys: string[]): Promise<(string | undefined)[]> {
    if (keys.length === 0) return [];
    return (await this.db.getMany<string, string>(keys, { valueEncoding: 'utf8' })) as (string | undefined)[];
  }

  async batch(ops: BatchOp[]): Promise<void> {
    if (ops.length === 0) return;
    await this.db.batch(ops as AbstractBatchOperation<Level<string, unknown>, string, unknown>[], { sync: this.sync });
  }

  /** Entries whose key starts with `prefix`, in key order, at most `limit`. */
  async range<T>(prefix: string, opts: { limit?: number; after?: string } = {}): Promise<{ key: string; value: T }[]> {
    const out: { key: string; value: T }[] = [];
    const it = this.db.iterator({
      ...(opts.after !== undefined ? { gt: opts.after } : { gte: prefix }),
      lt: prefix + '\uffff',
      limit: opts.limit ?? -1,
    });
    try {
      for (;;) {
        const batch = await it.nextv(1000);
        if (batch.length === 0) break;
        for (const [key, value] of batch) out.push({ key, value: value as T });
      }
    } finally {
      await it.close();
    }
    return out;
  }

  /** Entries with keys in [gte, lt) whose remainder after `prefixLength` characters matches `rest`. */
  async between<T>(r: { gte: string; lt: string; rest: RegExp }, prefixLength: number): Promise<{ key: string; value: T }[]> {
    const out: { key: string; value: T }[] = [];
    for await (const [key, value] of this.db.iterator({ gte: r.gte, lt: r.lt })) if (r.rest.test(key.slice(prefixLength))) out.push({ key, value: value as T });
    return out;
  }

  /** Streams entries with `prefix` to `fn` in chunks (for large scans at startup). */
  async scan<T>(prefix: string, fn: (key: string, value: T) => void, chunk = 5000): Promise<number> {
    const it = this.db.iterator({ gte: prefix, lt: prefix + '\uffff' });
    let n = 0;
    try {
      for (;;) {
        const batch = await it.nextv(chunk);
        if (batch.length === 0) break;
        for (const [key, value] of batch) {
          fn(key, value as T);
          n++;
        }
      }
    } finally {
      await it.close();
    }
    return n;
  }

  /** Keys with `prefix`, without values. */
  async keys(prefix: string, limit = -1): Promise<string[]> {
    const out: string[] = [];
    for await (const k of this.db.keys({ gte: prefix, lt: prefix + '\uffff', limit })) out.push(k);
    return out;
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}
