// Routing a task to a crawler.
//
// With a host coordinate c: look up the providers of the 2^d cells around c,
// coarsest level first (cell-lookup.ts: cached, refreshed in the background).
// A block whose every cell answered completely holds every crawler announced
// within half a cell side of c, and finer cells only hold a subset of it, so
// the search stops there; a dense cell (or an incomplete answer) sends it one
// level finer, where the block is smaller. Candidates are the providers of the
// finest level looked up, widened coarser while fewer than minCandidates, at
// most perCell of each cell's answer (a uniform sample, drawn afresh for every
// route: cell-search.ts, the rules the simulator follows too), judged by their current coordinate (provider records can be
// stale: a crawler moved); coordinates older than `staleMs` are refreshed in the
// background, unknown ones asked for before ranking. Candidates are ranked by
// the placement policy (placement.ts: predicted RTT to the host, inflated by
// load); the order goes to the best, and on 'full'/'leaving'/failure to the next. Without a coordinate the
// host name is hashed and the XOR-closest crawlers in the Kademlia space take
// it (the baseline the benchmark compares against).
import { createHash, randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Libp2p } from '@libp2p/interface';
import type { KadDHT } from '@libp2p/kad-dht';
import { peerIdFromString } from '@libp2p/peer-id';
import type { Coordinate } from '../coords/index.js';
import type { Rng } from '../rng.js';
import { blockAround, DEFAULT_CELLS, hostKey, type CellOptions } from './cells.js';
import { CellLookup } from './cell-lookup.js';
import { candidatesFrom, cellSearchOptions, coarserCellJoins, HASH_CACHE_TTL_MS, levelStops, cellSampleSeed, providerSample, searchLevels, type CellSearchOptions } from './cell-search.js';
import type { CoordService } from './coord-protocol.js';
import { fromWireCoord, type PeerState, type PeerTable } from './peers.js';
import { hasRoom, mayTryNext, placementOptions, walkClaimed, rankingNeedsWider, rankCandidates, type PlacementOptions } from './placement.js';
import type { Handover, SignedEnvelope, TaskOrder } from './signing.js';
import { sendTask, type TaskReply } from './task-protocol.js';
import { deadlineSignal } from './wire.js';

export interface RouterOptions {
  libp2p: Libp2p<{ dht: KadDHT }>;
  peers: PeerTable;
  coords: CoordService;
  cells?: CellOptions;
  /** Candidates tried before giving up (the placement policy's maxAttempts). */
  maxAttempts?: number;
  /** How long a cell lookup result is used before it is refreshed in the background, ms. */
  cacheTtlMs?: number;
  /** A cell with this many providers or more counts as dense: look one level finer. */
  denseCell?: number;
  /** Candidates are the finest level's providers, widened coarser while fewer than this (cell-search.ts). */
  minCandidates?: number;
  /** At most this many providers of one cell's answer become candidates, a
   * uniform sample drawn afresh for every route (cell-search.ts providerSample). */
  perCell?: number;
  /** Draws each route's sample salt (default: node:crypto, unpredictable, so no
   * crawler can grind a peer id that every sample keeps). */
  rng?: Rng;
  /** Peer coordinates older than this are refreshed with an info query (in the background), ms. */
  staleMs?: number;
  /** Peer coordinates older than this are not ranked on: the route asks for a
   * fresh one first, ms (default 180 000). */
  maxStaleMs?: number;
  /** Before a route commits, the top this many candidates (after ranking on
   * the copies) are asked for their current coordinate and load when their copy
   * is older than `confirmFreshMs` — at most 2 × this many info queries a route,
   * in two rounds (8 was measured; default 0: off, rank on the copies as they
   * are). Off by default because the in-run pairs of session 10 do not favour
   * it once coordinates settle: at 40 nodes two were even and one worse
   * (stretch median 1.60 against 1.47) — a coordinate read this instant
   * carries Vivaldi's jitter that a minute-old copy has not caught yet; it
   * helped only while coordinates still moved fast (12 nodes after 40 s:
   * the oracle's choice in 94 % of routes against 25 %). */
  confirmTop?: number;
  /** A copy younger than this counts as current: not asked again, ms (default 10 000). */
  confirmFreshMs?: number;
  /** Longest a route waits for those answers, ms (default 250): later ones
   * still update the copies, for the next route. */
  confirmWaitMs?: number;
  /** Weight of load against distance: score = rtt × (1 + loadWeight × load fraction)
   * (the placement policy's loadWeight). */
  loadWeight?: number;
  /** The rest of the placement policy (placement.ts). */
  placement?: Partial<PlacementOptions>;
  timeoutMs?: number;
  /** Bound on the kad getClosestPeers query of hash routing, ms (the crawlers
   * already known compete too, so a cut-short query still routes). */
  hashQueryMs?: number;
  /** Checks each candidate's coordinate claim and announced cells against
   * measured RTTs (overlay-check.ts); a candidate it refuses is not used. */
  overlay?: { admit(peer: string, cells: readonly string[]): boolean };
  /** Told of each push: answered (any status) or failed in transport (the manager's PushFailures). */
  onPush?: (peer: string, answered: boolean) => void;
  log?: Logger;
}

export interface RouteResult {
  status: TaskReply['status'] | 'no-crawler';
  /** The crawler that holds the task now. */
  by?: string;
  /** The crawler we sent it to first (before any forwarding). */
  chosen?: string;
  attempts: number;
  candidates: number;
  /** The finest level at which crawlers were found (-1 for hash routing). */
  level: number;
  /** Cells whose providers the route waited for (not cached: a DHT lookup). */
  cellsFetched?: number;
  /** Info queries this route started to confirm its top candidates' coordinates. */
  confirmQueries?: number;
  /** The search was widened one level coarser for room (placement.ts widen). */
  widened?: boolean;
  /** The candidates as ranked, best first (for the benchmark's diagnosis). */
  ranked?: string[];
  reason?: string;
}

export interface RouteOptions {
  /** Never choose these (e.g. ourselves when migrating). */
  exclude?: Set<string>;
  /** Force hash routing even when the order has a host coordinate. */
  hash?: boolean;
  /** When this node holds the task (migration): the hand-over chain to send to
   * candidate `to` (see signing.ts). */
  handover?: (to: string) => Promise<Handover[]>;
}

export interface LookupOptions {
  /** The route's sample salt (default: a fresh draw); a widened search reuses its first search's. */
  salt?: number;
  /** Candidates from one level coarser than cell-search.ts says (the placement policy's widen). */
  widen?: boolean;
}

/** Info queries in flight at once while a route waits for unknown candidates. */
const INFO_CONCURRENCY = 16;
export const DEFAULT_CONFIRM_TOP = 0;
export const DEFAULT_CONFIRM_FRESH_MS = 10_000;
export const DEFAULT_CONFIRM_WAIT_MS = 250;

interface CacheEntry {
  at: number;
  ids: Promise<string[]>;
}

export class Router {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly o: RouterOptions;
  /** The placement policy this router ranks with. */
  readonly policy: PlacementOptions;
  readonly cellLookup: CellLookup;
  /** The cell search's rules (cell-search.ts). */
  readonly search: CellSearchOptions;
  /** Info queries in flight, by peer: a route that needs the same peer's
   * coordinate waits for the query already asked instead of asking again. */
  private readonly asking = new Map<string, Promise<void>>();
  /** Info queries started to confirm top candidates (a figure for the benchmark). */
  confirmQueries = 0;

  constructor(opts: RouterOptions) {
    this.o = opts;
    this.policy = placementOptions({ ...opts.placement, loadWeight: opts.loadWeight, maxAttempts: opts.maxAttempts });
    this.search = cellSearchOptions({ denseAt: opts.denseCell, minCandidates: opts.minCandidates, perCell: opts.perCell });
    this.cellLookup = new CellLookup({
      libp2p: opts.libp2p,
      ttlMs: opts.cacheTtlMs,
      denseAt: this.search.denseAt,
      timeoutMs: opts.timeoutMs,
      log: opts.log,
    });
  }

  private cached(name: string, load: () => Promise<string[]>): Promise<string[]> {
    const now = performance.now();
    const hit = this.cache.get(name);
    if (hit !== undefined && now - hit.at < (this.o.cacheTtlMs ?? HASH_CACHE_TTL_MS)) return hit.ids;
    const ids = load().catch(() => [] as string[]);
    this.cache.set(name, { at: now, ids });
    if (this.cache.size > 50_000) {
      const first = this.cache.keys().next();
      if (first.done !== true) this.cache.delete(first.value);
    }
    return ids;
  }

  /** Drops cached lookups (e.g. after the network changed). */
  clearCache(): void {
    this.cache.clear();
    this.cellLookup.clear();
  }

  /** Live crawlers found around `c` (cell-search.ts decides the levels and
   * which providers become candidates), and the finest level searched that
   * had any (-1: nobody is announced near c). */
  async lookup(c: Coordinate, exclude: Set<string> = new Set(), opts: LookupOptions = {}): Promise<{ states: PeerState[]; level: number; fetched: number; salt: number }> {
    const cells = this.o.cells ?? DEFAULT_CELLS;
    // Per level looked up (coarsest first): each provider and the cells it was found in.
    const perLevel: Map<string, string[]>[] = [];
    // The same, of the cells that answered complete only (with sparseCoarser they join the candidates from coarser levels).
    const completePerLevel: Map<string, string[]>[] = [];
    // A fresh sample for every route: a dense cell's tasks spread over all its crawlers.
    const salt = opts.salt ?? (this.o.rng !== undefined ? Math.floor(this.o.rng.next() * 2 ** 32) >>> 0 : randomBytes(4).readUInt32LE(0));
    let finest = -1;
    let fetched = 0;
    for (const level of searchLevels(cells)) {
      const block = blockAround(c, level, cells);
      fetched += block.filter((cell) => !this.cellLookup.cached(cell)).length;
      const answers = await Promise.all(block.map((cell) => this.cellLookup.providers(cell)));
      const ids = new Map<string, string[]>();
      const whole = new Map<string, string[]>();
      for (const [i, a] of answers.entries()) {
        const joins = coarserCellJoins(a.complete, this.search);
        for (const id of providerSample(a.ids, this.search.perCell, cellSampleSeed(salt, level, i))) {
          ids.set(id, [...(ids.get(id) ?? []), block[i]!.name]);
          if (joins) whole.set(id, [...(whole.get(id) ?? []), block[i]!.name]);
        }
      }
      perLevel.push(ids);
      completePerLevel.push(whole);
      if (ids.size > 0) finest = level;
      if (levelStops(answers.map((a) => a.complete))) break;
    }
    const from = Math.max(0, candidatesFrom(perLevel.map((m) => m.size), this.search) - (opts.widen === true ? 1 : 0));
    const ids = new Map<string, string[]>();
    for (const m of [...perLevel.slice(from), ...completePerLevel.slice(0, from)]) for (const [id, named] of m) ids.set(id, [...(ids.get(id) ?? []), ...named]);
    const fresh = [...ids.keys()].filter((id) => !exclude.has(id) && this.usable(id) && this.o.overlay?.admit(id, ids.get(id)!) !== false);
    return { states: await this.refresh(fresh), level: finest, fetched, salt };
  }

  private usable(id: string): boolean {
    if (id === this.o.libp2p.peerId.toString()) return false;
    const p = this.o.peers.get(id);
    return p === undefined || (p.crawler && !p.down);
  }

  /** Crawlers XOR-closest to the hash of `host`, closest first. */
  async hashCandidates(host: string): Promise<string[]> {
    const key = hostKey(host).multihash.bytes;
    const ids = await this.cached(`host:${host}`, async () => {
      const out: string[] = [];
      const signal = deadlineSignal(this.o.hashQueryMs ?? 3_000);
      try {
        for await (const p of this.o.libp2p.peerRouting.getClosestPeers(key, { signal })) {
          if (p.multiaddrs.length > 0) await this.o.libp2p.peerStore.merge(p.id, { multiaddrs: p.multiaddrs }).catch(() => undefined);
          out.push(p.id.toString());
        }
      } catch (err) {
        this.o.log?.debug({ err: String(err) }, 'getClosestPeers failed');
      }
      return out;
    });
    const target = sha256(key);
    // Every crawler we already know competes too: the lookup may time out on a
    // loaded network, and the XOR-closest known crawler is still a fine choice.
    const all = new Set([...ids, ...this.o.peers.crawlers().map((p) => p.id)]);
    return [...all]
      .filter((id) => this.usable(id))
      .map((id) => ({ id, d: xorDistance(sha256(peerIdFromString(id).toMultihash().bytes), target) }))
      .sort((a, b) => Buffer.compare(a.d, b.d))
      .map((x) => x.id);
  }

  /** Makes sure we know coordinate and load of each candidate: a candidate
   * never heard of, or whose coordinate we learned longer than `maxStaleMs`
   * ago, is asked now (at most `INFO_CONCURRENCY` at a time); one whose
   * coordinate is older than `staleMs` is asked in the background (its last
   * coordinate serves meanwhile: settled coordinates drift slowly). The age is
   * the coordinate's own (coordAt), not the last time we heard of the peer:
   * task replies carry load only. (Before #18's fix a crawler that kept
   * receiving tasks kept the coordinate it had when the manager first met it,
   * often from before its coordinates settled.) One that does not answer is
   * marked down. Returns the live ones. */
  private async refresh(ids: string[]): Promise<PeerState[]> {
    const now = performance.now();
    const stale = this.o.staleMs ?? 60_000;
    const tooOld = this.o.maxStaleMs ?? 180_000;
    const unknown: string[] = [];
    for (const id of ids) {
      const p = this.o.peers.get(id);
      const age = now - (p?.coordAt ?? -Infinity);
      if (p === undefined || p.coord === undefined || age >= tooOld) unknown.push(id);
      else if (age >= stale) void this.ask(id).done;
    }
    for (let i = 0; i < unknown.length; i += INFO_CONCURRENCY) {
      await Promise.all(unknown.slice(i, i + INFO_CONCURRENCY).map((id) => this.ask(id).done));
    }
    return ids.map((id) => this.o.peers.get(id)).filter((p): p is PeerState => p !== undefined && p.crawler && !p.down);
  }

  /** One info query per peer at a time: a second caller waits for the one in
   * flight (`started` false: it cost no message). */
  private ask(id: string): { done: Promise<void>; started: boolean } {
    const inflight = this.asking.get(id);
    if (inflight !== undefined) return { done: inflight, started: false };
    const done = this.askInfo(id).finally(() => this.asking.delete(id));
    this.asking.set(id, done);
    return { done, started: true };
  }

  /** The ranking confirmed on current coordinates (the stale-copy fix of #18):
   * the copies of coordinates the router holds lag the crawlers' own by up to
   * `staleMs` (a median 3.6 ms at 100 nodes, enough to put another crawler
   * first in a quarter of the routes), so before committing, the top
   * `confirmTop` of the ranking whose copies are older than `confirmFreshMs`
   * are asked for their current coordinate and load, at once; the ranking is
   * redone and, once more, the newcomers to its top are asked. Bounded: at most
   * 2 × confirmTop queries (fewer when copies are fresh or a query is already
   * in flight), and at most `confirmWaitMs` of waiting — whatever answers later
   * updates the copies for the next route. */
  private async confirm(live: PeerState[], c: Coordinate): Promise<{ ranked: PeerState[]; queries: number }> {
    let ranked = this.rank(live, c);
    const top = this.o.confirmTop ?? DEFAULT_CONFIRM_TOP;
    if (top <= 0) return { ranked, queries: 0 };
    const fresh = this.o.confirmFreshMs ?? DEFAULT_CONFIRM_FRESH_MS;
    const deadline = performance.now() + (this.o.confirmWaitMs ?? DEFAULT_CONFIRM_WAIT_MS);
    const asked = new Set<string>();
    let queries = 0;
    for (let round = 0; round < 2; round++) {
      const now = performance.now();
      const todo = ranked.slice(0, top).filter((p) => !asked.has(p.id) && now - (p.coordAt ?? -Infinity) >= fresh);
      if (todo.length === 0 || now >= deadline) break;
      const waits = todo.map((p) => {
        asked.add(p.id);
        const w = this.ask(p.id);
        if (w.started) queries++;
        return w.done;
      });
      await untilOr(Promise.all(waits), deadline - now);
      // PeerTable.note updates the states in place; one that failed is down now.
      ranked = this.rank(
        live.filter((p) => !p.down),
        c,
      );
    }
    this.confirmQueries += queries;
    return { ranked, queries };
  }

  /** One info query; the coordinate service records what it learns. */
  private async askInfo(id: string): Promise<void> {
    try {
      const r = await this.o.coords.info(id);
      if (r.coord !== undefined) this.o.peers.note(id, { coord: fromWireCoord(r.coord) });
    } catch {
      this.o.peers.markDown(id);
    }
  }

  /** Ranks candidates for a host at `c` (best first) by the placement policy. */
  rank(cands: PeerState[], c: Coordinate): PeerState[] {
    const byId = new Map(cands.map((p) => [p.id, p]));
    return rankCandidates(c, cands, this.policy).map((id) => byId.get(id)!);
  }

  /** Routes one signed order. */
  async route(envelope: SignedEnvelope, order: TaskOrder, opts: RouteOptions = {}): Promise<RouteResult> {
    const exclude = opts.exclude ?? new Set<string>();
    let ordered: string[];
    let level = -1;
    let candidates: number;
    let cellsFetched = 0;
    let confirmQueries = 0;
    let widened = false;
    const byCoordinate = order.hostCoord !== undefined && opts.hash !== true;
    if (order.hostCoord !== undefined && byCoordinate) {
      const c = fromWireCoord(order.hostCoord);
      const found = await this.lookup(c, exclude);
      level = found.level;
      cellsFetched = found.fetched;
      let live = found.states;
      if (live.length === 0) {
        // Nothing announced anywhere near (or all stale): fall back to every crawler we know.
        live = this.o.peers.crawlers().filter((p) => !exclude.has(p.id) && p.id !== this.o.libp2p.peerId.toString() && this.o.overlay?.admit(p.id, []) !== false);
      }
      let confirmed = await this.confirm(live, c);
      confirmQueries = confirmed.queries;
      // No crawler with room within the spill bound (the ranking's first has
      // none): the next coarser level, whose answers the search already holds
      // (placement.ts widen).
      if (found.states.length > 0 && rankingNeedsWider(confirmed.ranked, this.policy)) {
        const wider = await this.lookup(c, exclude, { salt: found.salt, widen: true });
        cellsFetched += wider.fetched;
        if (wider.states.length > live.length) {
          widened = true;
          live = wider.states;
          confirmed = await this.confirm(live, c);
          confirmQueries += confirmed.queries;
        }
      }
      candidates = live.length;
      ordered = confirmed.ranked.map((p) => p.id);
    } else {
      const ids = (await this.hashCandidates(order.host)).filter((id) => !exclude.has(id));
      const live = new Set((await this.refresh(ids)).map((p) => p.id));
      ordered = ids.filter((id) => live.has(id));
      candidates = ordered.length;
    }
    if (ordered.length === 0) return { status: 'no-crawler', attempts: 0, candidates: 0, level, cellsFetched };
    const info = { candidates, level, cellsFetched, confirmQueries, ranked: ordered, ...(widened ? { widened } : {}) };
    let attempts = 0;
    let last: TaskReply | undefined;
    for (const id of ordered.slice(0, this.policy.maxAttempts)) {
      attempts++;
      let sending = false;
      try {
        const chain = opts.handover !== undefined ? await opts.handover(id) : undefined;
        sending = true;
        const reply = await sendTask(this.o.libp2p, id, envelope, 0, this.o.timeoutMs ?? 15_000, undefined, chain);
        this.o.onPush?.(id, true);
        if (reply.load !== undefined) this.o.peers.note(id, { load: reply.load });
        last = reply;
        if (reply.status === 'accepted') return { status: 'accepted', by: reply.by ?? id, chosen: id, attempts, ...info };
        if (reply.status === 'rejected') return { status: 'rejected', chosen: id, attempts, ...info, reason: reply.reason };
        if (reply.status === 'leaving') this.o.peers.markDown(id);
        // Its walk found the neighbourhood full: the next candidates lie in it (placement fullWalkEnds),
        // unless the next one's own last reported load says it has room (the walk guard).
        const next = ordered[attempts];
        if (reply.status === 'full' && next !== undefined && !mayTryNext(walkClaimed(reply.walked, reply.load), byCoordinate, hasRoom(this.o.peers.get(next)?.load), this.policy)) break;
      } catch (err) {
        this.o.peers.markDown(id);
        if (sending) this.o.onPush?.(id, false);
        this.o.log?.debug({ peer: id, err: String(err) }, 'task send failed');
      }
    }
    return { status: last?.status ?? 'no-crawler', attempts, ...info, reason: last?.reason };
  }
}

/** Resolves when `p` settles or after `ms`, whichever is first (never rejects). */
async function untilOr(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([p.catch(() => undefined), new Promise<void>((r) => (timer = setTimeout(r, Math.max(0, ms))))]);
  clearTimeout(timer);
}

function sha256(b: Uint8Array): Buffer {
  return createHash('sha256').update(b).digest();
}

function xorDistance(a: Buffer, b: Buffer): Buffer {
  const out = Buffer.alloc(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! ^ b[i]!;
  return out;
}
