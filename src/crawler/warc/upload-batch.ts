// A batch of archive entries as a volunteer uploads it to the manager
// (`--archive full`): a JSON list of the entries' fields and the bytes' lengths,
// with the digests of the records the volunteer built — WARC-Block-Digest of the
// response (or revisit) record and WARC-Payload-Digest of its payload — and
// one buffer of the bytes (request heads, response header lines, payloads),
// which the transport compresses. The manager rebuilds the records from the
// bytes with the same record module, so every WARC field it writes is its own
// (sanitised here, never copied from the volunteer), and checks the digests
// the volunteer claimed against what it rebuilt: a mismatch is a corrupt or
// dishonest upload, refused whole. Pure: no I/O.
import { z } from 'zod';
import { TASK_LIMITS } from '../task.js';
import { sha1Digest } from './digest.js';
import { responseHead, type Exchange } from './exchange.js';
import { REVISIT_PROFILES, type ArchiveEntry, type RevisitProfile } from './record.js';

/** Bounds on what one uploaded batch may hold. */
export const UPLOAD_BATCH_LIMITS = {
  /** Entries in one batch. */
  entries: 4096,
  /** The uncompressed bytes of one batch (the volunteer sends at about 1 MiB). */
  rawBytes: 16 * 1024 * 1024,
  /** One payload (the crawler reads at most 2 MiB of a body by default). */
  bodyBytes: 8 * 1024 * 1024,
  /** One request head. */
  requestBytes: 64 * 1024,
  /** One response's header lines, names and values together. */
  headerBytes: 256 * 1024,
  /** Header lines of one response. */
  headerLines: 1024,
} as const;

const digestSchema = z.string().regex(/^sha1:[A-Z2-7]{32}$/, 'not a "sha1:<base32>" digest');
const length = (max: number) => z.number().int().min(0).max(max);

const exchangeSchema = z.object({
  url: z.string().min(1).max(TASK_LIMITS.urlLength),
  date: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  status: z.number().int().min(100).max(999),
  statusText: z.string().max(512),
  truncated: z.boolean(),
  requestLength: length(UPLOAD_BATCH_LIMITS.requestBytes),
  headerLengths: z
    .array(length(UPLOAD_BATCH_LIMITS.headerBytes))
    .max(2 * UPLOAD_BATCH_LIMITS.headerLines)
    .refine((a) => a.length % 2 === 0, 'header names and values do not pair up'),
  bodyLength: length(UPLOAD_BATCH_LIMITS.bodyBytes),
  payloadDigest: digestSchema.optional(),
  blockDigest: digestSchema,
});

const refersToSchema = z.object({
  uri: z.string().min(1).max(TASK_LIMITS.urlLength),
  date: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
  payloadDigest: digestSchema.optional(),
});

const entrySchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('response'), exchange: exchangeSchema }),
  z.object({
    kind: z.literal('revisit'),
    exchange: exchangeSchema,
    profile: z.enum(Object.keys(REVISIT_PROFILES) as [RevisitProfile, ...RevisitProfile[]]),
    refersTo: refersToSchema,
  }),
]);

export const uploadBatchSchema = z.array(entrySchema).min(1).max(UPLOAD_BATCH_LIMITS.entries);
export type UploadedEntry = z.infer<typeof entrySchema>;

/** Why a batch was refused: malformed (bounds, lengths, URLs) or a digest that does not match its bytes. */
export class UploadBatchError extends Error {
  override name = 'UploadBatchError';
  constructor(
    readonly kind: 'malformed' | 'digest-mismatch',
    message: string,
  ) {
    super(message);
  }
}

function blockDigestOf(ex: Exchange, revisit: boolean): string {
  const head = responseHead(ex.status, ex.statusText, ex.headers);
  return sha1Digest(revisit ? [head] : [head, ex.body]);
}

/** The bytes an entry takes in the batch buffer. */
function entrySize(ex: Exchange): number {
  let n = ex.request.byteLength + ex.body.byteLength;
  for (const h of ex.headers) n += h.byteLength;
  return n;
}

/** A batch to upload: the entries' fields and digests, and their bytes in one buffer. */
export function encodeUploadBatch(entries: readonly ArchiveEntry[]): { entries: UploadedEntry[]; raw: Buffer } {
  let total = 0;
  for (const e of entries) if (e.kind !== 'conversion') total += entrySize(e.exchange);
  const raw = Buffer.allocUnsafe(total);
  let at = 0;
  const out: UploadedEntry[] = [];
  const put = (b: Uint8Array) => {
    raw.set(b, at);
    at += b.byteLength;
  };
  for (const e of entries) {
    if (e.kind === 'conversion') continue;
    const ex = e.exchange;
    const revisit = e.kind === 'revisit';
    put(ex.request);
    for (const h of ex.headers) put(h);
    // A revisit holds the response head only.
    if (!revisit) put(ex.body);
    const payloadDigest = revisit ? (e.profile === 'identical-payload-digest' ? ex.payloadDigest : undefined) : (ex.payloadDigest ?? sha1Digest([ex.body]));
    const exchange = {
      url: ex.url,
      date: ex.date,
      status: ex.status,
      statusText: ex.statusText,
      truncated: ex.truncated,
      requestLength: ex.request.byteLength,
      headerLengths: ex.headers.map((h) => h.byteLength),
      bodyLength: revisit ? 0 : ex.body.byteLength,
      ...(payloadDigest !== undefined ? { payloadDigest } : {}),
      blockDigest: blockDigestOf(ex, revisit),
    };
    out.push(e.kind === 'revisit' ? { kind: 'revisit', exchange, profile: e.profile, refersTo: e.refersTo } : { kind: 'response', exchange });
  }
  return { entries: out, raw: raw.subarray(0, at) };
}

export interface DecodeOptions {
  /** Every URL (and Refers-To URI) must be on this origin: the task's channel. */
  origin: string;
  /** Dates outside [notBefore, notAfter] are refused (the task's life, with slack). */
  notBefore: number;
  notAfter: number;
}

function sameOrigin(s: string, origin: string): boolean {
  try {
    const u = new URL(s);
    return u.origin === origin && u.username === '' && u.password === '';
  } catch {
    return false;
  }
}

/**
 * The archive entries of an uploaded batch, their digests checked: every
 * response's payload digest is recomputed from its payload, and every
 * record's block digest from the head and payload rebuilt here. Throws
 * UploadBatchError. The returned exchanges are views of `raw`.
 */
export function decodeUploadBatch(json: unknown, raw: Uint8Array, o: DecodeOptions): ArchiveEntry[] {
  const parsed = uploadBatchSchema.safeParse(json);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    throw new UploadBatchError('malformed', `malformed archive batch: ${i?.path.join('.') ?? ''} ${i?.message ?? ''}`.trim());
  }
  let at = 0;
  const take = (n: number): Uint8Array => {
    if (at + n > raw.byteLength) throw new UploadBatchError('malformed', 'archive batch is shorter than its entries say');
    const v = raw.subarray(at, at + n);
    at += n;
    return v;
  };
  const out: ArchiveEntry[] = [];
  for (const [i, e] of parsed.data.entries()) {
    const m = e.exchange;
    const where = `entry ${i} (${m.url.slice(0, 200)})`;
    if (!sameOrigin(m.url, o.origin)) throw new UploadBatchError('malformed', `${where} is not on ${o.origin}`);
    if (m.date < o.notBefore || m.date > o.notAfter) throw new UploadBatchError('malformed', `${where} is dated outside the task`);
    let headerBytes = 0;
    for (const n of m.headerLengths) headerBytes += n;
    if (headerBytes > UPLOAD_BATCH_LIMITS.headerBytes) throw new UploadBatchError('malformed', `${where} has more than ${UPLOAD_BATCH_LIMITS.headerBytes} bytes of header lines`);
    const request = take(m.requestLength);
    const headers = m.headerLengths.map((n) => take(n));
    const body = take(m.bodyLength);
    const ex: Exchange = { url: m.url, date: m.date, request, status: m.status, statusText: m.statusText, headers, body, truncated: m.truncated };
    if (e.kind === 'revisit') {
      if (m.bodyLength !== 0) throw new UploadBatchError('malformed', `${where}: a revisit holds no payload`);
      if (!sameOrigin(e.refersTo.uri, o.origin)) throw new UploadBatchError('malformed', `${where} refers to a URI not on ${o.origin}`);
      if (e.profile === 'identical-payload-digest' && m.payloadDigest === undefined) throw new UploadBatchError('malformed', `${where}: an identical-payload-digest revisit needs its payload digest`);
    } else {
      if (m.payloadDigest === undefined) throw new UploadBatchError('malformed', `${where}: a response needs its payload digest`);
      if (sha1Digest([body]) !== m.payloadDigest) throw new UploadBatchError('digest-mismatch', `${where}: payload digest does not match the payload`);
    }
    if (blockDigestOf(ex, e.kind === 'revisit') !== m.blockDigest) throw new UploadBatchError('digest-mismatch', `${where}: block digest does not match the record`);
    if (m.payloadDigest !== undefined) ex.payloadDigest = m.payloadDigest;
    ex.blockDigest = m.blockDigest;
    out.push(e.kind === 'revisit' ? { kind: 'revisit', exchange: ex, profile: e.profile, refersTo: e.refersTo } : { kind: 'response', exchange: ex });
  }
  if (at !== raw.byteLength) throw new UploadBatchError('malformed', 'archive batch holds more bytes than its entries say');
  return out;
}
