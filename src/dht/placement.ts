// The placement policy: which crawler gets a task, where a crawler with a full
// queue forwards it, and when a task is refused. One policy for the live
// overlay (the manager's Router ranks the crawlers its DHT search found, a
// full TaskReceiver picks where to forward) and for the simulator (sim/ feeds
// it the crawlers its modelled overlay would have found), so the simulator's
// routing figures describe the code volunteers run.
//
// Pure: plain data in (a host coordinate, candidates with coordinates and
// load, a hop count), a decision out. No libp2p, no clock, no randomness.
//
// The rule. A candidate has room unless it reported no free slot (a load we
// do not know counts as room: asking costs a round trip, a wrong guess one
// 'full' reply). The candidates with room that lie within `spill` × the RTT
// of the nearest candidate come first, ordered by
//     score = predicted RTT to the host × (1 + loadWeight × load fraction)
// so the nearest crawler wins unless one not much farther is less busy (load
// breaks near-ties: with loadWeight 0.5 a crawler 1.5× as far never beats an
// idle one). Every other candidate follows, nearest first. Equal keys keep
// the candidates' given order.
//
// Hot spots. Where hosts are dense, the crawlers nearest to them fill up,
// and the only crawlers with room in the search's answer are far ones (a
// lookup returns at most 20 providers per cell, whichever the DHT yields).
// Sending there costs every such task a long RTT. Beyond the spill bound the
// policy sends the task to the nearest crawler instead, full or not: a full
// crawler forwards it to a neighbour with room, and a crawler's neighbours
// (its peer table) are exactly what the manager's search lacks. In the
// simulator this halves the RTT penalty of overflow (docs/sim.md, "Hot spots").
// The bound is 4 since session 11 (2 before): where the nearest crawlers are
// all full, the walk through full neighbours often ends at the last hop on
// whichever crawler with room the last one knows — at paper scale 15 % of the
// sampled routes, at 1.7–1.8× the RTT of the nearest crawler with room (median;
// 8.8–10.3× at p90: routing.diagnosis.fullByHop) — while the search had
// found a crawler with room 2–4× as far as the nearest. With 4: stretch p90
// 1.41/1.48/1.29× → 1.34/1.43/1.23× the oracle's (ruc IIR, 10 000 steps, seeds
// 1–3), completed tasks +4.7/+2.1/+0.4 %; no bound at all gains more p90 on
// two seeds but loses 16 % of the tasks on the third (docs/sim.md "Spill 4").
//
// Forwarding. A crawler whose queue is full forwards the order unchanged to
// the crawlers it knows in the same placement order — one with room within the
// spill bound first, else the nearest ones, full or not, which forward it on
// through their own neighbours (only crawlers with room at the last hop) —
// measured from the host when the order carries the host's coordinate (the
// forwarder is near the host, so its neighbours are candidates for the host
// too) — or from the
// forwarder itself when it does not (hash-routed orders, or `forwardAnchor:
// 'self'`, the paper's "forward to a less loaded neighbour"). It tries at most
// `forwardFanout` targets, and a task that has travelled `maxHops` hops is
// refused ('full').
//
// Three rules for the last-hop tail, off by default (session 12, docs/sim.md
// "The last-hop tail: rules tried"): `widen` (no room within the spill
// bound: the search takes the next coarser level's providers, already
// fetched), `lastHopBound` (the last forwarder places only within that many
// times its own RTT to the host) and `outward` (before the last hop, full
// crawlers farther from the host than the forwarder first). widen and outward
// changed nothing beyond the run-to-run spread; lastHopBound 4 cut p90 to
// 1.04–1.18× the oracle's but completed 3–10 % fewer tasks: the far crawlers
// the last hop reaches are capacity the run uses. A fourth, `queueSpill`
// (a crawler with tasks queued counts as room only within that many times the
// nearest RTT), kept seed 3 out of its low regime in 2 runs of 3 (+11 % tasks, imbalance
// 1.83 → 1.52) but lengthened the tail on every seed (more walks): off too.
//
// Attempts after a full walk (`fullWalkEnds`, session 13, docs/sim.md "A full
// walk ends the route"). The router tries up to maxAttempts candidates; where
// the first one's walk through its neighbours came back full, the next ones
// are that neighbourhood again. Counted at paper scale (ruc IIR, 10 000 steps),
// of 63 074 routes whose first walk came back full, attempts 2–4 placed 1 550
// (2.5 %), at 2.8× the oracle's RTT (median; 7.7× at p90), while 13 % of all
// task messages went into them; at 10× (1 500 steps) 13 % placed, at 3.1× /
// 20× the oracle's, for 49 % of all task messages. With the rule on, a 'full'
// answer that says it walked (task-protocol.ts `walked`) ends the route, and
// the task goes where any other 'full' goes (the live manager records the
// failure; the simulator's faithful reading holds it at the first choice) —
// unless the next candidate's own last known load says it has room (the walk
// guard, mayTryNext: a lying first candidate must not end routes others can take).
import { predictRtt, type Coordinate } from '../coords/index.js';
import { mergeOptions, optionChecker } from '../options.js';

/** A crawler's load as it reports it (src/dht/peers.ts' Load fits). */
export interface PlacementLoad {
  running: number;
  queued: number;
  /** Free slots: idle threads plus free queue places. */
  free: number;
}

export interface PlacementOptions {
  /** Weight of load against distance: score = rtt × (1 + loadWeight × load fraction). ≥ 0. */
  loadWeight: number;
  /** Candidates the router tries, best first, before giving up on a task. ≥ 1. */
  maxAttempts: number;
  /** Hops a task may be forwarded (a crawler receiving it at this hop count refuses). ≥ 0. */
  maxHops: number;
  /** Crawlers a full crawler tries per forwarding hop, best first. ≥ 1. */
  forwardFanout: number;
  /** Where a forwarder measures candidates from when the order carries the
   * host's coordinate: the host (default) or itself (the paper's rule). */
  forwardAnchor: 'host' | 'self';
  /** How far a task spills to a crawler with room: up to spill × the nearest
   * candidate's RTT. Beyond it the nearest crawlers come first, room or not —
   * a full one forwards the task to a neighbour it knows (≥ 1; Infinity: any
   * crawler with room before any without). */
  spill: number;
  /** When no candidate with room lies within the spill bound, widen the
   * search one level coarser before sending the task to a full crawler
   * (cell-search.ts: that level's answers are already at hand, no lookup). */
  widen: boolean;
  /** At the last forwarding hop, a crawler with room takes the task only
   * within lastHopBound × the forwarder's own predicted RTT to the host (a
   * farther one: the forwarder refuses, and the walk tries its other
   * branches). ≥ 1; Infinity: any crawler with room it knows. */
  lastHopBound: number;
  /** Forwarding before the last hop: of the crawlers without room near the
   * host, those farther from it than the forwarder come first (nearest
   * first), so a walk through full neighbours moves outward, where room is,
   * instead of circling the full crawlers nearest the host. */
  outward: boolean;
  /** A crawler with room but tasks already queued counts as near only within
   * queueSpill × the nearest candidate's RTT (one with an empty queue: within
   * spill): a task queued far away waits there. ≥ 1; Infinity: as spill. */
  queueSpill: number;
  /** A candidate that answered 'full' after walking its neighbourhood (it
   * forwarded, and every crawler it reached was full too) ends the route: the
   * next candidates lie in the same full region (mayTryNext; coordinate
   * routing only). */
  fullWalkEnds: boolean;
}

export const DEFAULT_PLACEMENT_OPTIONS: Readonly<PlacementOptions> = Object.freeze({
  loadWeight: 0.5,
  maxAttempts: 4,
  maxHops: 3,
  forwardFanout: 3,
  forwardAnchor: 'host',
  spill: 4,
  widen: false,
  lastHopBound: Infinity,
  outward: false,
  queueSpill: Infinity,
  fullWalkEnds: true,
});

/** The load fraction of a crawler whose load is unknown. */
export const UNKNOWN_LOAD_FRACTION = 0.5;

const check = optionChecker('placementOptions');

/** Defaults merged with `partial`, validated; throws RangeError naming the bad option. */
export function placementOptions(partial: Partial<PlacementOptions> = {}): PlacementOptions {
  const o = mergeOptions('placementOptions', DEFAULT_PLACEMENT_OPTIONS, partial);
  check(Number.isFinite(o.loadWeight) && o.loadWeight >= 0, `loadWeight must be a finite number >= 0, got ${o.loadWeight}`);
  check(Number.isInteger(o.maxAttempts) && o.maxAttempts >= 1 && o.maxAttempts <= 64, `maxAttempts must be an integer in 1..64, got ${o.maxAttempts}`);
  check(Number.isInteger(o.maxHops) && o.maxHops >= 0 && o.maxHops <= 16, `maxHops must be an integer in 0..16, got ${o.maxHops}`);
  check(Number.isInteger(o.forwardFanout) && o.forwardFanout >= 1 && o.forwardFanout <= 64, `forwardFanout must be an integer in 1..64, got ${o.forwardFanout}`);
  check(o.forwardAnchor === 'host' || o.forwardAnchor === 'self', `forwardAnchor must be 'host' or 'self', got ${String(o.forwardAnchor)}`);
  check(!Number.isNaN(o.spill) && o.spill >= 1, `spill must be >= 1 (Infinity: off), got ${o.spill}`);
  check(typeof o.widen === 'boolean', `widen must be true or false, got ${String(o.widen)}`);
  check(!Number.isNaN(o.lastHopBound) && o.lastHopBound >= 1, `lastHopBound must be >= 1 (Infinity: off), got ${o.lastHopBound}`);
  check(typeof o.outward === 'boolean', `outward must be true or false, got ${String(o.outward)}`);
  check(!Number.isNaN(o.queueSpill) && o.queueSpill >= 1, `queueSpill must be >= 1 (Infinity: off), got ${o.queueSpill}`);
  check(typeof o.fullWalkEnds === 'boolean', `fullWalkEnds must be true or false, got ${String(o.fullWalkEnds)}`);
  return o;
}

/** (running + queued) / slots, from a crawler's counts; a crawler that reports
 * no slots at all is full. */
export function loadFractionOf(running: number, queued: number, free: number): number {
  const slots = running + queued + free;
  return slots > 0 ? (running + queued) / slots : 1;
}

/**
 * Candidates as parallel arrays, reused across decisions (the simulator makes
 * millions of them). `rtt` is the predicted RTT from the anchor (the host, or
 * the forwarder) in ms — Infinity when the candidate's coordinate is unknown.
 */
export class CandidateSet<K> {
  n = 0;
  readonly ids: K[] = [];
  rtt = new Float64Array(32);
  frac = new Float64Array(32);
  room = new Uint8Array(32);
  /** 1 when the candidate has tasks queued (a task sent there waits behind them). */
  queued = new Uint8Array(32);
  /** Keys and near flags of the ranking in progress (scratch for rankInto). */
  private scores = new Float64Array(32);
  private nears = new Uint8Array(32);

  clear(): void {
    this.n = 0;
  }

  /** Adds a candidate with known counts (`free` = free slots). */
  add(id: K, rttMs: number, running: number, queued: number, free: number): void {
    const i = this.slot(id, rttMs);
    this.frac[i] = loadFractionOf(running, queued, free);
    this.room[i] = free > 0 ? 1 : 0;
    this.queued[i] = queued > 0 ? 1 : 0;
  }

  /** Adds a candidate whose load is unknown (counted as having room). */
  addUnknown(id: K, rttMs: number): void {
    const i = this.slot(id, rttMs);
    this.frac[i] = UNKNOWN_LOAD_FRACTION;
    this.room[i] = 1;
    this.queued[i] = 0;
  }

  /** A scratch array of at least k scores. */
  scratch(k: number): Float64Array {
    if (this.scores.length < k) this.scores = new Float64Array(Math.max(k, this.scores.length * 2));
    return this.scores;
  }

  /** A scratch array of at least k near flags. */
  nearScratch(k: number): Uint8Array {
    if (this.nears.length < k) this.nears = new Uint8Array(Math.max(k, this.nears.length * 2));
    return this.nears;
  }

  private slot(id: K, rttMs: number): number {
    const i = this.n++;
    if (i === this.rtt.length) this.grow();
    this.ids[i] = id;
    this.rtt[i] = Number.isNaN(rttMs) ? Infinity : rttMs;
    return i;
  }

  private grow(): void {
    const n = this.rtt.length * 2;
    const f = (a: Float64Array) => {
      const b = new Float64Array(n);
      b.set(a);
      return b;
    };
    this.rtt = f(this.rtt);
    this.frac = f(this.frac);
    const r = new Uint8Array(n);
    r.set(this.room);
    this.room = r;
    const q = new Uint8Array(n);
    q.set(this.queued);
    this.queued = q;
  }
}

/** The score of candidate i (lower is better; only compared among candidates
 * with room). Never below its RTT: a candidate farther than a score cannot beat it. */
export function candidateScore(set: CandidateSet<unknown>, i: number, opts: PlacementOptions): number {
  return set.rtt[i]! * (1 + opts.loadWeight * set.frac[i]!);
}

/** True if candidate a (class: 0 with room within the spill bound, 1 any
 * other, 2 one the outward rule puts last; key: its score in class 0, else
 * its RTT) ranks before candidate b. */
function before(a: number, ca: number, ka: number, b: number, cb: number, kb: number): boolean {
  if (ca !== cb) return ca < cb;
  if (ka !== kb) return ka < kb;
  return a < b;
}

/**
 * Writes the indices of the best `k` candidates of `set`, best first, into
 * `out`; returns how many were written. First the candidates with room within
 * spill × the nearest candidate's RTT, by score; then every other one by RTT
 * (nearest first: one without room forwards). With `roomOnly`, candidates
 * without room are left out and every candidate counts as near (forwarding
 * hands a task only to a crawler with room, the best by score).
 */
export function rankInto(set: CandidateSet<unknown>, opts: PlacementOptions, out: Int32Array | number[], k: number, roomOnly = false, within = Infinity, inwardOf = -Infinity): number {
  const keys = set.scratch(k);
  const nears = set.nearScratch(k);
  let nearest = Infinity;
  for (let i = 0; i < set.n; i++) if (set.rtt[i]! < nearest) nearest = set.rtt[i]!;
  const spill = roomOnly ? Infinity : opts.spill * nearest;
  const queueSpill = roomOnly ? Infinity : Math.min(opts.spill, opts.queueSpill) * nearest;
  let m = 0;
  for (let i = 0; i < set.n; i++) {
    if (roomOnly && !set.room[i]) continue;
    if (set.rtt[i]! > within) continue;
    const near = set.room[i] === 1 && set.rtt[i]! <= (set.queued[i] === 1 ? queueSpill : spill);
    const cls = near ? 0 : set.rtt[i]! <= inwardOf ? 2 : 1;
    const key = near ? candidateScore(set, i, opts) : set.rtt[i]!;
    if (m === k && !before(i, cls, key, out[m - 1]!, nears[m - 1]!, keys[m - 1]!)) continue;
    // Insertion into the sorted top k: grow while short, else replace the worst.
    let p = m < k ? m++ : m - 1;
    while (p > 0 && before(i, cls, key, out[p - 1]!, nears[p - 1]!, keys[p - 1]!)) {
      out[p] = out[p - 1]!;
      keys[p] = keys[p - 1]!;
      nears[p] = nears[p - 1]!;
      p--;
    }
    out[p] = i;
    keys[p] = key;
    nears[p] = cls;
  }
  return m;
}

/** Whether a ranking (`order`, m entries, by rankInto) should be widened
 * before the task is sent: widening is on, and the first candidate has no
 * room — so no candidate with room lies within the spill bound (those rank
 * first) and the task would go to a full crawler to walk its neighbours. */
export function wantsWider(set: CandidateSet<unknown>, order: ArrayLike<number>, m: number, opts: PlacementOptions): boolean {
  return opts.widen && m > 0 && set.room[order[0]!] === 0;
}

/** Whether a candidate's last known load leaves room: free > 0, or no load
 * known (the ranking counts an unknown load as room too, CandidateSet.addUnknown). */
export function hasRoom(load: PlacementLoad | undefined): boolean {
  return load === undefined || load.free > 0;
}

/** May the router try its next candidate after one answered 'full'? Not when
 * `walked` (that candidate forwarded the task and the crawlers it reached were
 * full too), the task was routed `byCoordinate`, fullWalkEnds is on, and the
 * next candidate is known full (`nextHasRoom` false: its last known load, see
 * hasRoom): the walk has already been through the neighbourhood near the host
 * where the next candidates lie. An answer without a walk (no neighbour to
 * forward to, or a peer that does not say) tries the next; so does a
 * hash-routed task, whose next candidate lies anywhere.
 *
 * The walk guard (`nextHasRoom`): no volunteer is trusted, and `walked` is
 * one peer's claim about its neighbours. A next candidate whose own load says
 * it has room (the router's copy: that peer's own last report, which no other
 * peer's reply can write) contradicts the claim, and is tried: a liar ranked first
 * can then end only routes whose next candidate is known full — routes an
 * honest full walk would end too. An unknown load counts as room, as in the
 * ranking: a peer we know nothing against is tried rather than skipped on
 * another's word. */
export function mayTryNext(walked: boolean, byCoordinate: boolean, nextHasRoom: boolean, opts: PlacementOptions): boolean {
  return !(walked && byCoordinate && opts.fullWalkEnds) || nextHasRoom;
}

/** Whether a 'full' reply's `walked` is believed: only when the same reply's
 * load says the replier has no free slot. An honest receiver forwards only when
 * it has no room and reports its load beside its answer; a reply that claims a
 * full neighbourhood while offering free slots contradicts itself (and a liar
 * that reports itself full is ranked below crawlers with room by that very
 * report, which the Router notes). The simulator's replies are made at the
 * instant of the walk, so there a walk is always believed. */
export function walkClaimed(walked: boolean | undefined, replyLoad: PlacementLoad | undefined): boolean {
  return walked === true && replyLoad !== undefined && !(replyLoad.free > 0);
}

/** May a crawler that received a task after `hops` forwards forward it again? */
export function mayForward(hops: number, opts: PlacementOptions): boolean {
  return hops < opts.maxHops;
}

/**
 * Where a full crawler that received a task after `hops` forwards sends it:
 * the indices of up to forwardFanout candidates of `set` (the crawlers it
 * knows, measured from the anchor), best first, into `out`; returns how many,
 * or −1 when the hop limit forbids forwarding. The order is the placement
 * order, so a task walks through the neighbourhood — to a crawler with room
 * near the host, else on to the nearest crawlers, full or not, which know
 * their own neighbours — except at the last hop, where only crawlers with
 * room count (the receiver could not forward it again).
 */
export function forwardInto(set: CandidateSet<unknown>, opts: PlacementOptions, out: Int32Array | number[], hops: number, selfRtt = Infinity): number {
  if (!mayForward(hops, opts)) return -1;
  const last = hops + 1 >= opts.maxHops;
  return rankInto(set, opts, out, opts.forwardFanout, last, last ? lastHopLimit(selfRtt, opts) : Infinity, !last && opts.outward ? selfRtt : -Infinity);
}

/** How far from the anchor a last-hop target may lie: lastHopBound × the
 * forwarder's own RTT to it (Infinity when either is unknown or off). */
export function lastHopLimit(selfRtt: number, opts: PlacementOptions): number {
  return Number.isFinite(selfRtt) ? opts.lastHopBound * selfRtt : Infinity;
}

// ---- the object-level API the live services call

/** A crawler the caller knows of. */
export interface Candidate<K = string> {
  id: K;
  coord?: Coordinate;
  load?: PlacementLoad;
  /** Measured RTT from the caller, ms: the distance when no coordinate is at hand. */
  rttMs?: number;
}

export type Placement<K = string> =
  /** Try these crawlers in order (at most maxAttempts). */
  | { kind: 'send'; order: K[] }
  /** No crawler was found at all: nothing to try. */
  | { kind: 'no-crawler' };

export type ForwardDecision<K = string> =
  /** Send the task, with `hops` = the count it arrived with + 1, to these in order. */
  | { kind: 'forward'; hops: number; targets: K[] }
  /** Answer 'full': the hop limit is reached, or no known crawler has room. */
  | { kind: 'refuse'; reason: 'hop-limit' | 'no-target' };

function fill<K>(set: CandidateSet<K>, anchor: Coordinate | undefined, cands: readonly Candidate<K>[]): void {
  set.clear();
  for (const c of cands) {
    const rtt = anchor !== undefined && c.coord !== undefined ? predictRtt(c.coord, anchor) : (c.rttMs ?? Infinity);
    if (c.load === undefined) set.addUnknown(c.id, rtt);
    else set.add(c.id, rtt, c.load.running, c.load.queued, c.load.free);
  }
}

/** Every candidate in policy order, best first (the router tries a prefix). */
export function rankCandidates<K>(host: Coordinate, cands: readonly Candidate<K>[], opts: PlacementOptions): K[] {
  const set = new CandidateSet<K>();
  fill(set, host, cands);
  const out: number[] = [];
  const m = rankInto(set, opts, out, set.n);
  return out.slice(0, m).map((i) => set.ids[i]!);
}

/** Whether the router should widen its search for a host at `host` before
 * placing a task on these candidates (wantsWider). */
export function needsWider<K>(host: Coordinate, cands: readonly Candidate<K>[], opts: PlacementOptions): boolean {
  if (!opts.widen || cands.length === 0) return false;
  const set = new CandidateSet<K>();
  fill(set, host, cands);
  const out: number[] = [];
  return wantsWider(set, out, rankInto(set, opts, out, 1), opts);
}

/** needsWider on a ranking already made (rankCandidates' order, best first):
 * the first candidate reported no free slot. The router ranks once. */
export function rankingNeedsWider<K>(ranked: readonly Candidate<K>[], opts: PlacementOptions): boolean {
  const first = ranked[0];
  return opts.widen && first !== undefined && first.load !== undefined && !(first.load.free > 0);
}

/** Which crawlers get a task for a host at `host`: the first `maxAttempts` in policy order. */
export function place<K>(host: Coordinate, cands: readonly Candidate<K>[], opts: PlacementOptions): Placement<K> {
  if (cands.length === 0) return { kind: 'no-crawler' };
  return { kind: 'send', order: rankCandidates(host, cands, opts).slice(0, opts.maxAttempts) };
}

export interface ForwardContext {
  /** Forwards the task has had before it reached the deciding crawler. */
  hops: number;
  /** The host's coordinate, when the order carries one. */
  host?: Coordinate;
  /** The deciding crawler's own coordinate. */
  self?: Coordinate;
}

/** Where a crawler with a full queue sends a task next, or why it refuses it.
 * `cands` are the crawlers it knows, minus the sender and itself. */
export function forward<K>(ctx: ForwardContext, cands: readonly Candidate<K>[], opts: PlacementOptions): ForwardDecision<K> {
  if (!mayForward(ctx.hops, opts)) return { kind: 'refuse', reason: 'hop-limit' };
  const anchor = opts.forwardAnchor === 'host' ? (ctx.host ?? ctx.self) : (ctx.self ?? ctx.host);
  const set = new CandidateSet<K>();
  fill(set, anchor, cands);
  const out: number[] = [];
  // The forwarder's own RTT to the anchor bounds a last-hop target (lastHopBound) and sets
  // which targets lie outward of it (outward); measured from itself neither applies.
  const selfRtt = anchor !== undefined && ctx.self !== undefined && anchor !== ctx.self ? predictRtt(ctx.self, anchor) : Infinity;
  const m = forwardInto(set, opts, out, ctx.hops, selfRtt);
  if (m <= 0) return { kind: 'refuse', reason: 'no-target' };
  return { kind: 'forward', hops: ctx.hops + 1, targets: out.slice(0, m).map((i) => set.ids[i]!) };
}
