// /volcrawl/holepunch/1.0.0: two peers agree to punch, over the connection
// they already have (a relayed one; the handler runs on limited connections).
// Like DCUtR's CONNECT/SYNC, with the punch port's mapping instead of
// confirmed addresses:
//
//   coordinator → responder   { type: 'connect', mapping: {ip, port} | null, nat }
//   responder → coordinator   { type: 'connect', mapping, nat } | { type: 'refuse', reason: 'busy' }
//   coordinator → responder   { type: 'sync' }      (only when both can punch)
//
// Each message ≤ 256 bytes, the whole exchange under one deadline. Both sides
// decide from the two 'connect' messages alone (punchPlan), so both know why a
// punch is not tried. The coordinator measures the round trip of the connect
// exchange and starts connecting half a round trip after sending 'sync', when
// the responder, which starts on receiving it, should start too.
import { z } from 'zod';
import type { Stream } from '@libp2p/interface';
import { InvalidDataLengthError } from '@libp2p/utils';
import { jsonChannel, WireError, type JsonChannel } from '../wire.js';
import { endpointSchema, formatEndpoint, isDialableEndpoint, type Endpoint } from './endpoint.js';
import type { NatType } from './mapping.js';

export const HOLEPUNCH_PROTOCOL = '/volcrawl/holepunch/1.0.0';
export const HOLEPUNCH_MAX_BYTES = 256;

const natTypeSchema = z.enum(['unknown', 'cone', 'symmetric']);
const connectSchema = z.strictObject({ type: z.literal('connect'), mapping: endpointSchema.nullable(), nat: natTypeSchema });
const refuseSchema = z.strictObject({ type: z.literal('refuse'), reason: z.enum(['busy']) });
const replySchema = z.discriminatedUnion('type', [connectSchema, refuseSchema]);
const syncSchema = z.strictObject({ type: z.literal('sync') });

/** What one side offers: where its punch port is seen, and what kind of NAT it is behind. */
export interface PunchOffer {
  mapping: Endpoint | null;
  nat: NatType;
}

/** Why a punch did not give a direct connection (counted per reason by the service). */
export const PUNCH_FAILURE_REASONS = [
  'no-mapping', // we do not know our punch port's public mapping (no observer answered)
  'peer-no-mapping', // the peer does not know its own
  'symmetric-nat', // our NAT maps each destination to another port: the peer cannot aim at us
  'peer-symmetric-nat', // the peer's NAT does
  'bad-address', // the peer's mapping points into a private network
  'unwitnessed', // no observer of ours sees the peer connected from the mapping it offered: it may aim our SYNs elsewhere
  'bad-message', // a malformed, oversized or out-of-order coordination message
  'refused', // the peer declined (busy with another punch, or at its limit)
  'rate-limited', // we declined: too many punches at once, or one with this peer already running
  'coordination-failed', // the coordination stream could not be opened or ended early (relay gone, deadline)
  'timeout', // no TCP connection before the punch deadline (the NATs dropped the SYNs)
  'peer-id-mismatch', // a TCP connection was made, but someone else answered (Noise's identity check)
  'upgrade-failed', // a TCP connection was made, but Noise or the muxer failed
  'aborted', // the service stopped
] as const;
export type PunchFailureReason = (typeof PUNCH_FAILURE_REASONS)[number];

export class PunchError extends Error {
  override name = 'PunchError';
  constructor(
    readonly reason: PunchFailureReason,
    message: string,
  ) {
    super(message);
  }
}

export interface CoordinationOptions {
  timeoutMs: number;
  allowPrivateAddrs: boolean;
  /** Try even when a side reports a symmetric NAT (measurements only). */
  punchThroughSymmetric: boolean;
  /** Whether an observer of ours sees the peer at the target it offered (checked before any SYN); absent: not checked. */
  witness?: (target: Endpoint) => Promise<boolean>;
}

async function checkWitness(target: Endpoint, opts: CoordinationOptions): Promise<void> {
  if (opts.witness !== undefined && !(await opts.witness(target))) throw new PunchError('unwitnessed', `no observer sees the peer at ${formatEndpoint(target)}`);
}

/** Where to punch to, if both offers allow a punch; the same verdict on both sides (the reasons are each side's view). */
export function punchPlan(mine: PunchOffer, theirs: PunchOffer, opts: Pick<CoordinationOptions, 'allowPrivateAddrs' | 'punchThroughSymmetric'>): Endpoint {
  if (mine.mapping === null) throw new PunchError('no-mapping', 'our punch port has no known public mapping');
  if (theirs.mapping === null) throw new PunchError('peer-no-mapping', 'the peer knows no public mapping of its punch port');
  if (!opts.punchThroughSymmetric && mine.nat === 'symmetric') throw new PunchError('symmetric-nat', 'our NAT maps each destination to its own port');
  if (!opts.punchThroughSymmetric && theirs.nat === 'symmetric') throw new PunchError('peer-symmetric-nat', "the peer's NAT maps each destination to its own port");
  if (!isDialableEndpoint(theirs.mapping, opts.allowPrivateAddrs)) throw new PunchError('bad-address', `the peer's mapping ${formatEndpoint(theirs.mapping)} is not a public address`);
  return theirs.mapping;
}

export interface CoordinatedPunch {
  target: Endpoint;
  /** How long to wait before connecting (the coordinator: half the measured round trip; the responder: 0). */
  delayMs: number;
}

/** The coordinator's side, on a stream it opened. */
export async function coordinate(stream: Stream, mine: PunchOffer, opts: CoordinationOptions): Promise<CoordinatedPunch> {
  const ch = jsonChannel(stream, HOLEPUNCH_MAX_BYTES, opts.timeoutMs);
  return exchange(ch, async () => {
    const sent = performance.now();
    await ch.write({ type: 'connect', ...mine });
    const reply = parse(replySchema, await ch.read(), 'reply');
    const rtt = performance.now() - sent;
    if (reply.type === 'refuse') throw new PunchError('refused', `the peer refused: ${reply.reason}`);
    const target = punchPlan(mine, reply, opts);
    await checkWitness(target, opts);
    await ch.write({ type: 'sync' });
    return { target, delayMs: rtt / 2 };
  });
}

/** The responder's side, on a stream the coordinator opened; `mine` is read after the peer's offer arrived. */
export async function respond(stream: Stream, mine: () => PunchOffer, opts: CoordinationOptions): Promise<CoordinatedPunch> {
  const ch = jsonChannel(stream, HOLEPUNCH_MAX_BYTES, opts.timeoutMs);
  return exchange(ch, async () => {
    const theirs = parse(connectSchema, await ch.read(), 'connect');
    const offer = mine();
    await ch.write({ type: 'connect', ...offer });
    const target = punchPlan(offer, theirs, opts);
    await checkWitness(target, opts);
    parse(syncSchema, await ch.read(), 'sync');
    return { target, delayMs: 0 };
  });
}

/** Declines a coordination (reads the peer's offer first, so the refusal is its answer). */
export async function refuse(stream: Stream, timeoutMs: number): Promise<void> {
  const ch = jsonChannel(stream, HOLEPUNCH_MAX_BYTES, timeoutMs);
  await exchange(ch, async () => {
    parse(connectSchema, await ch.read(), 'connect');
    await ch.write({ type: 'refuse', reason: 'busy' });
  });
}

/** Runs one side of the exchange: closes the stream after it, aborts it on any failure, which it names. */
async function exchange<T>(ch: JsonChannel, run: () => Promise<T>): Promise<T> {
  let result: T;
  try {
    result = await run();
  } catch (err) {
    const failure = asPunchError(err);
    if (failure.reason === 'bad-message' || failure.reason === 'coordination-failed') ch.abort(failure.message);
    else await ch.close();
    throw failure;
  }
  await ch.close();
  return result;
}

function parse<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const r = schema.safeParse(value);
  if (!r.success) throw new PunchError('bad-message', `invalid ${what} message: ${r.error.issues[0]?.message ?? 'schema mismatch'}`);
  return r.data;
}

function asPunchError(err: unknown): PunchError {
  if (err instanceof PunchError) return err;
  if (err instanceof WireError || err instanceof InvalidDataLengthError) return new PunchError('bad-message', err.message);
  return new PunchError('coordination-failed', err instanceof Error ? `${err.name}: ${err.message}` : String(err));
}
