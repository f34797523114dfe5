// Checking a crawler's place in the overlay against RTTs others measure to it
// (issue 13, item 4): the coordinate it claims and the cells it announces.
//
// Where the evidence comes from, and why: a claim is free and an RTT cannot be
// shortened, so the evidence is RTTs timed *to* the crawler by others — never
// what the crawler says about itself (its own probe RTTs, or the turnaround it
// reports in a probe reply, which coord-protocol.ts subtracts and a liar would
// inflate to look close). The manager has no coordinate and sits in one
// place, so its own probes are one vantage point, not a position. Volunteers
// already probe their neighbours, but shipping every neighbour table to the
// manager costs bandwidth on every volunteer for checks that are rarely
// needed. So the checker asks for evidence when it needs it: a router that
// meets a crawler as a candidate (found in a cell's provider records) asks a
// few other crawlers — *witnesses*, the ones nearest the claimed coordinate
// first (those a false closeness contradicts) plus random ones — to time the
// raw round trip to it now (/volcrawl/witness/1.0.0). From their coordinates
// and RTTs, src/coords/plausibility.ts judges the claim (Veracity-style
// votes, the too-close physical bound, triangle violations from selective
// delay) and places the crawler where the RTTs say it is; src/dht/plausibility.ts
// then checks each announced cell against the claim and that measured position.
// A crawler found at fault is not used for routing until its verdict expires,
// and the router's owner hears of every verdict (the manager turns them into
// overlay-ledger outcomes in its reputation: src/manager/trust).
//
// A witness also reports how far its own coordinate may be off, in ms
// (ownUncertaintyMs): one whose coordinate has not settled still votes, with
// its bounds widened by that (plausibility.ts), but never places the crawler.
//
// Verification runs in the background: a candidate not yet judged is used
// (a network of a handful of crawlers could not route otherwise), and a
// verdict is cached for `ttlMs`. Witnesses are volunteers, so they may lie;
// plausibility.ts sets aside the measurers a triangle check blames, and
// docs/trust.md says what colluding witnesses can still do.
//
// A witness only times crawlers it already knows of or is connected to (never
// an address a stranger names), at most `maxConcurrent` at once, rate-limited
// per requester, and reuses a measurement for `reuseMs`.
import { z } from 'zod';
import type { Logger } from 'pino';
import type { Libp2p, PeerId, Stream, Connection } from '@libp2p/interface';
import { peerIdFromString } from '@libp2p/peer-id';
import { predictRtt, type Coordinate, type VivaldiNode } from '../coords/index.js';
import { checkCoordinateClaim, measuredPosition, medianOf, type ClaimCheck, type PlausibilityOptions, type RttObservation } from '../coords/plausibility.js';
import { randomInt, type Rng } from '../rng.js';
import { DEFAULT_CELLS, type CellOptions } from './cells.js';
import { COORD_PROTOCOL } from './coord-wire.js';
import { fromWireCoord, toWireCoord, type PeerState, type PeerTable } from './peers.js';
import { checkAnnouncement, type AnnouncementCheck } from './plausibility.js';
import { PeerRateLimiter } from './rate-limit.js';
import { coordSchema } from './signing.js';
import { jsonChannel } from './wire.js';

const round = (c: Coordinate) => ({ vec: Array.from(c.vec, (x) => Math.round(x * 10) / 10), height: Math.round(c.height * 10) / 10, error: Math.round(c.error * 100) / 100 });

export const WITNESS_PROTOCOL = '/volcrawl/witness/1.0.0';
const WITNESS_MAX_BYTES = 2048;

const witnessRequestSchema = z.object({ peer: z.string().min(1).max(128) });
const witnessReplySchema = z.object({
  coord: coordSchema.optional(),
  rttMs: z.number().finite().positive().max(60_000).optional(),
  /** The witness's own uncertainty, ms, both ways and for too-long predictions (ownMisfitsMs). */
  uncertaintyMs: z.number().finite().nonnegative().max(600_000).optional(),
  overshootMs: z.number().finite().nonnegative().max(600_000).optional(),
  error: z.string().max(256).optional(),
});
const probeReplySchema = z.object({ crawler: z.boolean(), coord: coordSchema.optional() });

export interface WitnessServiceOptions {
  libp2p: Libp2p;
  peers: PeerTable;
  vivaldi: VivaldiNode;
  /** Probes per measurement (the minimum counts). */
  probes?: number;
  /** A measurement of a peer is reused for this long, ms. */
  reuseMs?: number;
  maxConcurrent?: number;
  timeoutMs?: number;
  log?: Logger;
}

/** Times the raw round trip of one coordinate probe to `peer`, ms: request
 * written → reply read, nothing the peer reports subtracted. */
export async function rawProbe(libp2p: Libp2p, peer: PeerId, coord: Coordinate | undefined, timeoutMs: number): Promise<number> {
  return (await probeReply(libp2p, peer, coord, true, timeoutMs)).rttMs;
}

/** One coordinate probe to `peer`: the raw round trip and the coordinate it claims now. */
async function probeReply(libp2p: Libp2p, peer: PeerId, coord: Coordinate | undefined, crawler: boolean, timeoutMs: number): Promise<{ rttMs: number; claim: Coordinate | undefined }> {
  const stream = await libp2p.dialProtocol(peer, COORD_PROTOCOL, { signal: AbortSignal.timeout(timeoutMs) });
  const ch = jsonChannel(stream, 4096, timeoutMs);
  try {
    const t0 = performance.now();
    await ch.write({ t: 'probe', crawler, ...(coord !== undefined ? { coord: toWireCoord(coord) } : {}) });
    const reply = probeReplySchema.parse(await ch.read());
    const rtt = performance.now() - t0;
    await ch.close();
    return { rttMs: Math.max(0.05, rtt), claim: reply.coord === undefined ? undefined : fromWireCoord(reply.coord) };
  } catch (err) {
    ch.abort('witness probe failed');
    throw err;
  }
}

/**
 * How far a witness's own coordinate may be off, ms, over the crawlers it has
 * timed itself (the subject of the request left out: its claim is on trial),
 * or undefined with fewer than 3 of them. Vivaldi's error estimate is relative
 * and capped (1.5), so it cannot say whether a coordinate is 2 ms or 200 ms
 * off on a LAN; this says it in ms, and a checker widens this witness's bounds
 * by it. Two figures, because the two ways a prediction misses have different
 * causes:
 *  - uncertaintyMs: the median of |predicted − measured|, both ways;
 *  - overshootMs: the median of predicted − measured over the crawlers whose
 *    RTT it predicts too long (0 when it predicts none too long). Only a
 *    misplaced coordinate makes a prediction too long; a measured RTT too long
 *    is also event-loop delay on a loaded machine, which never shortens an
 *    RTT. So a claim that predicts a longer RTT than this witness timed (a
 *    crawler claiming to be farther than it is) is judged with this figure,
 *    which load does not inflate: with the symmetric one, a loaded witness's
 *    delayed neighbours widened its bounds until a 300 ms lie passed.
 */
export function ownMisfitsMs(self: Coordinate, peers: readonly PeerState[], except: string): { uncertaintyMs: number; overshootMs: number } | undefined {
  const misfits: number[] = [];
  const overshoots: number[] = [];
  for (const p of peers) {
    if (!p.crawler || p.id === except || p.coord === undefined || p.rttMs === undefined || p.coord.vec.length !== self.vec.length) continue;
    const m = predictRtt(self, p.coord) - p.rttMs;
    if (!Number.isFinite(m)) continue;
    misfits.push(Math.abs(m));
    if (m > 0) overshoots.push(m);
  }
  if (misfits.length < 3) return undefined;
  return { uncertaintyMs: medianOf(misfits), overshootMs: overshoots.length === 0 ? 0 : medianOf(overshoots) };
}

/** The symmetric figure of ownMisfitsMs alone. */
export function ownUncertaintyMs(self: Coordinate, peers: readonly PeerState[], except: string): number | undefined {
  return ownMisfitsMs(self, peers, except)?.uncertaintyMs;
}

/** Served by every crawler: times the round trip to a crawler it knows when another node asks. */
export class WitnessService {
  private readonly limiter = new PeerRateLimiter({ perSecond: 2, burst: 10 });
  private readonly recent = new Map<string, { at: number; rtt: Promise<number> }>();
  private active = 0;
  /** Measurements made and requests refused (figures for status and tests). */
  measured = 0;
  refused = 0;

  constructor(private readonly o: WitnessServiceOptions) {}

  async start(): Promise<void> {
    await this.o.libp2p.handle(WITNESS_PROTOCOL, (stream, conn) => this.onStream(stream, conn), { maxInboundStreams: 16, maxOutboundStreams: 16 });
  }

  async stop(): Promise<void> {
    await this.o.libp2p.unhandle(WITNESS_PROTOCOL).catch(() => undefined);
  }

  private knows(id: string): boolean {
    if (this.o.peers.get(id)?.crawler === true) return true;
    try {
      return this.o.libp2p.getConnections(peerIdFromString(id)).length > 0;
    } catch {
      return false;
    }
  }

  /** The raw RTT to `id` (min of a few probes), reusing a recent measurement. */
  private measure(id: string): Promise<number> {
    const now = performance.now();
    const hit = this.recent.get(id);
    if (hit !== undefined && now - hit.at < (this.o.reuseMs ?? 30_000)) return hit.rtt;
    if (this.active >= (this.o.maxConcurrent ?? 4)) return Promise.reject(new Error('busy'));
    this.active++;
    const timeoutMs = this.o.timeoutMs ?? 10_000;
    const rtt = (async () => {
      let best = Infinity;
      for (let i = 0; i < (this.o.probes ?? 2); i++) best = Math.min(best, await rawProbe(this.o.libp2p, peerIdFromString(id), this.o.vivaldi.coord, timeoutMs));
      this.measured++;
      return best;
    })().finally(() => this.active--);
    rtt.catch(() => this.recent.delete(id));
    if (this.recent.size >= 1024) this.recent.delete(this.recent.keys().next().value!);
    this.recent.set(id, { at: now, rtt });
    return rtt;
  }

  private async onStream(stream: Stream, conn: Connection): Promise<void> {
    const remote = conn.remotePeer.toString();
    if (!this.limiter.take(remote)) {
      this.refused++;
      stream.abort(new Error('rate limited'));
      return;
    }
    const ch = jsonChannel(stream, WITNESS_MAX_BYTES, this.o.timeoutMs ?? 10_000);
    try {
      const req = witnessRequestSchema.parse(await ch.read());
      let reply: z.infer<typeof witnessReplySchema>;
      if (req.peer === this.o.libp2p.peerId.toString() || req.peer === remote || !this.knows(req.peer)) {
        this.refused++;
        reply = { error: 'unknown peer' };
      } else {
        try {
          const rttMs = await this.measure(req.peer);
          const u = ownMisfitsMs(this.o.vivaldi.coord, this.o.peers.all(), req.peer);
          reply = { coord: toWireCoord(this.o.vivaldi.coord), rttMs, ...(u !== undefined ? { uncertaintyMs: u.uncertaintyMs, overshootMs: u.overshootMs } : {}) };
        } catch (err) {
          reply = { error: String(err).slice(0, 200) };
        }
      }
      await ch.write(reply);
      await ch.close();
    } catch (err) {
      this.o.log?.debug({ peer: remote, err: String(err) }, 'bad witness request');
      ch.abort('bad request');
    }
  }
}

/** Asks `witness` to time the round trip to `peer`. */
export async function askWitness(libp2p: Libp2p, witness: string, peer: string, timeoutMs = 10_000): Promise<{ coord: Coordinate; rttMs: number; uncertaintyMs?: number; overshootMs?: number }> {
  const stream = await libp2p.dialProtocol(peerIdFromString(witness), WITNESS_PROTOCOL, { signal: AbortSignal.timeout(timeoutMs) });
  const ch = jsonChannel(stream, WITNESS_MAX_BYTES, timeoutMs);
  try {
    await ch.write({ peer });
    const r = witnessReplySchema.parse(await ch.read());
    await ch.close();
    if (r.coord === undefined || r.rttMs === undefined) throw new Error(`witness ${witness}: ${r.error ?? 'no measurement'}`);
    return { coord: fromWireCoord(r.coord), rttMs: r.rttMs, ...(r.uncertaintyMs !== undefined ? { uncertaintyMs: r.uncertaintyMs, ...(r.overshootMs !== undefined ? { overshootMs: r.overshootMs } : {}) } : {}) };
  } catch (err) {
    ch.abort('witness request failed');
    throw err;
  }
}

export interface OverlayVerdict {
  peer: string;
  /** bad: the claim or an announced cell is inconsistent with the measured RTTs;
   * unknown: too few witnesses answered, or the claim is not settled yet. */
  verdict: 'ok' | 'bad' | 'unknown';
  claim: ClaimCheck['verdict'] | 'no-claim';
  claimReasons: ClaimCheck['reasons'];
  /** The cell-announcement check (null when no cells were given). */
  announcement: AnnouncementCheck | null;
  witnesses: number;
  /** Where the RTTs place the crawler (null with too few witnesses). */
  measured: { vec: number[]; uncertaintyMs: number } | null;
  at: number;
}

export interface OverlayCheckOptions {
  libp2p: Libp2p;
  peers: PeerTable;
  rng: Rng;
  cells?: CellOptions;
  /** How far outside an announced cell the crawler may be, in cell sides
   * (default 1: announce.ts keeps a cell within 0.25, but a router also sees
   * records a crawler left behind when its coordinate moved, until they expire;
   * a cell one side away wins a liar little). */
  margin?: number;
  plausibility?: Partial<PlausibilityOptions>;
  /** Witnesses asked per verification. */
  witnesses?: number;
  /** A verdict is used for this long, then the crawler is checked again, ms. */
  ttlMs?: number;
  /** Verifications in flight at once. */
  maxConcurrent?: number;
  timeoutMs?: number;
  /** Every ok/bad verdict (the manager feeds its reputation with them). */
  onVerdict?: (v: OverlayVerdict) => void;
  log?: Logger;
}

/** Verifies crawlers' coordinate claims and cell announcements through witnesses; used by a router before it routes to a candidate. */
export class OverlayChecker {
  private readonly verdicts = new Map<string, { v: OverlayVerdict; cells: Set<string>; until: number }>();
  private readonly pending = new Map<string, Promise<OverlayVerdict>>();
  /** Verifications made and candidates refused (figures for status and tests). */
  verifications = 0;
  refusals = 0;

  constructor(private readonly o: OverlayCheckOptions) {}

  /** A witness whose own coordinate is settled (error at most this, the same
   * bound as a claim's: plausibility maxClaimError) is a landmark: it votes by
   * the calibrated bounds and places the crawler. One that is not settled
   * votes only with its uncertainty in ms (ownUncertaintyMs), which widens its
   * bounds, and never places the crawler: a new node's coordinate could
   * otherwise frame an honest crawler. */
  private get maxWitnessError(): number {
    return this.o.plausibility?.maxClaimError ?? 0.5;
  }

  /** The cached verdict for `peer`, if still valid. */
  verdict(peer: string): OverlayVerdict | undefined {
    const e = this.verdicts.get(peer);
    return e !== undefined && performance.now() < e.until ? e.v : undefined;
  }

  /**
   * May a router use `peer`, found announced in `cells`? False while its
   * verdict is bad. A crawler without a verdict (or announced in cells its
   * verdict did not cover) is admitted and verified in the background.
   */
  admit(peer: string, cells: readonly string[]): boolean {
    const e = this.verdicts.get(peer);
    const fresh = e !== undefined && performance.now() < e.until;
    if (fresh && e.v.verdict === 'bad') {
      this.refusals++;
      return false;
    }
    if (!fresh || cells.some((c) => !e.cells.has(c))) {
      void this.verify(peer, [...new Set([...(fresh ? e.cells : []), ...cells])]).catch((err: unknown) => this.o.log?.debug({ peer, err: String(err) }, 'overlay verification failed'));
    }
    return true;
  }

  /**
   * Verifies those of `peers` that are due: never verified, verdict expired, or
   * found bad more than a quarter TTL ago (so evidence against a liar accrues
   * faster than for an honest crawler), at most `maxConcurrent` at once. The
   * manager runs this over every crawler it knows, so a crawler is checked even
   * when no router meets it (a liar claiming a far region is found in no cell
   * near the hosts it is really near).
   */
  sweep(peers: readonly string[]): number {
    const now = performance.now();
    const ttl = this.o.ttlMs ?? 600_000;
    let started = 0;
    for (const id of peers) {
      if (this.pending.size >= (this.o.maxConcurrent ?? 4)) break;
      const e = this.verdicts.get(id);
      const due = e === undefined || now >= e.until || (e.v.verdict === 'bad' && now >= e.until - ttl * 0.75);
      if (!due || this.pending.has(id)) continue;
      started++;
      void this.verify(id, e !== undefined ? [...e.cells] : []).catch((err: unknown) => this.o.log?.debug({ peer: id, err: String(err) }, 'overlay verification failed'));
    }
    return started;
  }

  /** Witnesses for a claim at `claim`: the nearest crawlers to it first, then random others. */
  private pickWitnesses(peer: string, claim: Coordinate): string[] {
    const self = this.o.libp2p.peerId.toString();
    const k = this.o.witnesses ?? 5;
    const pool = this.o.peers
      .all()
      .filter((p) => p.crawler && !p.down && p.coord !== undefined && p.id !== peer && p.id !== self && p.coord.vec.length === claim.vec.length && this.verdict(p.id)?.verdict !== 'bad');
    const dist = (c: Coordinate) => Math.hypot(...Array.from(c.vec, (x, i) => x - claim.vec[i]!));
    const near = [...pool].sort((a, b) => dist(a.coord!) - dist(b.coord!)).slice(0, Math.ceil(k / 2));
    const rest = pool.filter((p) => !near.includes(p));
    for (let i = rest.length - 1; i > 0; i--) {
      const j = randomInt(this.o.rng, i + 1);
      [rest[i], rest[j]] = [rest[j]!, rest[i]!];
    }
    return [...near, ...rest].slice(0, k).map((p) => p.id);
  }

  /** Verifies `peer` now (concurrent calls for one peer share one verification). */
  verify(peer: string, cells: readonly string[] = []): Promise<OverlayVerdict> {
    const running = this.pending.get(peer);
    if (running !== undefined) return running;
    if (this.pending.size >= (this.o.maxConcurrent ?? 4)) return Promise.resolve(this.unknown(peer, 0, null, 'no-claim'));
    const p = this.run(peer, cells).finally(() => this.pending.delete(peer));
    this.pending.set(peer, p);
    return p;
  }

  private unknown(peer: string, witnesses: number, announcement: AnnouncementCheck | null, claim: OverlayVerdict['claim']): OverlayVerdict {
    return { peer, verdict: 'unknown', claim, claimReasons: [], announcement, witnesses, measured: null, at: Date.now() };
  }

  /** The coordinate `peer` claims now, asked of it directly (the peer table's
   * copy can be minutes old, and a crawler whose coordinate moved would be
   * judged on where it was); the table's copy when it does not answer. */
  private async currentClaim(peer: string, timeoutMs: number): Promise<Coordinate | undefined> {
    try {
      // Asked as a non-crawler: the checker (the manager) is no routing candidate.
      const { claim } = await probeReply(this.o.libp2p, peerIdFromString(peer), undefined, false, timeoutMs);
      if (claim !== undefined) {
        this.o.peers.note(peer, { coord: claim });
        return claim;
      }
    } catch (err) {
      this.o.log?.debug({ peer, err: String(err) }, 'overlay check: no fresh coordinate claim');
    }
    return this.o.peers.get(peer)?.coord;
  }

  private async run(peer: string, cells: readonly string[]): Promise<OverlayVerdict> {
    this.verifications++;
    const timeoutMs = this.o.timeoutMs ?? 10_000;
    const claim = await this.currentClaim(peer, timeoutMs);
    if (claim === undefined) {
      this.o.log?.debug({ peer }, 'overlay check undecided: no coordinate claim known');
      return this.remember(this.unknown(peer, 0, null, 'no-claim'), cells);
    }
    const asked = this.pickWitnesses(peer, claim);
    const answers = await Promise.allSettled(asked.map((w) => askWitness(this.o.libp2p, w, peer, timeoutMs)));
    const obs: RttObservation[] = answers.flatMap((a, i) => {
      if (a.status !== 'fulfilled') return [];
      const { coord, rttMs, uncertaintyMs, overshootMs } = a.value;
      if (coord.error <= this.maxWitnessError) return [{ measurer: asked[i]!, coord, rttMs }];
      return uncertaintyMs !== undefined ? [{ measurer: asked[i]!, coord, rttMs, uncertaintyMs, ...(overshootMs !== undefined ? { overshootMs } : {}) }] : [];
    });
    this.o.log?.debug({ peer, claim: round(claim), witnesses: obs.map((x) => ({ ...round(x.coord), rtt: Math.round(x.rttMs * 100) / 100, u: x.uncertaintyMs === undefined ? null : Math.round(x.uncertaintyMs * 10) / 10, o: x.overshootMs === undefined ? null : Math.round(x.overshootMs * 10) / 10, predicted: Math.round(predictRtt(claim, x.coord) * 10) / 10 })) }, 'overlay witnesses answered');
    const claimCheck = checkCoordinateClaim(claim, obs, this.o.plausibility ?? {});
    // Witnesses lie too (a coordinate claim of their own, an RTT they make up).
    // Those the triangle check blames are set aside before placing the crawler,
    // and so, when the majority's RTTs bear the claim out, are the few that
    // contradict it: one liar among five would otherwise drag the fit.
    const against = new Set(claimCheck.observations.filter((x) => x.against).map((x) => x.measurer));
    const suspect = new Set([...claimCheck.outlierMeasurers, ...(claimCheck.verdict === 'consistent' ? against : [])]);
    // Only settled witnesses place the crawler (an unsettled one's coordinate is no landmark).
    const trusted = obs.filter((x) => !suspect.has(x.measurer) && x.uncertaintyMs === undefined);
    const pos = measuredPosition(trusted, { dimensions: claim.vec.length }, this.o.rng, this.o.plausibility ?? {});
    const announcement = cells.length > 0 ? checkAnnouncement(cells, claim, pos === null ? null : { coord: pos.coord, uncertaintyMs: pos.uncertaintyMs }, { cells: this.o.cells ?? DEFAULT_CELLS, margin: this.o.margin ?? 1 }) : null;
    // A router sees the cells it found a crawler in, not its announcement set:
    // a crawler that moved is in its old and new cell of a level until the old
    // record expires, so two cells of one level are no fault here.
    // A claim that has not settled (its error above maxClaimError) is judged on
    // nothing (plausibility.ts), and its cells not against it either: such a
    // coordinate drifts (on a loaded loopback by hundreds of ms a minute) and
    // the records of the cells it announced a minute ago are still found. They
    // are still judged on their form and against the measured position.
    const unsettled = claimCheck.verdict === 'unsettled';
    const faults = announcement?.problems.filter((p) => p.problem !== 'duplicate-level' && !(unsettled && p.problem === 'far-from-claim')) ?? [];
    const bad = claimCheck.verdict === 'inconsistent' || faults.length > 0;
    const ok = claimCheck.verdict === 'consistent' && faults.length === 0 && (announcement === null || announcement.measured);
    const v: OverlayVerdict = {
      peer,
      verdict: bad ? 'bad' : ok ? 'ok' : 'unknown',
      claim: claimCheck.verdict,
      claimReasons: claimCheck.reasons,
      announcement,
      witnesses: obs.length,
      measured: pos === null ? null : { vec: Array.from(pos.coord.vec), uncertaintyMs: pos.uncertaintyMs },
      at: Date.now(),
    };
    if (v.verdict === 'bad') this.o.log?.warn({ peer, claim: claimCheck.verdict, reasons: claimCheck.reasons, problems: announcement?.problems.slice(0, 4), witnesses: obs.length }, 'crawler not used for routing: its coordinate or cells disagree with measured RTTs');
    if (v.verdict !== 'unknown') this.o.onVerdict?.(v);
    else this.o.log?.debug({ peer, claim: claimCheck.verdict, asked: asked.length, answered: obs.length, errors: answers.flatMap((a) => (a.status === 'rejected' ? [String(a.reason).slice(0, 120)] : [])).slice(0, 3) }, 'overlay check undecided');
    return this.remember(v, cells);
  }

  private remember(v: OverlayVerdict, cells: readonly string[]): OverlayVerdict {
    // An unknown verdict is retried soon; a decided one holds for the TTL.
    const ttl = v.verdict === 'unknown' ? Math.min(30_000, this.o.ttlMs ?? 600_000) : (this.o.ttlMs ?? 600_000);
    if (this.verdicts.size >= 8192) this.verdicts.delete(this.verdicts.keys().next().value!);
    this.verdicts.set(v.peer, { v, cells: new Set(cells), until: performance.now() + ttl });
    return v;
  }
}
