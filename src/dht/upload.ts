// The upload protocol: a crawler sends each part of a task's result to the
// storage endpoint the order names (a libp2p peer and a protocol name, by
// default /volcrawl/upload/1.0.0). One message per stream:
//
//   request  { orderId, crawler, host, hostRttMs, crawlerCoord?, handover?, result }   ≤ 16 MiB
//   reply    { ok: true } | { ok: false, reason }                          ≤ 4 KiB
//
// The result is only "done" once the storage node replied ok to its final part;
// a crawler that dies before that never gets a task acknowledged. `hostRttMs`
// is the RTT the crawler measured to the host (the manager places hosts from
// these reports and crawler coordinates). `handover` is the signed chain that
// passed the task to this crawler when it did not get it from the manager's
// routing (migration; see signing.ts): the storage node checks it against the
// holder it has on record before accepting the upload.
import { z } from 'zod';
import type { Logger } from 'pino';
import type { Libp2p, Stream, Connection } from '@libp2p/interface';
import { peerIdFromString } from '@libp2p/peer-id';
import { multiaddr } from '@multiformats/multiaddr';
import { coordSchema, handoverChainSchema, type Handover, type StorageEndpoint, type WireCoord } from './signing.js';
import { jsonChannel } from './wire.js';
import { PeerRateLimiter } from './rate-limit.js';
import { sleep } from './sleep.js';

export const UPLOAD_PROTOCOL = '/volcrawl/upload/1.0.0';
export const UPLOAD_MAX_BYTES = 16 * 1024 * 1024;

export const uploadSchema = z.object({
  orderId: z.string().min(1).max(128),
  crawler: z.string().min(1).max(128),
  host: z.string().min(1).max(253),
  hostRttMs: z.number().finite().nonnegative().max(600_000).nullable(),
  crawlerCoord: coordSchema.optional(),
  handover: handoverChainSchema.optional(),
  result: z.looseObject({
    taskId: z.string().min(1).max(128),
    part: z.number().int().min(0).max(1_000_000),
    final: z.boolean(),
    status: z.string().max(64),
  }),
});
export type UploadMessage = z.infer<typeof uploadSchema>;

const ackSchema = z.object({ ok: z.boolean(), reason: z.string().max(512).optional() });

export interface UploadOptions {
  attempts?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Sends one upload and waits for the storage node's acknowledgement. Retries
 * transport failures; throws if the storage node refuses or stays unreachable. */
export async function uploadResult(
  libp2p: Libp2p,
  storage: StorageEndpoint,
  msg: { orderId: string; host: string; hostRttMs: number | null; crawlerCoord?: WireCoord; handover?: Handover[]; result: unknown },
  opts: UploadOptions = {},
): Promise<void> {
  const peer = peerIdFromString(storage.peer);
  if (storage.addrs !== undefined && storage.addrs.length > 0) {
    const addrs = storage.addrs.flatMap((a) => {
      try {
        return [multiaddr(a)];
      } catch {
        return [];
      }
    });
    await libp2p.peerStore.merge(peer, { multiaddrs: addrs }).catch(() => undefined);
  }
  const body = { ...msg, crawler: libp2p.peerId.toString() };
  const attempts = opts.attempts ?? 4;
  let lastErr: unknown;
  for (let i = 0; i < attempts; i++) {
    if (opts.signal?.aborted === true) throw new Error('upload aborted');
    const timeoutMs = opts.timeoutMs ?? 60_000;
    try {
      const stream = await libp2p.dialProtocol(peer, storage.protocol, { signal: AbortSignal.timeout(timeoutMs) });
      const ch = jsonChannel(stream, UPLOAD_MAX_BYTES, timeoutMs);
      try {
        await ch.write(body);
        const ack = ackSchema.parse(await ch.read());
        await ch.close();
        if (!ack.ok) throw new UploadRefusedError(ack.reason ?? 'refused');
        return;
      } catch (err) {
        ch.abort('upload failed');
        throw err;
      }
    } catch (err) {
      if (err instanceof UploadRefusedError) throw err;
      lastErr = err;
      await sleep(250 * 2 ** i, opts.signal).catch(() => undefined);
    }
  }
  throw new Error(`upload to ${storage.peer} failed: ${String(lastErr)}`);
}

export class UploadRefusedError extends Error {
  override name = 'UploadRefusedError';
}

export interface UploadReceiverOptions {
  libp2p: Libp2p;
  protocol?: string;
  /** Called for every valid upload; throw to refuse it. */
  onUpload: (msg: UploadMessage, from: string) => void | Promise<void>;
  log?: Logger;
}

/** A minimal storage endpoint (the manager's storage module builds on it). */
export class UploadReceiver {
  private readonly limiter = new PeerRateLimiter({ perSecond: 100, burst: 200 });
  constructor(private readonly o: UploadReceiverOptions) {}

  async start(): Promise<void> {
    await this.o.libp2p.handle(this.o.protocol ?? UPLOAD_PROTOCOL, (s, c) => this.onStream(s, c), { maxInboundStreams: 64 });
  }

  async stop(): Promise<void> {
    await this.o.libp2p.unhandle(this.o.protocol ?? UPLOAD_PROTOCOL).catch(() => undefined);
  }

  private async onStream(stream: Stream, conn: Connection): Promise<void> {
    const from = conn.remotePeer.toString();
    const ch = jsonChannel(stream, UPLOAD_MAX_BYTES, 60_000);
    try {
      if (!this.limiter.take(from)) {
        await ch.write({ ok: false, reason: 'rate limited' });
        await ch.close();
        return;
      }
      const parsed = uploadSchema.safeParse(await ch.read());
      if (!parsed.success) {
        await ch.write({ ok: false, reason: 'malformed upload' });
        await ch.close();
        return;
      }
      if (parsed.data.crawler !== from) {
        await ch.write({ ok: false, reason: 'crawler field does not match the sender' });
        await ch.close();
        return;
      }
      try {
        await this.o.onUpload(parsed.data, from);
      } catch (err) {
        await ch.write({ ok: false, reason: String((err as Error).message ?? err).slice(0, 500) });
        await ch.close();
        return;
      }
      await ch.write({ ok: true });
      await ch.close();
    } catch (err) {
      this.o.log?.debug({ peer: from, err: String(err) }, 'upload stream failed');
      ch.abort('upload stream failed');
    }
  }
}
