// The search for crawlers near a host: which cell levels are looked up, in
// which order, when the search stops, and whose providers become candidates.
// Pure: the live Router (router.ts, over cell-lookup.ts's DHT answers) and the
// simulator (sim/overlay.ts, over its modelled provider records) both follow it.
//
// Coarsest level first: the 2^d block of cells around the host (cells.ts
// blockAround). A level whose every cell answered `complete` (a record
// holder's whole list, smaller than denseAt) holds every crawler announced in
// its block, and the blocks of finer levels lie inside it, so the search stops
// there; a dense or cut-short answer sends it one level finer. The blocks nest
// (a finer block lies inside the coarser one), so the providers of a level
// include those of every finer level.
//
// Candidates: the providers of the finest level looked up, widened to the
// next coarser levels while fewer than minCandidates. (Before session 8 the
// live Router kept every provider of every level it looked up: kad-dht record
// holders answer with every provider they store, so a dense coarse cell gave
// hundreds of candidates — the whole network at the coarsest level — each one
// an info query and a ranking entry; a finer level exists to avoid that.)

import { DEFAULT_DENSE_CELL, levels, type CellOptions } from './cells.js';
import { mergeOptions, optionChecker } from '../options.js';

export interface CellSearchOptions {
  /** A cell answer with this many providers or more counts as dense: look one level finer. */
  denseAt: number;
  /** Widen the candidates to coarser levels looked up while fewer than this many. */
  minCandidates: number;
}

/** How long a cell's answer is served before a background refresh, and the
 * age beyond which it is not served at all (cell-lookup.ts's defaults), ms. */
export const CELL_CACHE_TTL_MS = 30_000;
export const CELL_MAX_STALE_MS = 600_000;
/** How long the Router reuses a hash-routing lookup (getClosestPeers of a host's key), ms. */
export const HASH_CACHE_TTL_MS = 5_000;

/** kad-dht 16.4.5's findProviders answers from the querier's own provider
 * store with at most this many (its kBucketSize; the store iterates in
 * insertion order, the in-memory datastore being a Map) and then stops; a
 * remote holder's GET_PROVIDERS answer carries every provider it stores
 * (rpc/handlers/get-providers.js), and the query ends once this many were
 * found in all — after the first holder of a crowded cell. So an answer is
 * cut only when the querier itself holds the cell's records. */
export const LOCAL_PROVIDER_CAP = 20;

export const DEFAULT_CELL_SEARCH: Readonly<CellSearchOptions> = Object.freeze({ denseAt: DEFAULT_DENSE_CELL, minCandidates: 8 });

export function cellSearchOptions(partial: Partial<CellSearchOptions> = {}): CellSearchOptions {
  const o = mergeOptions('cellSearchOptions', DEFAULT_CELL_SEARCH, partial);
  const check = optionChecker('cellSearchOptions');
  check(Number.isInteger(o.denseAt) && o.denseAt >= 1, `denseAt must be an integer >= 1, got ${o.denseAt}`);
  check(Number.isInteger(o.minCandidates) && o.minCandidates >= 0, `minCandidates must be an integer >= 0, got ${o.minCandidates}`);
  return o;
}

/** The levels in the order the search looks them up: coarsest first. */
export function searchLevels(cells: CellOptions): number[] {
  return levels(cells).reverse();
}

/** Whether one cell's answer is complete: a holder's whole list (not cut
 * short by a deadline or the querier's own capped store) with fewer than
 * denseAt providers. */
export function answerComplete(providers: number, whole: boolean, o: CellSearchOptions): boolean {
  return whole && providers < o.denseAt;
}

/** Whether the search stops after a level: every cell of its block answered completely. */
export function levelStops(completes: readonly boolean[]): boolean {
  return completes.every((c) => c);
}

/**
 * Given the number of providers of each level looked up (coarsest first, as
 * searched; a level's count includes every finer level's, the blocks nesting),
 * the index of the coarsest level whose providers become candidates: with the
 * levels after it, the finest one, widened coarser while fewer than
 * minCandidates. `looked`: how many entries of providersPerLevel are in use.
 */
export function candidatesFrom(providersPerLevel: ArrayLike<number>, o: CellSearchOptions, looked = providersPerLevel.length): number {
  let i = looked - 1;
  while (i > 0 && providersPerLevel[i]! < o.minCandidates) i--;
  return i;
}
