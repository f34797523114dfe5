// The archive upload protocol (`dht-manager serve --archive full`): a crawler
// sends the WARC entries of a task it holds to the storage node the order
// names, in batches, one batch per stream:
//
//   header  { orderId, crawler, batch, handover?, rawBytes, entries }   JSON, ≤ 4 MiB
//   bytes   gzip of the batch's bytes (src/crawler/warc/upload-batch.ts)  ≤ 16 MiB, inflating to exactly rawBytes ≤ 16 MiB
//   reply   { ok: true } | { ok: false, reason, retry? }                  ≤ 4 KiB
//
// The receiver reads the header first and takes one of a few slots before it
// reads and inflates the bytes, so however many crawlers upload at once the
// memory in use stays bounded; a crawler that finds every slot taken is told
// to retry. The entries are validated by the storage side (their origin,
// dates, lengths and digests), not here.
import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import { z } from 'zod';
import type { Logger } from 'pino';
import type { Libp2p, Stream, Connection } from '@libp2p/interface';
import { peerIdFromString } from '@libp2p/peer-id';
import { handoverChainSchema, type Handover, type StorageEndpoint } from './signing.js';
import { jsonChannel } from './wire.js';
import { PeerRateLimiter } from './rate-limit.js';
import { sleep } from './sleep.js';
import { UPLOAD_BATCH_LIMITS } from '../crawler/warc/upload-batch.js';

export const ARCHIVE_PROTOCOL = '/volcrawl/archive/1.0.0';
/** The largest frame: the compressed bytes (JSON headers are checked against HEADER_MAX_BYTES). */
const FRAME_MAX_BYTES = 16 * 1024 * 1024;
const HEADER_MAX_BYTES = 4 * 1024 * 1024;

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

export const archiveHeaderSchema = z.object({
  orderId: z.string().min(1).max(128),
  crawler: z.string().min(1).max(128),
  /** The batch's number within the task (0, 1, …): a retried batch is not written twice. */
  batch: z.number().int().min(0).max(1_000_000),
  handover: handoverChainSchema.optional(),
  rawBytes: z.number().int().min(0).max(UPLOAD_BATCH_LIMITS.rawBytes),
  /** Checked by the storage side (upload-batch.ts's decodeUploadBatch). */
  entries: z.array(z.unknown()).min(1).max(UPLOAD_BATCH_LIMITS.entries),
});
export type ArchiveHeader = z.infer<typeof archiveHeaderSchema>;

const replySchema = z.object({ ok: z.boolean(), reason: z.string().max(512).optional(), retry: z.boolean().optional() });

export class ArchiveRefusedError extends Error {
  override name = 'ArchiveRefusedError';
}

/** Thrown by the storage side's handler for a batch it cannot take now (the crawler retries). */
export class ArchiveBusyError extends Error {
  override name = 'ArchiveBusyError';
}

/** Sends one batch and waits for the storage node's acknowledgement. Retries
 * transport failures and "busy"; throws ArchiveRefusedError when refused. */
export async function uploadArchiveBatch(
  libp2p: Libp2p,
  storage: StorageEndpoint,
  msg: { orderId: string; batch: number; handover?: Handover[]; entries: unknown[]; raw: Uint8Array },
  opts: { attempts?: number; timeoutMs?: number } = {},
): Promise<void> {
  const peer = peerIdFromString(storage.peer);
  const compressed = await gzipAsync(msg.raw, { level: 1 });
  const header: ArchiveHeader = {
    orderId: msg.orderId,
    crawler: libp2p.peerId.toString(),
    batch: msg.batch,
    ...(msg.handover !== undefined ? { handover: msg.handover } : {}),
    rawBytes: msg.raw.byteLength,
    entries: msg.entries,
  };
  const attempts = opts.attempts ?? 6;
  const timeoutMs = opts.timeoutMs ?? 120_000;
  let lastErr: unknown;
  for (let i = 0; i < attempts; i++) {
    try {
      const stream = await libp2p.dialProtocol(peer, ARCHIVE_PROTOCOL, { signal: AbortSignal.timeout(timeoutMs) });
      const ch = jsonChannel(stream, FRAME_MAX_BYTES, timeoutMs);
      try {
        await ch.write(header);
        await ch.writeBytes(compressed);
        const reply = replySchema.parse(await ch.read());
        await ch.close();
        if (reply.ok) return;
        if (reply.retry !== true) throw new ArchiveRefusedError(reply.reason ?? 'refused');
        lastErr = new Error(reply.reason ?? 'busy');
      } catch (err) {
        ch.abort('archive upload failed');
        throw err;
      }
    } catch (err) {
      if (err instanceof ArchiveRefusedError) throw err;
      lastErr = err;
    }
    await sleep(500 * 2 ** i).catch(() => undefined);
  }
  throw new Error(`archive upload to ${storage.peer} failed: ${String(lastErr)}`);
}

export interface ArchiveReceiverOptions {
  libp2p: Libp2p;
  /** Called for every well-formed batch with its inflated bytes; throw to refuse it
   * (ArchiveBusyError: the crawler retries later). */
  onBatch: (header: ArchiveHeader, raw: Buffer, from: string) => Promise<void>;
  /** Batches read and handled at once (default 2): bounds the memory in use. */
  slots?: number;
  log?: Logger;
}

/** The storage node's side: size-bounded, rate-limited, sender checked. */
export class ArchiveReceiver {
  private readonly limiter = new PeerRateLimiter({ perSecond: 20, burst: 40 });
  private busy = 0;
  constructor(private readonly o: ArchiveReceiverOptions) {}

  async start(): Promise<void> {
    await this.o.libp2p.handle(ARCHIVE_PROTOCOL, (s, c) => this.onStream(s, c), { maxInboundStreams: 16 });
  }

  async stop(): Promise<void> {
    await this.o.libp2p.unhandle(ARCHIVE_PROTOCOL).catch(() => undefined);
  }

  private async onStream(stream: Stream, conn: Connection): Promise<void> {
    const from = conn.remotePeer.toString();
    const ch = jsonChannel(stream, FRAME_MAX_BYTES, 120_000);
    const reply = async (r: z.infer<typeof replySchema>) => {
      await ch.write(r);
      await ch.close();
    };
    let slot = false;
    try {
      if (!this.limiter.take(from)) return await reply({ ok: false, reason: 'rate limited', retry: true });
      const headerBytes = await ch.readBytes();
      if (headerBytes.byteLength > HEADER_MAX_BYTES) return await reply({ ok: false, reason: `header over ${HEADER_MAX_BYTES} bytes` });
      let json: unknown;
      try {
        json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(headerBytes));
      } catch {
        return await reply({ ok: false, reason: 'header is not JSON' });
      }
      const parsed = archiveHeaderSchema.safeParse(json);
      if (!parsed.success) return await reply({ ok: false, reason: 'malformed archive header' });
      const header = parsed.data;
      if (header.crawler !== from) return await reply({ ok: false, reason: 'crawler field does not match the sender' });
      if (this.busy >= (this.o.slots ?? 2)) return await reply({ ok: false, reason: 'busy', retry: true });
      this.busy++;
      slot = true;
      const compressed = await ch.readBytes();
      let raw: Buffer;
      try {
        raw = await gunzipAsync(compressed, { maxOutputLength: Math.max(1, header.rawBytes) });
      } catch {
        return await reply({ ok: false, reason: `batch bytes do not inflate to ${header.rawBytes} bytes` });
      }
      if (raw.byteLength !== header.rawBytes) return await reply({ ok: false, reason: `batch bytes inflate to ${raw.byteLength}, not ${header.rawBytes}` });
      try {
        await this.o.onBatch(header, raw, from);
      } catch (err) {
        return await reply({ ok: false, reason: String((err as Error).message ?? err).slice(0, 500), ...(err instanceof ArchiveBusyError ? { retry: true } : {}) });
      }
      await reply({ ok: true });
    } catch (err) {
      this.o.log?.debug({ peer: from, err: String(err) }, 'archive stream failed');
      ch.abort('archive stream failed');
    } finally {
      if (slot) this.busy--;
    }
  }
}
