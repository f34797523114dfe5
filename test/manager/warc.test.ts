// The manager's text export (WET-like conversion records), read back with the
// tests' own WARC reader (test/crawler/warc-reader.ts) and with warcio's
// parser and CDX indexer as a second, independent reader.
import { describe, expect, it } from 'vitest';
import { createReadStream, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { CDXIndexer, WARCParser } from 'warcio';
import { WarcExporter } from '../../src/manager/warc.js';
import { checkRecords, field, parseCdxj, parseRecords, readWarcGz, sha1Base32 } from '../crawler/warc-reader.js';

function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'volcrawl-warc-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

const warcFiles = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.warc.gz')).sort();

describe('WARC text export', () => {
  it('writes conversion records with metadata fields, file names only in warcinfo, and a CDXJ index whose lines load their records', async () => {
    const t = tempDir();
    try {
      const dir = join(t.dir, 'warc');
      const w = new WarcExporter(dir, 1 << 30, Date.UTC(2026, 0, 1));
      await w.append([
        { url: 'http://a.test/', fetchedAt: Date.UTC(2026, 0, 1), text: 'héllo wörld', meta: { digest: 1, channel: 'c1', lastModified: 'Thu, 01 Jan 2026 00:00:00 GMT' } },
        { url: 'http://a.test/b?y=2&x=1', fetchedAt: Date.UTC(2026, 0, 2), text: 'second', meta: { digest: 2 } },
      ]);
      await w.close();
      const files = warcFiles(dir);
      expect(files).toEqual(['volcrawl-text-20260101T000000-00001.warc.gz']);
      const raw = readFileSync(join(dir, files[0]!));
      const recs = readWarcGz(raw);
      checkRecords(recs);
      expect(recs.map((r) => field(r, 'WARC-Type'))).toEqual(['warcinfo', 'conversion', 'conversion']);
      // The file is named by its name: no directory of the operator's in any record.
      expect(field(recs[0]!, 'WARC-Filename')).toBe(files[0]);
      expect(raw.includes(Buffer.from(t.dir))).toBe(false);
      expect(gunzipSync(raw).includes(Buffer.from(t.dir))).toBe(false);
      const [, a, b] = recs;
      expect(field(a!, 'WARC-Target-URI')).toBe('http://a.test/');
      expect(a!.block.toString('utf8')).toBe('héllo wörld');
      expect(field(a!, 'WARC-Payload-Digest')).toBe(sha1Base32(Buffer.from('héllo wörld')));
      expect(field(a!, 'Volcrawl-Channel')).toBe('c1');
      expect(field(a!, 'Volcrawl-Last-Modified')).toBe('Thu, 01 Jan 2026 00:00:00 GMT');
      expect(field(b!, 'WARC-Date')).toBe('2026-01-02T00:00:00Z');

      // The index beside the closed file: pywb's CDXJ, sorted, offset/length load exactly the record.
      const cdxj = readFileSync(join(dir, 'volcrawl-text-20260101T000000-00001.cdxj'), 'utf8');
      const lines = parseCdxj(cdxj);
      expect(lines.map((l) => l.urlkey)).toEqual(['test,a)/', 'test,a)/b?x=1&y=2']);
      expect(lines[0]!.raw).toBe(
        `test,a)/ 20260101000000 {"url": "http://a.test/", "mime": "text/plain", "digest": "${sha1Base32(Buffer.from('héllo wörld'))}", "length": "${recs[1]!.length}", "offset": "${recs[1]!.offset}", "filename": "${files[0]}"}`,
      );
      for (const l of lines) {
        const one = parseRecords(gunzipSync(raw.subarray(Number(l.json.offset), Number(l.json.offset) + Number(l.json.length))));
        expect(one.length).toBe(1);
        expect(field(one[0]!, 'WARC-Target-URI')).toBe(l.json.url);
      }

      // warcio reads the same records and indexes them at the same offsets.
      const seen: string[] = [];
      for await (const rec of new WARCParser(createReadStream(join(dir, files[0]!)))) {
        seen.push(`${rec.warcType} ${rec.warcTargetURI ?? ''}`);
        if (rec.warcType === 'conversion') expect(rec.warcHeader('WARC-Warcinfo-ID')).toBe(field(recs[0]!, 'WARC-Record-ID'));
      }
      expect(seen).toEqual(['warcinfo ', 'conversion http://a.test/', 'conversion http://a.test/b?y=2&x=1']);
      const indexed: Record<string, unknown>[] = [];
      for await (const r of new CDXIndexer({}).iterIndex([{ filename: files[0]!, reader: createReadStream(join(dir, files[0]!)) }])) indexed.push(r);
      expect(indexed.map((r) => [r['url'], String(r['offset']), String(r['length'])]).sort()).toEqual(lines.map((l) => [l.json.url, l.json.offset, l.json.length]).sort());
    } finally {
      t.cleanup();
    }
  });

  it('keeps control characters of a title out of every field', async () => {
    const t = tempDir();
    try {
      const w = new WarcExporter(t.dir);
      const title = 'evil\r\nWARC-Type: response\r\n\r\n\u0000\u001b[31mred\u007f\u0085\u2028end\t';
      await w.append([{ url: 'http://a.test/', fetchedAt: 0, text: 'x', meta: { title, etag: '"a\nb"' } }]);
      await w.close();
      const recs = readWarcGz(readFileSync(join(t.dir, warcFiles(t.dir)[0]!)));
      checkRecords(recs); // no control character in any field line
      const conv = recs[1]!;
      expect(conv.fields.filter(([n]) => n === 'WARC-Type')).toEqual([['WARC-Type', 'conversion']]);
      expect(field(conv, 'Volcrawl-Title')).toBe('evil WARC-Type: response [31mred end');
      expect(field(conv, 'Volcrawl-Etag')).toBe('"a b"');
      expect(conv.block.toString()).toBe('x');
    } finally {
      t.cleanup();
    }
  });

  it('rotates files at maxBytes, each with its warcinfo and index, keeps call order, and refuses pages after close', async () => {
    const t = tempDir();
    try {
      const w = new WarcExporter(t.dir, 1);
      const urls = Array.from({ length: 6 }, (_, i) => `http://a.test/${i}`);
      // Concurrent calls, as concurrent uploads make them.
      await Promise.all([0, 2, 4].map((i) => w.append(urls.slice(i, i + 2).map((url) => ({ url, fetchedAt: 0, text: `text of ${url}`, meta: {} })))));
      expect(w.records).toBe(6);
      expect(w.backlog).toBe(0);
      await w.close();
      await expect(w.append([{ url: 'http://a.test/late', fetchedAt: 0, text: 'x', meta: {} }])).rejects.toThrow();
      const files = warcFiles(t.dir);
      expect(files.length).toBe(3);
      const got: string[] = [];
      for (const f of files) {
        const recs = readWarcGz(readFileSync(join(t.dir, f)));
        checkRecords(recs);
        expect(recs.map((r) => field(r, 'WARC-Type'))).toEqual(['warcinfo', 'conversion', 'conversion']);
        expect(field(recs[0]!, 'WARC-Filename')).toBe(f);
        for (const r of recs.slice(1)) {
          got.push(field(r, 'WARC-Target-URI')!);
          expect(r.block.toString()).toBe(`text of ${field(r, 'WARC-Target-URI')}`);
        }
        const index = parseCdxj(readFileSync(join(t.dir, f.replace(/\.warc\.gz$/, '.cdxj')), 'utf8'));
        expect(index.map((l) => l.json.filename)).toEqual([f, f]);
      }
      expect(got).toEqual(urls);
    } finally {
      t.cleanup();
    }
  });

  it('an append that cannot be written is rejected, and the next one goes to a new file', async () => {
    const t = tempDir();
    try {
      // A directory where the first file would go (the name is fixed by the start time).
      mkdirSync(join(t.dir, 'volcrawl-text-20260101T000000-00001.warc.gz'), { recursive: true });
      const w = new WarcExporter(t.dir, 1 << 20, Date.UTC(2026, 0, 1));
      const page = { url: 'http://a.test/', fetchedAt: 0, text: 'x', meta: {} };
      await expect(w.append([page])).rejects.toThrow(/EEXIST/);
      expect(w.backlog).toBe(0);
      await w.append([page]);
      await w.close();
      expect(w.records).toBe(1);
      expect(readdirSync(t.dir).sort()).toEqual(['volcrawl-text-20260101T000000-00001.warc.gz', 'volcrawl-text-20260101T000000-00002.cdxj', 'volcrawl-text-20260101T000000-00002.warc.gz']);
    } finally {
      t.cleanup();
    }
  });
});
