// Who is announced in a coordinate cell: the providers of its DHT key, with a
// cache that serves a known answer at once and refreshes it in the background
// once it is older than `ttlMs` (stale-while-revalidate), so only the first
// lookup of a cell ever makes a task wait for the DHT.
//
// Every holder of a provider record (the K peers closest to the key) answers
// GET_PROVIDERS with all the providers it stores, so the lookup stops after
// `responders` holders have answered — or, while each new holder still names
// providers the others did not (holders with partial lists), after up to
// `maxResponders` — instead of walking the whole query; a
// cell nobody announced still costs a full walk (and is cached as empty). An
// answer is `complete` when it is a holder's whole list and smaller than
// `denseAt` — a router then knows every crawler announced there and need not
// look at finer cells.
import type { Libp2p } from '@libp2p/interface';
import type { KadDHT } from '@libp2p/kad-dht';
import type { Logger } from 'pino';
import type { Cell } from './cells.js';
import { answerComplete, CELL_CACHE_TTL_MS, CELL_MAX_STALE_MS, DEFAULT_CELL_SEARCH, LOCAL_PROVIDER_CAP } from './cell-search.js';
import { deadlineSignal } from './wire.js';

/** Holders heard at most unless told otherwise: = the default `responders`, so
 * the lookup stops after two holders with a list (see maxResponders). */
export const DEFAULT_MAX_RESPONDERS = 2;

export interface CellProviders {
  ids: string[];
  /** Every crawler announced in the cell, as far as its record holders know. */
  complete: boolean;
}

export interface CellLookupOptions {
  libp2p: Libp2p<{ dht: KadDHT }>;
  /** How long an answer is used before it is refreshed in the background, ms. */
  ttlMs?: number;
  /** Older answers are not served: the lookup waits for a fresh one, ms. */
  maxStaleMs?: number;
  /** Record holders heard before a lookup may stop (default 2)… */
  responders?: number;
  /** …it goes on while the last holder heard added providers the others had
   * not named, up to this many holders (default 2, = responders: off). 6 was
   * tried in session 9 (#18): about 2× the GET_PROVIDERS walks per node-minute
   * while settling, and the 40-node misses it was meant for turned out to be
   * crawlers not yet announced; on only after a quiet 100-node A/B favours it.
   * It cannot act on a cell of LOCAL_PROVIDER_CAP (20) crawlers or more:
   * kad-dht 16.4.5's findProviders ends its query once that many distinct
   * providers have been named, usually by the first holder (session 10). */
  maxResponders?: number;
  /** A cell with this many providers or more counts as dense (look finer). */
  denseAt?: number;
  timeoutMs?: number;
  /** Cells remembered at most (the least recently fetched go first). */
  maxEntries?: number;
  log?: Logger;
}


interface Entry {
  at: number;
  value?: CellProviders;
  /** A fetch in progress (the first one, or a background refresh). */
  pending?: Promise<CellProviders>;
}

export class CellLookup {
  private readonly entries = new Map<string, Entry>();
  /** DHT lookups made (a figure for tests and benchmarks). */
  fetches = 0;

  constructor(private readonly o: CellLookupOptions) {}

  /** The providers of `cell`: from the cache when it has an answer young
   * enough to serve (refreshing it in the background once older than the
   * TTL), else from the DHT. Concurrent requests share one lookup. */
  providers(cell: Cell): Promise<CellProviders> {
    const now = performance.now();
    const e = this.entries.get(cell.name);
    const age = e !== undefined ? now - e.at : Infinity;
    if (e?.value !== undefined && age < (this.o.maxStaleMs ?? CELL_MAX_STALE_MS)) {
      if (age >= (this.o.ttlMs ?? CELL_CACHE_TTL_MS) && e.pending === undefined) void this.fetch(cell, e);
      return Promise.resolve(e.value);
    }
    if (e?.pending !== undefined) return e.pending;
    return this.fetch(cell, e);
  }

  /** Whether `providers(cell)` would answer at once (from the cache). */
  cached(cell: Cell): boolean {
    const e = this.entries.get(cell.name);
    return e?.value !== undefined && performance.now() - e.at < (this.o.maxStaleMs ?? CELL_MAX_STALE_MS);
  }

  /** The answer the cache holds for `cell`, if any, without fetching or
   * refreshing it (for diagnosis: which providers did the router see). */
  peek(cell: Cell): CellProviders | undefined {
    return this.entries.get(cell.name)?.value;
  }

  /** Forgets every answer (e.g. after the network changed). */
  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  private fetch(cell: Cell, existing: Entry | undefined): Promise<CellProviders> {
    const entry: Entry = existing ?? { at: -Infinity };
    const pending = this.query(cell).then(
      (value) => {
        entry.value = value;
        entry.at = performance.now();
        entry.pending = undefined;
        return value;
      },
      () => {
        entry.pending = undefined;
        return entry.value ?? { ids: [], complete: false };
      },
    );
    entry.pending = pending;
    if (existing === undefined) {
      if (this.entries.size >= (this.o.maxEntries ?? 50_000)) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(cell.name, entry);
    }
    return pending;
  }

  private async query(cell: Cell): Promise<CellProviders> {
    this.fetches++;
    const self = this.o.libp2p.peerId.toString();
    const ids = new Set<string>();
    const heard = new Set<string>();
    let truncated = false;
    let finished = false;
    const signal = deadlineSignal(this.o.timeoutMs ?? 10_000);
    try {
      for await (const ev of this.o.libp2p.services.dht.findProviders(cell.cid, { signal })) {
        // A holder's whole list comes as a PEER_RESPONSE (the PROVIDER event
        // after it carries only the providers new to the query, and none at
        // all when the holder named nobody new); the querier's own store
        // comes the same way, from itself.
        if (ev.name !== 'PEER_RESPONSE' || ev.providers.length === 0) continue;
        const from = ev.from.toString();
        if (from === self && ev.providers.length >= LOCAL_PROVIDER_CAP) truncated = true;
        const before = ids.size;
        for (const p of ev.providers) {
          ids.add(p.id.toString());
          if (p.multiaddrs.length > 0) await this.o.libp2p.peerStore.merge(p.id, { multiaddrs: p.multiaddrs }).catch(() => undefined);
        }
        const news = ids.size - before;
        heard.add(from);
        // Holders can each store part of a cell's list (a provide reaches the
        // 20 peers its walk found closest, and walks disagree while routing
        // tables fill): a holder that names nobody new is the sign the list is
        // whole. (Until #18's session 9 the lookup stopped after two holders
        // that named anyone new, whatever the next would have said; kad-dht
        // itself ends the query once 20 providers are found.)
        const enough = heard.size >= (this.o.responders ?? 2) && (news === 0 || heard.size === 1);
        if (enough || heard.size >= Math.max(this.o.responders ?? 2, this.o.maxResponders ?? DEFAULT_MAX_RESPONDERS)) break;
      }
      finished = true;
    } catch (err) {
      this.o.log?.debug({ cell: cell.name, err: String(err) }, 'findProviders failed');
    }
    ids.delete(self);
    // A lookup cut short by its deadline may have missed holders: not complete.
    const complete = answerComplete(ids.size, finished && !truncated, { ...DEFAULT_CELL_SEARCH, denseAt: this.o.denseAt ?? DEFAULT_CELL_SEARCH.denseAt });
    return { ids: [...ids], complete };
  }
}
