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
// With sparseCoarser
// (off by default), also the providers of every coarser level's cell that
// answered complete: a crawler announces a finer cell only while the cell
// above it is dense (announce.ts), so the crawlers of a sparse cell beside a
// dense one in the host's block have no finer records, and a search gone finer
// for the dense cell misses them — in the simulator's quick world the largest
// class of routes that missed the oracle's crawler. A complete answer holds
// fewer than denseAt providers, so each such cell adds at most denseAt − 1.
// Off by default: at paper scale (90 000 steps, seeds 1 and 2) it did not
// improve stretch (p90 245.4 → 244.8 and 204.0 → 211.7, median 10.60 → 10.46
// and 6.75 → 7.06) though completed tasks rose 0.3 % and 0.9 % (docs/sim.md
// "Why a route misses the oracle").
//
// A bounded sample per cell: of each cell's answer at most `perCell`
// providers become candidates (default DEFAULT_DENSE_CELL = 64: an answer
// smaller than denseAt is complete and taken whole, only a dense one — a cell
// with no finer level left, or widened into — is sampled), so a dense cell
// costs the Router no more info queries and ranking entries than the densest
// sparse one. (Session 9 first drew 20, kad-dht's k: in crowded cells the draw
// often left out the nearest crawlers — at 10x the simulator's p90 stretch
// rose from 1.44x to 1.66x the oracle's, and the identity runs lost 10 % of
// IIR's tasks; the lead set 64.) Which ones: a uniform pseudo-random draw of
// perCell positions of the answer, fresh for every route — Floyd's algorithm
// (drawSample: perCell draws, however large the cell), seeded by
// cellSampleSeed from the route's `salt` (drawn once per route — live:
// router.ts, from node:crypto; the simulator from a seeded Rng), the level and
// the cell's place in the block. The draw reads no peer id, so no region, age
// or id is favoured and none can be ground to be kept; consecutive routes into
// one dense cell see different samples, so its tasks spread over all its
// crawlers. (A draw per cached answer, held for its 30 s, sent all of a cell's
// tasks to the same 20 meanwhile: 14 % fewer tasks completed at paper scale,
// docs/sim.md. Until session 10 the draw kept the perCell least
// hash32(provider key, salt): the same distribution, but it hashed every
// provider of the cell on every route.)
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
  /** The providers of a coarser level's complete cell answers join the
   * candidates (coarserCellJoins; default false: the finest level's only). */
  sparseCoarser?: boolean;
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

export const DEFAULT_CELL_SEARCH: Readonly<CellSearchOptions> = Object.freeze({ denseAt: DEFAULT_DENSE_CELL, minCandidates: 8, perCell: DEFAULT_DENSE_CELL, sparseCoarser: false });

export function cellSearchOptions(partial: Partial<CellSearchOptions> = {}): CellSearchOptions {
  const o = mergeOptions('cellSearchOptions', DEFAULT_CELL_SEARCH, partial);
  const check = optionChecker('cellSearchOptions');
  check(Number.isInteger(o.denseAt) && o.denseAt >= 1, `denseAt must be an integer >= 1, got ${o.denseAt}`);
  check(Number.isInteger(o.minCandidates) && o.minCandidates >= 0, `minCandidates must be an integer >= 0, got ${o.minCandidates}`);
  check((Number.isInteger(o.perCell) && o.perCell >= 1) || o.perCell === Infinity, `perCell must be an integer >= 1 or Infinity, got ${o.perCell}`);
  check(o.sparseCoarser === undefined || typeof o.sparseCoarser === 'boolean', `sparseCoarser must be true or false, got ${String(o.sparseCoarser)}`);
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

/** Whether one cell's answer at a level coarser than the candidates' (the
 * levels before candidatesFrom's index) joins them: a complete answer, whose
 * crawlers — too few to announce finer cells — no finer answer holds. */
export function coarserCellJoins(complete: boolean, o: CellSearchOptions): boolean {
  return o.sparseCoarser === true && complete;
}

/** The seed of one cell's sample in one route: the route's salt mixed with
 * the level and the cell's place in its block, so the cells of one route draw
 * independently and the live Router and the simulator, reading the same block
 * in the same order, draw alike without sharing a random stream. */
export function cellSampleSeed(salt: number, level: number, slot: number): number {
  return hash32(level * 1024 + slot, salt);
}

/** The i-th 32-bit draw of a sample's stream: splitmix32 (a Weyl sequence
 * through murmur3's finaliser) from the cell's seed. */
function sampleBits(seed: number, i: number): number {
  let z = (seed + Math.imul(i + 1, 0x9e3779b9)) >>> 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

/** Scratch for drawSample, reused across draws (the simulator draws millions). */
export class SampleScratch {
  /** The positions drawn (in draw order). */
  picked = new Int32Array(64);
  private mark = new Int32Array(64);
  private stamp = 0;

  /** Starts a draw over n positions of k: room for both, and a fresh mark. */
  begin(n: number, k: number): void {
    if (this.picked.length < k) this.picked = new Int32Array(k);
    if (this.mark.length < n) {
      this.mark = new Int32Array(Math.max(n, 2 * this.mark.length));
      this.stamp = 0;
    }
    this.stamp++;
    if (this.stamp === 0x7fffffff) {
      this.mark.fill(0);
      this.stamp = 1;
    }
  }

  /** Marks position p; false when it was already drawn in this draw. */
  take(p: number): boolean {
    if (this.mark[p] === this.stamp) return false;
    this.mark[p] = this.stamp;
    return true;
  }
}

/**
 * k distinct positions of [0, n) (k < n), every k-subset equally likely:
 * Floyd's algorithm, k draws whatever n (hashing every provider of a dense
 * cell cost n per route — 2 558 at 10x). Written to scratch.picked[0 .. k).
 * The draw looks at no provider, so no peer id can be ground to be kept.
 */
export function drawSample(n: number, k: number, seed: number, scratch: SampleScratch): void {
  scratch.begin(n, k);
  const picked = scratch.picked;
  for (let i = 0, j = n - k; j < n; i++, j++) {
    // Uniform in [0, j] (the bias of a 32-bit draw is below (j + 1) / 2^32).
    const t = Math.floor((sampleBits(seed, i) / 4294967296) * (j + 1));
    if (scratch.take(t)) picked[i] = t;
    else {
      // t was drawn before: take j, which no earlier step could reach.
      scratch.take(j);
      picked[i] = j;
    }
  }
}

/** The candidates of one cell's answer: every provider when at most perCell,
 * else a uniform sample of perCell (drawSample with `seed`), in the answer's order. */
export function providerSample<T>(ids: readonly T[], perCell: number, seed: number, scratch = new SampleScratch()): T[] {
  if (ids.length <= perCell) return [...ids];
  drawSample(ids.length, perCell, seed, scratch);
  return Array.from(scratch.picked.subarray(0, perCell))
    .sort((a, b) => a - b)
    .map((p) => ids[p]!);
}
