// A WARC reader for the tests, written from the specifications (RFC 1952 for
// gzip members, WARC 1.1 for records, RFC 9112 for HTTP messages), sharing no
// code with src/crawler/warc: the tests judge the writer by what this reads.
import { createHash } from 'node:crypto';
import { inflateRawSync } from 'node:zlib';

export interface Member {
  offset: number;
  length: number;
  data: Buffer;
}

/** Splits a .warc.gz file into its gzip members by hand: header, deflate stream, CRC32 + ISIZE. */
export function gzipMembers(file: Buffer): Member[] {
  const out: Member[] = [];
  let pos = 0;
  while (pos < file.length) {
    if (file[pos] !== 0x1f || file[pos + 1] !== 0x8b || file[pos + 2] !== 8) throw new Error(`no gzip member at ${pos}`);
    const flags = file[pos + 3]!;
    let p = pos + 10;
    if (flags & 4) p += 2 + file.readUInt16LE(p); // FEXTRA
    if (flags & 8) p = file.indexOf(0, p) + 1; // FNAME
    if (flags & 16) p = file.indexOf(0, p) + 1; // FCOMMENT
    if (flags & 2) p += 2; // FHCRC
    const { buffer, engine } = inflateRawSync(file.subarray(p), { info: true }) as unknown as { buffer: Buffer; engine: { bytesWritten: number } };
    const end = p + engine.bytesWritten + 8;
    if (file.readUInt32LE(end - 4) !== (buffer.length >>> 0)) throw new Error(`member at ${pos}: ISIZE does not match`);
    out.push({ offset: pos, length: end - pos, data: buffer });
    pos = end;
  }
  return out;
}

export interface WarcRec {
  version: string;
  /** Header lines as they are, in order. */
  lines: string[];
  fields: [string, string][];
  block: Buffer;
  /** Bytes the record took in its (uncompressed) stream. */
  size: number;
}

export const field = (r: WarcRec, name: string): string | undefined => r.fields.find(([n]) => n.toLowerCase() === name.toLowerCase())?.[1];

/** Parses uncompressed WARC records: version line, fields up to the blank line, Content-Length bytes of block, CRLF CRLF. */
export function parseRecords(data: Buffer): WarcRec[] {
  const out: WarcRec[] = [];
  let pos = 0;
  while (pos < data.length) {
    const headEnd = data.indexOf('\r\n\r\n', pos, 'latin1');
    if (headEnd < 0) throw new Error(`unterminated record header at ${pos}`);
    const head = data.subarray(pos, headEnd).toString('utf8');
    const [version, ...lines] = head.split('\r\n');
    if (!/^WARC\/1\.[01]$/.test(version!)) throw new Error(`bad version line ${JSON.stringify(version)} at ${pos}`);
    const fields = lines.map((l): [string, string] => {
      const c = l.indexOf(':');
      if (c <= 0) throw new Error(`bad field line ${JSON.stringify(l)}`);
      return [l.slice(0, c), l.slice(c + 1).trim()];
    });
    const rec: WarcRec = { version: version!, lines, fields, block: Buffer.alloc(0), size: 0 };
    const len = Number(field(rec, 'Content-Length'));
    if (!Number.isInteger(len) || len < 0) throw new Error('bad Content-Length');
    const start = headEnd + 4;
    rec.block = data.subarray(start, start + len);
    if (data.toString('latin1', start + len, start + len + 4) !== '\r\n\r\n') throw new Error(`record at ${pos} not followed by CRLF CRLF`);
    rec.size = start + len + 4 - pos;
    out.push(rec);
    pos = start + len + 4;
  }
  return out;
}

/** Every record of a .warc.gz, checking that each gzip member holds exactly one record. */
export function readWarcGz(file: Buffer): (WarcRec & { offset: number; length: number })[] {
  return gzipMembers(file).map((m) => {
    const recs = parseRecords(m.data);
    if (recs.length !== 1) throw new Error(`member at ${m.offset} holds ${recs.length} records`);
    return { ...recs[0]!, offset: m.offset, length: m.length };
  });
}

export interface HttpMessage {
  startLine: string;
  /** Header lines as raw bytes, in order. */
  headerLines: Buffer[];
  body: Buffer;
}

/** Splits an application/http block into start line, header lines and body. */
export function parseHttp(block: Buffer): HttpMessage {
  const end = block.indexOf('\r\n\r\n', 0, 'latin1');
  if (end < 0) throw new Error('no end of HTTP head');
  const lines: Buffer[] = [];
  let p = 0;
  while (p < end) {
    const nl = block.indexOf('\r\n', p, 'latin1');
    lines.push(block.subarray(p, nl));
    p = nl + 2;
  }
  return { startLine: lines[0]!.toString('latin1'), headerLines: lines.slice(1), body: block.subarray(end + 4) };
}

/** The values of a header, as latin1 strings, in order. */
export function headerValues(m: HttpMessage, name: string): string[] {
  return m.headerLines
    .map((l) => l.toString('latin1'))
    .filter((l) => l.slice(0, l.indexOf(':')).toLowerCase() === name.toLowerCase())
    .map((l) => l.slice(l.indexOf(':') + 1).trim());
}

/** "sha1:" + base32 (RFC 4648), computed here independently of the writer. */
export function sha1Base32(buf: Uint8Array): string {
  const d = createHash('sha1').update(buf).digest();
  const A = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const b of d) bits += b.toString(2).padStart(8, '0');
  let s = '';
  for (let i = 0; i < bits.length; i += 5) s += A[parseInt(bits.slice(i, i + 5).padEnd(5, '0'), 2)];
  return 'sha1:' + s;
}

export interface CdxjLine {
  urlkey: string;
  timestamp: string;
  json: Record<string, string>;
  raw: string;
}

export function parseCdxj(text: string): CdxjLine[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((raw) => {
      const a = raw.indexOf(' ');
      const b = raw.indexOf(' ', a + 1);
      return { urlkey: raw.slice(0, a), timestamp: raw.slice(a + 1, b), json: JSON.parse(raw.slice(b + 1)) as Record<string, string>, raw };
    });
}

/** Checks what every reader relies on: block digests, WARC-Warcinfo-ID on every record but warcinfo, unique ids, no control characters in field lines. */
export function checkRecords(recs: WarcRec[]): void {
  const ids = new Set<string>();
  let warcinfo: string | undefined;
  for (const r of recs) {
    // eslint-disable-next-line no-control-regex -- looking for control characters
    for (const l of r.lines) if (/[\u0000-\u001f\u007f]/.test(l)) throw new Error(`control character in field line ${JSON.stringify(l)}`);
    const id = field(r, 'WARC-Record-ID')!;
    if (ids.has(id)) throw new Error(`duplicate record id ${id}`);
    ids.add(id);
    const type = field(r, 'WARC-Type');
    if (type === 'warcinfo') warcinfo = id;
    else if (field(r, 'WARC-Warcinfo-ID') !== warcinfo) throw new Error(`${type} record ${id} does not name its file's warcinfo`);
    const bd = field(r, 'WARC-Block-Digest');
    if (bd !== sha1Base32(r.block)) throw new Error(`block digest of ${id}: ${bd} ≠ ${sha1Base32(r.block)}`);
  }
}
