// WARC records (WARC 1.1, ISO 28500:2017) built from plain data: a crawl's
// captured exchange (request + response, or request + revisit), a page's
// extracted text (conversion), a file's warcinfo. A record is its named
// fields, its block and what its CDXJ line says; `serialise` frames it (with
// the WARC-Warcinfo-ID of the file it goes into) and `gzipMember` compresses
// it as its own gzip member, as .warc.gz requires. Pure and synchronous: the
// crawler's and the manager's WARC worker thread call it, and so can anything
// that must check or rebuild a record.
import { gzipSync } from 'node:zlib';
import { cdxMime, type CdxEntry } from './cdxj.js';
import { sha1Digest } from './digest.js';
import { headerValue, packedSize, packExchange, responseHead, unpackExchange, type Exchange, type PackedExchange } from './exchange.js';
import { field, fieldValue, recordId, warcDate, warcFieldsBlock, type WarcField } from './fields.js';

export type WarcType = 'warcinfo' | 'request' | 'response' | 'revisit' | 'conversion';

export interface WarcRecord {
  type: WarcType;
  /** WARC-Record-ID, "<urn:uuid:…>". */
  id: string;
  /** The named fields after WARC-Type and WARC-Record-ID; values already sanitised.
   * WARC-Warcinfo-ID, Content-Type and Content-Length are added by `serialise`. */
  fields: WarcField[];
  /** The block's media type (Content-Type). */
  contentType: string;
  /** The block, in parts (written one after the other). */
  block: Uint8Array[];
  /** What the record's CDXJ line says; null for records a replay index skips (request, warcinfo). */
  index: CdxEntry | null;
}

export const REVISIT_PROFILES = {
  'server-not-modified': 'http://netpreserve.org/warc/1.1/revisit/server-not-modified',
  'identical-payload-digest': 'http://netpreserve.org/warc/1.1/revisit/identical-payload-digest',
} as const;
export type RevisitProfile = keyof typeof REVISIT_PROFILES;

/** The earlier capture a revisit stands for. */
export interface RefersTo {
  /** WARC-Refers-To-Target-URI. */
  uri: string;
  /** WARC-Refers-To-Date (epoch ms), when known. */
  date?: number;
  /** The payload digest of the earlier capture, when known (server-not-modified);
   * identical-payload-digest revisits carry their own, which is the same. */
  payloadDigest?: string;
}

const HTTP_RESPONSE = 'application/http; msgtype=response';
const HTTP_REQUEST = 'application/http; msgtype=request';

function blockLength(block: readonly Uint8Array[]): number {
  let n = 0;
  for (const b of block) n += b.byteLength;
  return n;
}

/** The request record, paired with its response or revisit by WARC-Concurrent-To. */
export function requestRecord(ex: Exchange, concurrentTo: string): WarcRecord {
  const block = [ex.request];
  return {
    type: 'request',
    id: recordId(),
    fields: [field('WARC-Date', warcDate(ex.date)), field('WARC-Target-URI', ex.url), field('WARC-Concurrent-To', concurrentTo), field('WARC-Block-Digest', sha1Digest(block))],
    contentType: HTTP_REQUEST,
    block,
    index: null,
  };
}

/** A response record: the response head and the payload as received. */
export function responseRecord(ex: Exchange): WarcRecord {
  const head = responseHead(ex.status, ex.statusText, ex.headers);
  const block = [head, ex.body];
  const payloadDigest = ex.payloadDigest ?? sha1Digest([ex.body]);
  const fields: WarcField[] = [
    field('WARC-Date', warcDate(ex.date)),
    field('WARC-Target-URI', ex.url),
    field('WARC-Block-Digest', ex.blockDigest ?? sha1Digest(block)),
    field('WARC-Payload-Digest', payloadDigest),
  ];
  if (ex.truncated) fields.push(field('WARC-Truncated', 'length'));
  return { type: 'response', id: recordId(), fields, contentType: HTTP_RESPONSE, block, index: { url: ex.url, date: ex.date, mime: cdxMime(headerValue(ex.headers, 'content-type')), status: ex.status, digest: payloadDigest } };
}

/**
 * A revisit record: the response head only (WARC 1.1 §6.7), standing for the
 * earlier capture it refers to. server-not-modified for a 304 to a
 * conditional request; identical-payload-digest for a response whose payload
 * digest equals the earlier capture's.
 */
export function revisitRecord(ex: Exchange, profile: RevisitProfile, refersTo: RefersTo): WarcRecord {
  const head = responseHead(ex.status, ex.statusText, ex.headers);
  const block = [head];
  const payloadDigest = profile === 'identical-payload-digest' ? (ex.payloadDigest ?? sha1Digest([ex.body])) : refersTo.payloadDigest;
  const fields: WarcField[] = [
    field('WARC-Date', warcDate(ex.date)),
    field('WARC-Target-URI', ex.url),
    field('WARC-Profile', REVISIT_PROFILES[profile]),
    field('WARC-Refers-To-Target-URI', refersTo.uri),
  ];
  if (refersTo.date !== undefined) fields.push(field('WARC-Refers-To-Date', warcDate(refersTo.date)));
  fields.push(field('WARC-Block-Digest', ex.blockDigest ?? sha1Digest(block)));
  if (payloadDigest !== undefined) fields.push(field('WARC-Payload-Digest', payloadDigest));
  return { type: 'revisit', id: recordId(), fields, contentType: HTTP_RESPONSE, block, index: { url: ex.url, date: ex.date, mime: 'warc/revisit', status: ex.status, ...(payloadDigest !== undefined ? { digest: payloadDigest } : {}) } };
}

/** The response (or revisit) and its request, in the order archival crawlers write them. */
export function exchangeRecords(ex: Exchange, revisit?: { profile: RevisitProfile; refersTo: RefersTo }): [WarcRecord, WarcRecord] {
  const main = revisit ? revisitRecord(ex, revisit.profile, revisit.refersTo) : responseRecord(ex);
  return [main, requestRecord(ex, main.id)];
}

/** What a crawl or an export hands the WARC writer; each becomes one or two records. */
export type ArchiveEntry<X = Exchange> =
  | { kind: 'response'; exchange: X }
  | { kind: 'revisit'; exchange: X; profile: RevisitProfile; refersTo: RefersTo }
  | { kind: 'conversion'; page: ConversionPage };

export function entryRecords(e: ArchiveEntry): WarcRecord[] {
  if (e.kind === 'conversion') return [conversionRecord(e.page)];
  return exchangeRecords(e.exchange, e.kind === 'revisit' ? { profile: e.profile, refersTo: e.refersTo } : undefined);
}

/** Entries as posted to the WARC worker: their exchanges' bytes in one transferable buffer. */
export type PackedEntry = ArchiveEntry<PackedExchange>;
export interface PackedBatch {
  entries: PackedEntry[];
  bytes: Uint8Array;
}

export function packEntries(entries: readonly ArchiveEntry[]): PackedBatch {
  let total = 0;
  for (const e of entries) if (e.kind !== 'conversion') total += packedSize(e.exchange);
  // Not zero-filled, and its own ArrayBuffer (not the shared pool), so it can be transferred.
  const bytes = new Uint8Array(Buffer.allocUnsafeSlow(total).buffer, 0, total);
  let at = 0;
  const packed = entries.map((e): PackedEntry => {
    if (e.kind === 'conversion') return e;
    const p = packExchange(e.exchange, bytes, at);
    at += packedSize(e.exchange);
    return { ...e, exchange: p };
  });
  return { entries: packed, bytes };
}

export function unpackEntries(b: PackedBatch): ArchiveEntry[] {
  return b.entries.map((e) => (e.kind === 'conversion' ? e : { ...e, exchange: unpackExchange(e.exchange, b.bytes) }));
}

/** Roughly the bytes an entry holds (for backlog bounds). */
export function entryBytes(e: ArchiveEntry): number {
  return 256 + (e.kind === 'conversion' ? e.page.text.length : packedSize(e.exchange));
}

/** A page's extracted text (Common Crawl's WET form), its crawl metadata in
 * Volcrawl-* extension fields (WARC 1.1 §5: other named fields may be used). */
export interface ConversionPage {
  url: string;
  fetchedAt: number;
  text: string;
  /** Metadata: `lastModified` becomes Volcrawl-Last-Modified. Values go through the field sanitiser. */
  meta: Record<string, unknown>;
  /** WARC-Refers-To: the record id of the response the text came from, when it is archived. */
  refersTo?: string;
}

/** `lastModified` → `Volcrawl-Last-Modified`; metadata keys are a small fixed set, so the names are derived once. */
const fieldNames = new Map<string, string>();
function extensionName(key: string): string {
  let name = fieldNames.get(key);
  if (name === undefined) {
    name = `Volcrawl-${key.replace(/[^A-Za-z0-9]/g, '').replace(/[A-Z]/g, (c) => '-' + c).replace(/^./, (c) => c.toUpperCase())}`;
    if (fieldNames.size < 256) fieldNames.set(key, name);
  }
  return name;
}

export function conversionRecord(p: ConversionPage): WarcRecord {
  const body = Buffer.from(p.text, 'utf8');
  // For a block that is not an HTTP message the payload is the block: one digest serves both.
  const digest = sha1Digest([body]);
  const fields: WarcField[] = [field('WARC-Date', warcDate(p.fetchedAt)), field('WARC-Target-URI', p.url)];
  if (p.refersTo !== undefined) fields.push(field('WARC-Refers-To', p.refersTo));
  fields.push(field('WARC-Block-Digest', digest), field('WARC-Payload-Digest', digest));
  for (const k in p.meta) {
    const v = p.meta[k];
    if (v !== undefined && v !== null) fields.push([extensionName(k), fieldValue(String(v))]);
  }
  return { type: 'conversion', id: recordId(), fields, contentType: 'text/plain; charset=utf-8', block: [body], index: { url: p.url, date: p.fetchedAt, mime: 'text/plain', digest } };
}

/** A file's first record: its name (never a local path) and what wrote it. */
export function warcinfoRecord(filename: string, date: number, info: Record<string, string | number | undefined>): WarcRecord {
  const block = [warcFieldsBlock(info)];
  return {
    type: 'warcinfo',
    id: recordId(),
    fields: [field('WARC-Date', warcDate(date)), field('WARC-Filename', filename), field('WARC-Block-Digest', sha1Digest(block))],
    contentType: 'application/warc-fields',
    block,
    index: null,
  };
}

const TRAILER = Buffer.from('\r\n\r\n', 'latin1');

/** The record as bytes: version line, named fields, WARC-Warcinfo-ID (when given), Content-Type, Content-Length, the block, CRLF CRLF. */
export function serialise(rec: WarcRecord, warcinfoId?: string): Buffer {
  let head = `WARC/1.1\r\nWARC-Type: ${rec.type}\r\nWARC-Record-ID: ${fieldValue(rec.id)}\r\n`;
  for (const [name, value] of rec.fields) head += `${name}: ${value}\r\n`;
  if (warcinfoId !== undefined) head += `WARC-Warcinfo-ID: ${fieldValue(warcinfoId)}\r\n`;
  head += `Content-Type: ${fieldValue(rec.contentType)}\r\nContent-Length: ${blockLength(rec.block)}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'utf8'), ...rec.block, TRAILER]);
}

/** One record as its own gzip member. Level 1: most of the size gain for a fraction of the time. */
export function gzipMember(raw: Uint8Array, level = 1): Buffer {
  return gzipSync(raw, { level });
}
