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
//
// A bounded sample per cell: of each cell's answer at most `perCell`
// providers become candidates (default DEFAULT_DENSE_CELL = 64: an answer
// smaller than denseAt is complete and taken whole, only a dense one — a cell
// with no finer level left, or widened into — is sampled), so a dense cell
// costs the Router no more info queries and ranking entries than the densest
// sparse one. (Session 9 first drew 20, kad-dht's k: in crowded cells the draw
// often left out the nearest crawlers — at 10x the simulator's p90 stretch
// rose from 1.44x to 1.66x the oracle's, and the identity runs lost 10 % of
// IIR's tasks; the lead set 64.) Which ones: a uniform
// pseudo-random draw, fresh for every route — the K providers whose
// hash32(key, salt) is least, `salt` drawn once per route (live: router.ts,
// from node:crypto; the simulator from a seeded Rng), `key` a 32-bit hash of
// the provider (live: FNV-1a of its peer id; the simulator: its index). No
// region, age or peer id is favoured, and consecutive routes into one dense
// cell see different samples, so its tasks spread over all its crawlers. (A
// draw per cached answer, held for its 30 s, sent all of a cell's tasks to the
// same 20 meanwhile: 14 % fewer tasks completed at paper scale, docs/sim.md.)
// The draw ignores the host: the Router's ranking chooses among the sample.

import { DEFAULT_DENSE_CELL, levels, type CellOptions } from './cells.js';
import { mergeOptions, optionChecker } from '../options.js';
import { hash32 } from '../rng.js';

export interface CellSearchOptions {
  /** A cell answer with this many providers or more counts as dense: look one level finer. */
  denseAt: number;
  /** Widen the candidates to coarser levels looked up while fewer than this many. */
  minCandidates: number;
  /** At most this many providers of one cell's answer become candidates (a
   * uniform sample: providerSample); Infinity keeps them all. */
  perCell: number;
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

export const DEFAULT_CELL_SEARCH: Readonly<CellSearchOptions> = Object.freeze({ denseAt: DEFAULT_DENSE_CELL, minCandidates: 8, perCell: DEFAULT_DENSE_CELL });

export function cellSearchOptions(partial: Partial<CellSearchOptions> = {}): CellSearchOptions {
  const o = mergeOptions('cellSearchOptions', DEFAULT_CELL_SEARCH, partial);
  const check = optionChecker('cellSearchOptions');
  check(Number.isInteger(o.denseAt) && o.denseAt >= 1, `denseAt must be an integer >= 1, got ${o.denseAt}`);
  check(Number.isInteger(o.minCandidates) && o.minCandidates >= 0, `minCandidates must be an integer >= 0, got ${o.minCandidates}`);
  check((Number.isInteger(o.perCell) && o.perCell >= 1) || o.perCell === Infinity, `perCell must be an integer >= 1 or Infinity, got ${o.perCell}`);
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

/** A provider's 32-bit sample key from its peer id (FNV-1a of the string). */
export function peerSampleKey(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A provider's place in the sample drawn with `salt`: the least perCell are kept. */
export function sampleRank(key: number, salt: number): number {
  return hash32(key, salt);
}

/** The candidates of one cell's answer: every provider when at most perCell,
 * else the perCell of least sampleRank(key, salt), in the answer's order. */
export function providerSample<T>(ids: readonly T[], key: (id: T) => number, salt: number, perCell: number): T[] {
  if (ids.length <= perCell) return [...ids];
  const kept = ids
    .map((id, i) => ({ i, r: sampleRank(key(id), salt) }))
    .sort((a, b) => a.r - b.r || a.i - b.i)
    .slice(0, perCell)
    .map((x) => x.i)
    .sort((a, b) => a - b);
  return kept.map((i) => ids[i]!);
}
