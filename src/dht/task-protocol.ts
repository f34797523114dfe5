// The task protocol, /volcrawl/task/1.0.0: one signed order per stream.
//
//   request  { envelope: { payload, sig }, hops, handover? }  ≤ 1 MiB + 8 KiB
//   reply    { status, by?, reason?, load?, walked? }    ≤ 4 KiB
//
// status: 'accepted' (by = the crawler that holds it now, maybe after
// forwarding), 'full' (no room here or within the hop limit; `walked`: the
// receiver forwarded it and the crawlers it reached answered 'full' too, so
// the router need not try this neighbourhood again — placement.ts
// mayTryNext, which trusts it only where the next candidate's own load is
// full; absent from older peers, read as false), 'leaving' (the
// receiver is shutting down), 'rejected' (bad signature, bad schema, too large,
// expired, rate limited — never retried elsewhere by the receiver).
//
// A receiver whose queue is full forwards the order, unchanged, to a crawler it
// knows that has room (the paper's forwarding-based scheduling), incrementing
// `hops`; at `maxHops` it answers 'full'. Where it forwards and when it refuses
// is the placement policy's decision (placement.ts).
//
// `handover` (signing.ts) comes with an order a crawler passes on after holding
// it (migration on shutdown): the chain of signed hand-overs ending at the
// receiver, which keeps it and sends it with its uploads so the storage node
// accepts it as the new holder. A receiver forwarding such an order appends its
// own link to the next crawler.
import { z } from 'zod';
import type { Logger } from 'pino';
import type { Libp2p, Stream, Connection, PrivateKey } from '@libp2p/interface';
import { peerIdFromString } from '@libp2p/peer-id';
import { InvalidDataLengthError } from '@libp2p/utils';
import type { Coordinate } from '../coords/index.js';
import {
  envelopeSchema,
  handoverChainSchema,
  MAX_HANDOVER_LINKS,
  MAX_TASK_BYTES,
  signHandover,
  verifyEnvelope,
  type Handover,
  type SignedEnvelope,
  type TaskOrder,
} from './signing.js';
import { loadSchema } from './coord-wire.js';
import { fromWireCoord, type Load, type PeerTable } from './peers.js';
import { DEFAULT_PLACEMENT_OPTIONS, forward as forwardDecision, placementOptions, type PlacementOptions } from './placement.js';
import { jsonChannel } from './wire.js';
import { PeerRateLimiter, type RateLimitOptions } from './rate-limit.js';

export const TASK_PROTOCOL = '/volcrawl/task/1.0.0';
export const TASK_REQUEST_MAX_BYTES = MAX_TASK_BYTES + 8192; // + hops and a hand-over chain
export const TASK_REPLY_MAX_BYTES = 4096;
export const DEFAULT_MAX_HOPS = DEFAULT_PLACEMENT_OPTIONS.maxHops;
/** The wire's hop ceiling (and every receiver's maxHops bound): an order sent
 * with it is run by its receiver or refused 'full', never forwarded — for an
 * order meant for one crawler only (a spot check's verifier). */
export const NO_FORWARD_HOPS = 16;

const requestSchema = z.object({
  envelope: envelopeSchema,
  hops: z.number().int().min(0).max(NO_FORWARD_HOPS),
  handover: handoverChainSchema.optional(),
});

export const replySchema = z.object({
  status: z.enum(['accepted', 'full', 'leaving', 'rejected']),
  by: z.string().max(128).optional(),
  reason: z.string().max(512).optional(),
  load: loadSchema.optional(),
  walked: z.boolean().optional(),
});
export type TaskReply = z.infer<typeof replySchema>;

/** Sends one order to `peer` and returns its reply. Opening the stream is
 * retried (a connection closing under us is common on a busy network);
 * throws an Error on transport failure. Re-sending is safe: receivers
 * acknowledge a duplicate order id without running it twice. `handover` is the
 * chain of hand-overs ending at `peer` when the sender held the task. */
export async function sendTask(
  libp2p: Libp2p,
  peer: string,
  envelope: SignedEnvelope,
  hops = 0,
  timeoutMs = 15_000,
  attempts = 3,
  handover?: Handover[],
): Promise<TaskReply> {
  let lastErr: unknown;
  for (let i = 0; i < attempts; i++) {
    let stream: Stream;
    try {
      // A NATed volunteer may be reachable only through a relay (docs/nat.md): an
      // order is a few KiB, well inside a relayed connection's limits.
      stream = await libp2p.dialProtocol(peerIdFromString(peer), TASK_PROTOCOL, { signal: AbortSignal.timeout(timeoutMs), runOnLimitedConnection: true });
    } catch (err) {
      lastErr = err;
      continue;
    }
    const ch = jsonChannel(stream, TASK_REQUEST_MAX_BYTES, timeoutMs);
    try {
      await ch.write(handover !== undefined ? { envelope, hops, handover } : { envelope, hops });
      const reply = replySchema.parse(await ch.read());
      await ch.close();
      return reply;
    } catch (err) {
      ch.abort('task send failed');
      lastErr = err;
    }
  }
  throw lastErr instanceof Error ? lastErr : new Error(`task send to ${peer} failed: ${describe(lastErr)}`);
}

function describe(err: unknown): string {
  if (err !== null && typeof err === 'object' && 'type' in err) return `event ${String((err as { type: unknown }).type)}`;
  return String(err);
}

/** What the receiver needs of a task runner (src/crawler's TaskManager fits). */
export interface TaskSink<T> {
  submit(task: T): 'accepted' | 'full';
  load(): Load;
}

export interface TaskReceiverOptions<T extends { id: string }> {
  libp2p: Libp2p;
  manager: string;
  parseTask: (json: unknown) => T;
  runner: TaskSink<T>;
  peers: PeerTable;
  /** This node's coordinate, for choosing a nearby crawler to forward to. */
  coord?: () => Coordinate | undefined;
  /** Forwarding hop limit (the placement policy's maxHops). */
  maxHops?: number;
  /** The rest of the placement policy (placement.ts). */
  placement?: Partial<PlacementOptions>;
  rateLimit?: RateLimitOptions;
  timeoutMs?: number;
  /** This node's key: signs its hand-over link when forwarding an order that
   * was handed over to it (without it such orders are not forwarded). */
  privateKey?: PrivateKey;
  /** Called for each order this node accepted (to keep it for migration);
   * `handover` is the chain that hands it to this node, when it came by one. */
  onAccepted?: (order: TaskOrder, envelope: SignedEnvelope, task: T, handover?: Handover[]) => void;
  log?: Logger;
}

export class TaskReceiver<T extends { id: string }> {
  private leaving = false;
  private readonly limiter: PeerRateLimiter;
  private readonly seen = new Map<string, number>();
  accepted = 0;
  forwarded = 0;
  rejected = 0;
  /** The placement policy this receiver forwards by. */
  readonly policy: PlacementOptions;

  constructor(private readonly o: TaskReceiverOptions<T>) {
    this.limiter = new PeerRateLimiter(o.rateLimit ?? { perSecond: 200, burst: 400 });
    this.policy = placementOptions({ ...o.placement, maxHops: o.maxHops });
  }

  async start(): Promise<void> {
    // Orders arrive over relayed (limited) connections too: that is how a NATed volunteer gets them.
    await this.o.libp2p.handle(TASK_PROTOCOL, (s, c) => this.onStream(s, c), { maxInboundStreams: 128, maxOutboundStreams: 128, runOnLimitedConnection: true });
  }

  /** Stop accepting: every later order is answered 'leaving'. */
  stopAccepting(): void {
    this.leaving = true;
  }

  async stop(): Promise<void> {
    this.leaving = true;
    await this.o.libp2p.unhandle(TASK_PROTOCOL).catch(() => undefined);
  }

  private async onStream(stream: Stream, conn: Connection): Promise<void> {
    const remote = conn.remotePeer.toString();
    const ch = jsonChannel(stream, TASK_REQUEST_MAX_BYTES, this.o.timeoutMs ?? 30_000);
    let reply: TaskReply;
    try {
      if (!this.limiter.take(remote)) {
        reply = { status: 'rejected', reason: 'rate limited' };
      } else {
        let raw: unknown;
        try {
          raw = await ch.read();
        } catch (err) {
          if (err instanceof InvalidDataLengthError || (err as Error).name === 'InvalidDataLengthError') {
            this.rejected++;
            await ch.write({ status: 'rejected', reason: `message larger than ${TASK_REQUEST_MAX_BYTES} bytes` }).catch(() => undefined);
            ch.abort('oversized');
            return;
          }
          throw err;
        }
        reply = await this.handle(raw, remote);
      }
      if (reply.status === 'rejected') this.rejected++;
      await ch.write(reply);
      await ch.close();
    } catch (err) {
      this.o.log?.debug({ peer: remote, err: String(err) }, 'task stream failed');
      ch.abort('task stream failed');
    }
  }

  /** Verifies, submits or forwards one order. */
  async handle(raw: unknown, from: string): Promise<TaskReply> {
    const self = this.o.libp2p.peerId.toString();
    const req = requestSchema.safeParse(raw);
    if (!req.success) return { status: 'rejected', reason: `malformed request: ${req.error.issues[0]?.message ?? ''}` };
    if (this.leaving) return { status: 'leaving', load: this.o.runner.load() };
    let verified;
    try {
      verified = await verifyEnvelope(req.data.envelope, { manager: this.o.manager, parseTask: this.o.parseTask });
    } catch (err) {
      const reason = (err as Error).message.slice(0, 500);
      this.o.log?.warn({ peer: from, reason }, 'rejected task');
      return { status: 'rejected', reason };
    }
    const { order, task, envelope } = verified;
    // A chain not ending here, or about another order, proves nothing: drop it.
    let handover = req.data.handover;
    if (handover !== undefined && (handover.at(-1)?.to !== self || handover.some((h) => h.orderId !== order.id))) handover = undefined;
    if (this.seen.has(order.id)) return { status: 'accepted', by: self, load: this.o.runner.load() };
    const r = this.o.runner.submit(task);
    if (r === 'accepted') {
      this.remember(order.id);
      this.accepted++;
      this.o.onAccepted?.(order, envelope, task, handover);
      return { status: 'accepted', by: self, load: this.o.runner.load() };
    }
    if (handover !== undefined && (this.o.privateKey === undefined || handover.length >= MAX_HANDOVER_LINKS)) {
      return { status: 'full', load: this.o.runner.load() };
    }
    const host = order.hostCoord !== undefined ? fromWireCoord(order.hostCoord) : undefined;
    const fwd = await this.forward(envelope, req.data.hops, host, new Set([from, self]), order.id, handover);
    if (fwd.accepted !== undefined) {
      this.forwarded++;
      return { status: 'accepted', by: fwd.accepted.by ?? 'unknown', load: this.o.runner.load() };
    }
    return { status: 'full', load: this.o.runner.load(), ...(fwd.walked ? { walked: true } : {}) };
  }

  /** Forwards a task that arrived after `hops` forwards to the crawlers the
   * placement policy picks among those this node knows: `accepted`, the reply
   * of the one that took it; none when the policy refuses (hop limit, nobody
   * with room) or every target said no — `walked` when at least one of them
   * answered 'full' (a target that failed or is leaving says nothing of room). */
  private async forward(
    envelope: SignedEnvelope,
    hops: number,
    host: Coordinate | undefined,
    exclude: Set<string>,
    orderId: string,
    handover?: Handover[],
  ): Promise<{ accepted?: TaskReply; walked: boolean }> {
    const cands = this.o.peers.crawlers().filter((p) => !exclude.has(p.id));
    const d = forwardDecision({ hops, host, self: this.o.coord?.() }, cands, this.policy);
    let walked = false;
    if (d.kind === 'refuse') return { walked };
    for (const id of d.targets) {
      try {
        const chain =
          handover !== undefined && this.o.privateKey !== undefined
            ? [...handover, await signHandover(this.o.privateKey, this.o.libp2p.peerId.toString(), orderId, id)]
            : undefined;
        const reply = await sendTask(this.o.libp2p, id, envelope, d.hops, undefined, undefined, chain);
        if (reply.load !== undefined) this.o.peers.note(id, { load: reply.load });
        if (reply.status === 'accepted') return { accepted: reply, walked };
        if (reply.status === 'full') walked = true;
      } catch (err) {
        this.o.peers.markDown(id);
        this.o.log?.debug({ peer: id, err: String(err) }, 'forward failed');
      }
    }
    return { walked };
  }

  private remember(id: string): void {
    this.seen.set(id, Date.now());
    if (this.seen.size > 100_000) {
      const first = this.seen.keys().next();
      if (first.done !== true) this.seen.delete(first.value);
    }
  }

  /** Forgets an order id (after migrating it away, a re-delivery must be accepted). */
  forget(id: string): void {
    this.seen.delete(id);
  }
}
