// Only the manager may issue tasks. A task travels as a signed envelope: the
// manager serialises the order (task, target host, host coordinate, storage
// endpoint, validity window) to a JSON string and signs its UTF-8 bytes with its
// libp2p private key. Volunteers started with `--manager <peerId>` verify the
// signature with the public key inside that peer id (Ed25519 ids inline it), the
// validity window, and then the task itself with the crawler's schema. The
// signature covers the exact payload bytes, so no canonical JSON is needed, and
// forwarding/migration re-sends the envelope unchanged.
import { z } from 'zod';
import { peerIdFromString } from '@libp2p/peer-id';
import type { PeerId, PrivateKey } from '@libp2p/interface';

export const MAX_TASK_BYTES = 1_048_576; // a task's digest array is ≤ 400 kB (paper §2.1)

const coordSchema = z.object({
  vec: z.array(z.number().finite().min(-1e6).max(1e6)).min(1).max(16),
  height: z.number().finite().min(0).max(1e6),
  error: z.number().finite().min(0).max(1e3).optional(),
});
export type WireCoord = z.infer<typeof coordSchema>;
export { coordSchema };

const peerIdString = z.string().min(10).max(128).regex(/^[1-9A-HJ-NP-Za-km-z]+$/, 'base58btc peer id');

export const storageSchema = z.object({
  peer: peerIdString,
  protocol: z.string().min(1).max(128).regex(/^\/[\x21-\x7e]+$/),
  addrs: z.array(z.string().min(1).max(512)).max(16).optional(),
});
export type StorageEndpoint = z.infer<typeof storageSchema>;

export const orderSchema = z.object({
  v: z.literal(1),
  /** Unique id of this order (also the idempotency key). */
  id: z.string().min(1).max(128),
  issuer: peerIdString,
  issuedAt: z.number().int().nonnegative(),
  expiresAt: z.number().int().nonnegative(),
  /** Host name the task targets (used for hash routing and RTT reports). */
  host: z.string().min(1).max(253),
  /** The host's coordinate, when the manager has placed it. */
  hostCoord: coordSchema.optional(),
  storage: storageSchema,
  /** The crawler task, validated separately with src/crawler's schema. */
  task: z.unknown(),
});
export type TaskOrder = z.infer<typeof orderSchema>;

export const envelopeSchema = z.object({
  payload: z.string().min(2).max(MAX_TASK_BYTES),
  sig: z.string().min(1).max(1024).regex(/^[A-Za-z0-9+/=]+$/),
});
export type SignedEnvelope = z.infer<typeof envelopeSchema>;

export class TaskSignatureError extends Error {
  override name = 'TaskSignatureError';
}

const enc = new TextEncoder();

export async function signOrder(order: TaskOrder, key: PrivateKey): Promise<SignedEnvelope> {
  const payload = JSON.stringify(order);
  const sig = await key.sign(enc.encode(payload));
  return { payload, sig: Buffer.from(sig).toString('base64') };
}

export interface VerifiedOrder<T> {
  order: TaskOrder;
  task: T;
  envelope: SignedEnvelope;
}

export interface VerifyOptions<T> {
  /** The manager's peer id; anything signed by another key is rejected. */
  manager: PeerId | string;
  /** Validates the embedded task (src/crawler's parseTask); throws when invalid. */
  parseTask: (json: unknown) => T;
  now?: number;
  /** Tolerated clock skew, ms. */
  skewMs?: number;
}

/** Verifies an untrusted envelope. Throws TaskSignatureError (or the task
 * validator's error) when anything is wrong. */
export async function verifyEnvelope<T>(raw: unknown, opts: VerifyOptions<T>): Promise<VerifiedOrder<T>> {
  const env = envelopeSchema.safeParse(raw);
  if (!env.success) throw new TaskSignatureError(`malformed envelope: ${env.error.issues[0]?.message ?? 'invalid'}`);
  let json: unknown;
  try {
    json = JSON.parse(env.data.payload);
  } catch {
    throw new TaskSignatureError('payload is not JSON');
  }
  const parsed = orderSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new TaskSignatureError(`malformed order: ${issue?.path.join('.') ?? ''} ${issue?.message ?? ''}`.trim());
  }
  const order = parsed.data;
  const manager = typeof opts.manager === 'string' ? opts.manager : opts.manager.toString();
  if (order.issuer !== manager) throw new TaskSignatureError(`issued by ${order.issuer}, not the manager`);
  let ok: boolean;
  try {
    const pid = peerIdFromString(manager);
    if (pid.publicKey === undefined) throw new TaskSignatureError('manager peer id does not carry a public key');
    ok = await pid.publicKey.verify(enc.encode(env.data.payload), new Uint8Array(Buffer.from(env.data.sig, 'base64')));
  } catch (err) {
    if (err instanceof TaskSignatureError) throw err;
    ok = false;
  }
  if (!ok) throw new TaskSignatureError('bad signature');
  const now = opts.now ?? Date.now();
  const skew = opts.skewMs ?? 60_000;
  if (order.expiresAt < now) throw new TaskSignatureError('order expired');
  if (order.issuedAt > now + skew) throw new TaskSignatureError('order issued in the future');
  const task = opts.parseTask(order.task);
  return { order, task, envelope: env.data };
}

// Hand-over of a task between crawlers (graceful-shutdown migration, and
// forwarding of an order that was itself handed over). The crawler holding a
// task signs `{orderId, from: itself, to: the next crawler, at}` with its libp2p
// key; links accumulate into a chain that travels with the order to the new
// holder, which sends it with its uploads. The storage node walks the chain from
// the holder it has on record: every link must be signed by the peer it hands
// the task over from, and the last one must hand it to the uploader (whom the
// libp2p connection authenticates). Only a holder can therefore pass a task on.
export const MAX_HANDOVER_LINKS = 8;

export const handoverSchema = z.object({
  orderId: z.string().min(1).max(128),
  from: peerIdString,
  to: peerIdString,
  at: z.number().int().nonnegative(),
  sig: z.string().min(1).max(256).regex(/^[A-Za-z0-9+/=]+$/),
});
export type Handover = z.infer<typeof handoverSchema>;
export const handoverChainSchema = z.array(handoverSchema).min(1).max(MAX_HANDOVER_LINKS);

/** The signed bytes: a JSON array (deterministic) behind a domain tag, so a
 * hand-over signature can never be mistaken for anything else the key signs. */
function handoverBytes(h: Omit<Handover, 'sig'>): Uint8Array {
  return enc.encode(JSON.stringify(['volcrawl/handover/v1', h.orderId, h.from, h.to, h.at]));
}

/** Signs a hand-over of `orderId` from the key's own peer id (`from`) to `to`. */
export async function signHandover(key: PrivateKey, from: string, orderId: string, to: string, at = Date.now()): Promise<Handover> {
  const h = { orderId, from, to, at: Math.floor(at) };
  const sig = await key.sign(handoverBytes(h));
  return { ...h, sig: Buffer.from(sig).toString('base64') };
}

/** True when `h` carries a valid signature by its `from` peer. */
export async function verifyHandoverLink(h: Handover): Promise<boolean> {
  try {
    const pid = peerIdFromString(h.from);
    if (pid.publicKey === undefined) return false;
    return await pid.publicKey.verify(handoverBytes(h), new Uint8Array(Buffer.from(h.sig, 'base64')));
  } catch {
    return false;
  }
}

/** Checks that `chain` passes task `orderId` from `holder` (the holder on record)
 * to `uploader`: starting at the first link from `holder`, each link is signed by
 * its `from`, which is the previous link's `to`, and the last link is to
 * `uploader`. Links before that point (transfers the storage node already knows
 * of) are ignored. Returns a reason when the chain does not prove it. */
export async function checkHandoverChain(chain: readonly Handover[], orderId: string, holder: string, uploader: string): Promise<string | undefined> {
  const start = chain.findIndex((h) => h.from === holder);
  if (start < 0) return 'no hand-over from the holder';
  let current = holder;
  for (const h of chain.slice(start)) {
    if (h.orderId !== orderId) return 'hand-over is for another task';
    if (h.from !== current) return 'hand-over chain is broken';
    if (!(await verifyHandoverLink(h))) return 'bad hand-over signature';
    current = h.to;
  }
  return current === uploader ? undefined : 'hand-over is to another peer';
}
