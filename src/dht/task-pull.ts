// The pull fallback, /volcrawl/task-pull/1.0.0 (docs/nat.md, "Pull-only
// volunteers"; YaCy's remote crawl): a volunteer that nobody can dial — behind
// NAT with no relay reservation — asks its manager for work over a connection
// it dialled itself, and the manager answers with the orders routed to it.
//
//   request  { free, coord?, waitMs }                         ≤ 1 KiB
//   reply    { orders: [envelope…] (≤ min(free, 4)), retryMs } ≤ 4 × (1 MiB + 1 KiB)
//   ack      { results: [status…] }  one per order, in order    ≤ 1 KiB
//
// The orders are the manager's signed envelopes exactly as pushed ones (the
// volunteer runs each through its TaskReceiver: signature, schema, expiry,
// duplicates), at most the volunteer's free slots; the manager holds an empty
// request up to `waitMs` (a long poll, ≤ 20 s) so an order routed meanwhile
// goes at once. Requests are rate-limited per peer and served on direct
// connections only (a relayed connection is for the small exchanges).
//
// Manager side (PullDesk): an order waits ("is parked") for a pull in two
// cases — the crawler nearest its host is a pull-only volunteer (routing by
// coordinate, as for a push: the order is parked for that volunteer only), or
// no push was accepted and some volunteer pulls (any puller takes it, nearest
// first). A parked order no pull takes in `holdMs` comes back as not placed,
// so the task service fails it and its channel becomes due again: nothing is
// lost silently.
import { z } from 'zod';
import type { Logger } from 'pino';
import type { Connection, Libp2p, Stream } from '@libp2p/interface';
import { peerIdFromString } from '@libp2p/peer-id';
import { predictRtt, type Coordinate } from '../coords/index.js';
import { coordSchema, envelopeSchema, MAX_TASK_BYTES, type SignedEnvelope, type WireCoord } from './signing.js';
import { fromWireCoord, toWireCoord } from './peers.js';
import { jsonChannel } from './wire.js';
import { PeerRateLimiter, type RateLimitOptions } from './rate-limit.js';
import type { TaskReply } from './task-protocol.js';

export const TASK_PULL_PROTOCOL = '/volcrawl/task-pull/1.0.0';
/** Orders one pull carries at most. */
export const MAX_PULL_ORDERS = 4;
/** The longest a manager holds an empty pull, ms. */
export const MAX_PULL_WAIT_MS = 20_000;
const SMALL_MAX_BYTES = 1024;
export const PULL_REPLY_MAX_BYTES = MAX_PULL_ORDERS * (MAX_TASK_BYTES + 1024);
const STATUSES = ['accepted', 'full', 'leaving', 'rejected'] as const;

const requestSchema = z.strictObject({
  free: z.number().int().min(1).max(1024),
  coord: coordSchema.optional(),
  waitMs: z.number().int().min(0).max(MAX_PULL_WAIT_MS),
});
const replySchema = z.strictObject({
  orders: z.array(envelopeSchema).max(MAX_PULL_ORDERS),
  retryMs: z.number().int().min(0).max(600_000),
});
const ackSchema = z.strictObject({ results: z.array(z.enum(STATUSES)).max(MAX_PULL_ORDERS) });

/** How a parked order ended: taken by a puller (with the status its receiver answered), or nobody took it in time (null). */
export type PullOutcome = { status: TaskReply['status']; by: string } | null;

interface Parked {
  envelope: SignedEnvelope;
  host?: Coordinate;
  /** Only this puller may take it (the crawler nearest the host). */
  for?: string;
  exclude?: ReadonlySet<string>;
  done: (r: PullOutcome) => void;
  timer: ReturnType<typeof setTimeout>;
}

interface Puller {
  at: number;
  free: number;
  coord?: Coordinate;
}

export interface PullDeskOptions {
  libp2p: Libp2p;
  /** What the manager last heard of a peer's coordinate (its probes), for a pull that names none: the pull's
   * own claim is fresher (the manager only hears a pull-only volunteer's coordinate when that volunteer probes it). */
  coordOf?: (peer: string) => Coordinate | undefined;
  /** Told of each valid pull (the peer is alive and a crawler, whatever a failed push made of it). */
  onPull?: (peer: string) => void;
  /** How long an order waits for a pull, ms (default 30 s). */
  holdMs?: number;
  /** A volunteer counts as pulling this long after its last pull, ms (default 45 s: a long poll plus its pause). */
  pullerTtlMs?: number;
  /** Orders parked at most (more are not parked: the dispatch reports them unplaced). */
  maxParked?: number;
  /** Pulls per peer (default 1 a second, a burst of 4). */
  rateLimit?: RateLimitOptions;
  /** What a puller is told to wait before its next pull when a pull found no work, ms (default 1 s: the long poll already paced it). */
  retryMs?: number;
  now?: () => number;
  log?: Logger;
}

/** The manager's side: parks orders for pull-only volunteers and hands them out when they pull. */
export class PullDesk {
  private readonly parked = new Set<Parked>();
  private readonly pullers = new Map<string, Puller>();
  private readonly waiters = new Set<() => void>();
  private readonly limiter: PeerRateLimiter;
  private readonly now: () => number;
  /** Orders handed out by pulls, and those a receiver accepted. */
  handedOut = 0;
  acceptedByPull = 0;

  constructor(private readonly o: PullDeskOptions) {
    this.limiter = new PeerRateLimiter(o.rateLimit ?? { perSecond: 1, burst: 4 });
    this.now = o.now ?? (() => performance.now());
  }

  async start(): Promise<void> {
    await this.o.libp2p.handle(TASK_PULL_PROTOCOL, (s, c) => this.onStream(s, c), { maxInboundStreams: 64 });
  }

  async stop(): Promise<void> {
    await this.o.libp2p.unhandle(TASK_PULL_PROTOCOL).catch(() => undefined);
    for (const p of [...this.parked]) this.finish(p, null);
    for (const w of [...this.waiters]) w();
  }

  /** Volunteers that pulled lately (pull-only: no push goes to them). */
  live(): Set<string> {
    const t = this.now();
    const out = new Set<string>();
    for (const [id, p] of this.pullers) {
      if (t - p.at <= (this.o.pullerTtlMs ?? 45_000)) out.add(id);
      else this.pullers.delete(id);
    }
    return out;
  }

  /** A live puller's coordinate (the manager's view first) and the free slots its last pull named, less the orders already parked for it. */
  puller(id: string): { coord?: Coordinate; room: number } | null {
    if (!this.live().has(id)) return null;
    const p = this.pullers.get(id)!;
    let waiting = 0;
    for (const x of this.parked) if (x.for === id) waiting++;
    const coord = p.coord ?? this.o.coordOf?.(id);
    return { ...(coord !== undefined ? { coord } : {}), room: p.free - waiting };
  }

  /** Orders waiting for a pull. */
  get parkedCount(): number {
    return this.parked.size;
  }

  /** Parks an order until a pull takes it or `holdMs` passes (then null). */
  offer(envelope: SignedEnvelope, o: { host?: WireCoord; for?: string; exclude?: ReadonlySet<string> } = {}): Promise<PullOutcome> {
    if (this.parked.size >= (this.o.maxParked ?? 10_000)) return Promise.resolve(null);
    return new Promise<PullOutcome>((resolve) => {
      const p: Parked = {
        envelope,
        ...(o.host !== undefined ? { host: fromWireCoord(o.host) } : {}),
        ...(o.for !== undefined ? { for: o.for } : {}),
        ...(o.exclude !== undefined ? { exclude: o.exclude } : {}),
        done: resolve,
        timer: setTimeout(() => this.finish(p, null), this.o.holdMs ?? 30_000),
      };
      p.timer.unref?.();
      this.parked.add(p);
      for (const w of [...this.waiters]) w();
    });
  }

  private finish(p: Parked, r: PullOutcome): void {
    if (!this.parked.delete(p)) return;
    clearTimeout(p.timer);
    p.done(r);
  }

  /** Up to `n` parked orders for `peer`: those parked for it, then others nearest its coordinate. */
  private take(peer: string, n: number, coord: Coordinate | undefined): Parked[] {
    const mine: Parked[] = [];
    const open: Parked[] = [];
    for (const p of this.parked) {
      if (p.for === peer) mine.push(p);
      else if (p.for === undefined && p.exclude?.has(peer) !== true) open.push(p);
    }
    const dist = (p: Parked) => (p.host !== undefined && coord !== undefined ? predictRtt(p.host, coord) : Infinity);
    open.sort((a, b) => dist(a) - dist(b));
    const out = [...mine, ...open].slice(0, n);
    for (const p of out) this.parked.delete(p); // taken: no other pull gets it, its timer no longer fails it
    for (const p of out) clearTimeout(p.timer);
    return out;
  }

  private async onStream(stream: Stream, conn: Connection): Promise<void> {
    const from = conn.remotePeer.toString();
    const ch = jsonChannel(stream, SMALL_MAX_BYTES, MAX_PULL_WAIT_MS + 15_000, PULL_REPLY_MAX_BYTES);
    let taken: Parked[] = [];
    let sent = false;
    try {
      if (!this.limiter.take(from)) return ch.abort('rate limited');
      const req = requestSchema.safeParse(await ch.read());
      if (!req.success) return ch.abort('malformed pull request');
      const claimed = req.data.coord !== undefined ? fromWireCoord(req.data.coord) : undefined;
      const puller = { at: this.now(), free: req.data.free, ...(claimed !== undefined ? { coord: claimed } : {}) };
      this.pullers.set(from, puller);
      this.o.onPull?.(from);
      const coord = claimed ?? this.o.coordOf?.(from);
      const n = Math.min(req.data.free, MAX_PULL_ORDERS);
      taken = this.take(from, n, coord);
      if (taken.length === 0 && req.data.waitMs > 0) {
        // The long poll: wait for an order this peer may take, or the deadline.
        const until = Date.now() + req.data.waitMs;
        while (taken.length === 0 && Date.now() < until && conn.status === 'open') {
          await new Promise<void>((resolve) => {
            const done = (): void => {
              clearTimeout(t);
              this.waiters.delete(done);
              resolve();
            };
            const t = setTimeout(done, until - Date.now());
            this.waiters.add(done);
          });
          puller.at = this.now();
          taken = this.take(from, n, coord);
        }
      }
      await ch.write({ orders: taken.map((p) => p.envelope), retryMs: this.o.retryMs ?? 1_000 });
      sent = true;
      this.handedOut += taken.length;
      if (taken.length > 0) this.o.log?.info({ peer: from, orders: taken.length }, 'orders handed out by a pull');
      if (taken.length === 0) return await ch.close();
      const ack = ackSchema.safeParse(await ch.read().catch(() => null));
      taken.forEach((p, i) => {
        // No answer after the orders went: it may hold them; the task's deadline settles it.
        const status = ack.success ? (ack.data.results[i] ?? 'rejected') : 'accepted';
        if (status === 'accepted') this.acceptedByPull++;
        p.done({ status, by: from });
      });
      taken = [];
      await ch.close();
    } catch (err) {
      this.o.log?.debug({ peer: from, err: String(err) }, 'pull stream failed');
      ch.abort('pull failed');
    } finally {
      // Orders that never reached the puller go back to the desk (their hold starts again).
      for (const p of taken) {
        if (sent) {
          p.done({ status: 'accepted', by: from });
          continue;
        }
        p.timer = setTimeout(() => this.finish(p, null), this.o.holdMs ?? 30_000);
        p.timer.unref?.();
        this.parked.add(p);
      }
    }
  }
}

export interface TaskPullerOptions {
  libp2p: Libp2p;
  manager: string;
  /** Whether this node pulls now (it has no address others can dial). */
  active: () => boolean;
  /** Free task slots (0: nothing to ask for — paused or busy). */
  free: () => number;
  coord: () => Coordinate;
  /** The task receiver's verification and submission of one order, as if it had been pushed. */
  handle: (envelope: SignedEnvelope) => Promise<TaskReply>;
  /** Pause after a failed pull, ms (default 5 s). */
  everyMs?: number;
  /** Gap between local checks for a free slot (or pull mode) while there is nothing to ask for, ms (default 500). */
  idleCheckMs?: number;
  /** How long the manager may hold an empty pull, ms (default 15 s). */
  waitMs?: number;
  log: Logger;
}

/** The volunteer's side: while `active`, asks the manager for up to its free slots of orders. */
export class TaskPuller {
  readonly name = 'task pull';
  private timer: ReturnType<typeof setTimeout> | undefined;
  private running = false;
  private wasActive = false;
  /** Orders received by pulls, and those accepted; pulls failed in a row. */
  pulled = 0;
  accepted = 0;
  failures = 0;

  constructor(private readonly o: TaskPullerOptions) {}

  start(): void {
    this.running = true;
    this.schedule(0);
  }

  stop(): void {
    this.running = false;
    clearTimeout(this.timer);
  }

  private schedule(ms: number): void {
    if (!this.running) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.round(), ms);
    this.timer.unref?.();
  }

  private async round(): Promise<void> {
    const every = this.o.everyMs ?? 5_000;
    const active = this.o.active();
    if (active !== this.wasActive) {
      this.wasActive = active;
      this.o.log.info({ pull: active }, active ? 'pulling tasks from the manager (nobody can dial this node, or its pushes fail)' : 'reachable again: tasks are pushed, no more pulls');
    }
    const free = this.o.free();
    // A local check, no traffic: a slot that frees up is offered to the manager within half a second
    // (a pushed order would come as soon as the manager issued it; a pull must not lag far behind).
    if (!active || free <= 0) return this.schedule(this.o.idleCheckMs ?? 500);
    try {
      const r = await this.pullOnce(free);
      this.failures = 0;
      this.schedule(r.orders > 0 ? 0 : r.retryMs);
    } catch (err) {
      this.failures++;
      // The first failure of a streak at info (the owner sees why no task comes), the rest at debug.
      this.o.log[this.failures === 1 || this.failures % 60 === 0 ? 'info' : 'debug']({ err: String(err), failures: this.failures }, 'pull failed');
      this.schedule(every);
    }
  }

  /** One pull: asks, runs each order through the receiver, acknowledges. */
  async pullOnce(free: number): Promise<{ orders: number; accepted: number; retryMs: number }> {
    const waitMs = Math.min(MAX_PULL_WAIT_MS, this.o.waitMs ?? 15_000);
    const stream = await this.o.libp2p.dialProtocol(peerIdFromString(this.o.manager), TASK_PULL_PROTOCOL, { signal: AbortSignal.timeout(15_000) });
    const ch = jsonChannel(stream, PULL_REPLY_MAX_BYTES, waitMs + 15_000, SMALL_MAX_BYTES);
    try {
      await ch.write({ free: Math.min(free, 1024), coord: toWireCoord(this.o.coord()), waitMs });
      const reply = replySchema.parse(await ch.read());
      const orders = reply.orders.slice(0, free);
      const results: TaskReply['status'][] = [];
      for (const env of orders) results.push((await this.o.handle(env).catch(() => ({ status: 'rejected' as const }))).status);
      if (reply.orders.length > 0) await ch.write({ results });
      await ch.close();
      const accepted = results.filter((s) => s === 'accepted').length;
      this.pulled += orders.length;
      this.accepted += accepted;
      if (orders.length > 0) this.o.log.info({ orders: orders.length, accepted, results }, 'pulled tasks from the manager');
      return { orders: orders.length, accepted, retryMs: Math.max(1_000, reply.retryMs) };
    } catch (err) {
      ch.abort('pull failed');
      throw err;
    }
  }
}
