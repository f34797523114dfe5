// The modelled overlay's options, and the costs and record schedule the live
// DHT's settings imply (kad-dht's lookups, providerTiming's re-provides).
import { DEFAULT_PROVIDER_TTL_MS, providerTiming } from '../src/dht/announce.js';
import { DEFAULT_CELLS, type CellOptions } from '../src/dht/cells.js';
import { CELL_CACHE_TTL_MS, CELL_MAX_STALE_MS, cellSearchOptions, HASH_CACHE_TTL_MS, DEFAULT_CELL_SEARCH, type CellSearchOptions } from '../src/dht/cell-search.js';
import { mergeOptions } from '../src/options.js';

export const MS_PER_MINUTE = 60_000;

export interface OverlayOptions {
  cells: CellOptions;
  /** Provider record lifetime, ms (live default: announce.ts). */
  providerTtlMs: number;
  /** The cell search's rules (cell-search.ts: denseAt, minCandidates). */
  search: CellSearchOptions;
  /** The Router's cell cache (cell-lookup.ts): an answer is served while
   * younger than maxStaleMs and refreshed in the background once older than
   * cacheTtlMs, ms. */
  cacheTtlMs: number;
  maxStaleMs: number;
  /** How long the Router reuses a hash-routing lookup, ms. */
  hashCacheTtlMs: number;
  /** Model the manager holding some cells' records itself (with chance k/n
   * per cell): its own store answers with its first LOCAL_PROVIDER_CAP records. */
  ownStore: boolean;
  /** Kademlia's α (queries in flight per round) and k (bucket size: a provide
   * stores the record on the k closest nodes). kad-dht defaults. */
  kadAlpha: number;
  kadK: number;
  /** Adaptive announcing (announce.ts): a crawler provides the coarsest level,
   * and a finer one only while its finest announced cell is dense; false:
   * every level (the model before session 9). */
  adaptive: boolean;
  /** Gap between a crawler's counts of its finest announced cell, ms (live: half the provider TTL). */
  densityCheckMs: number;
  /** Seeds the per-route sample salts (cell-search.ts providerSample). */
  sampleSeed: number;
}

export const DEFAULT_OVERLAY_OPTIONS: Readonly<OverlayOptions> = Object.freeze({
  cells: DEFAULT_CELLS,
  providerTtlMs: DEFAULT_PROVIDER_TTL_MS,
  search: DEFAULT_CELL_SEARCH,
  cacheTtlMs: CELL_CACHE_TTL_MS,
  maxStaleMs: CELL_MAX_STALE_MS,
  hashCacheTtlMs: HASH_CACHE_TTL_MS,
  ownStore: true,
  kadAlpha: 3,
  kadK: 20,
  adaptive: true,
  densityCheckMs: providerTiming(DEFAULT_PROVIDER_TTL_MS).thresholdMs,
  sampleSeed: 0x73616d70,
});

export function overlayOptions(partial: Partial<OverlayOptions> = {}): OverlayOptions {
  const o = mergeOptions('overlayOptions', DEFAULT_OVERLAY_OPTIONS, partial);
  const bad = (m: string): never => {
    throw new RangeError(`overlayOptions: ${m}`);
  };
  o.search = cellSearchOptions(o.search);
  if (!(o.providerTtlMs > 0)) bad(`providerTtlMs must be > 0, got ${o.providerTtlMs}`);
  if (!(o.cacheTtlMs >= 0)) bad(`cacheTtlMs must be >= 0, got ${o.cacheTtlMs}`);
  if (!(o.maxStaleMs >= o.cacheTtlMs)) bad(`maxStaleMs must be >= cacheTtlMs, got ${o.maxStaleMs}`);
  if (!(o.hashCacheTtlMs >= 0)) bad(`hashCacheTtlMs must be >= 0, got ${o.hashCacheTtlMs}`);
  if (!(o.densityCheckMs > 0)) bad(`densityCheckMs must be > 0, got ${o.densityCheckMs}`);
  if (!(Number.isInteger(o.kadAlpha) && o.kadAlpha >= 1 && Number.isInteger(o.kadK) && o.kadK >= 1)) bad('kadAlpha and kadK must be integers >= 1');
  return o;
}

/** Messages of one Kademlia lookup among n nodes: ⌈log₂ n⌉ rounds of α queries. */
export function kadLookupMessages(n: number, alpha: number): number {
  return alpha * Math.ceil(Math.log2(Math.max(2, n)));
}

/** The provider-record schedule of providerTiming, in simulated minutes. */
export function recordSchedule(ttlMs: number): { reprovideEvery: number; visibleAfterLastProvide: number } {
  const t = providerTiming(ttlMs);
  // kad-dht checks its own records every checkMs and re-provides those within
  // thresholdMs of expiry: with the check timer started at the first provide,
  // a record is re-provided at the first check past validity − threshold.
  const checksPerPeriod = Math.floor((t.validityMs - t.thresholdMs) / t.checkMs) + 1;
  const reprovideEvery = (checksPerPeriod * t.checkMs) / MS_PER_MINUTE;
  // A holder deletes an expired record at its next cleanup (uniform phase: half a cleanup interval on average).
  const visibleAfterLastProvide = (t.validityMs + t.cleanupMs / 2) / MS_PER_MINUTE;
  return { reprovideEvery, visibleAfterLastProvide };
}
