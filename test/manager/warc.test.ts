import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { createReadStream, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { WARCParser } from 'warcio';
import { WarcExporter } from '../../src/manager/warc.js';
import { tempDir } from './helpers.js';

describe('WARC export', () => {
  it('writes conversion records with metadata fields that warcio reads back, with valid digests', async () => {
    const t = tempDir();
    try {
      const w = new WarcExporter(join(t.dir, 'warc'));
      await w.append([
        { url: 'http://a.test/', fetchedAt: Date.UTC(2026, 0, 1), text: 'héllo wörld', meta: { digest: 1, channel: 'c1', lastModified: 'Thu, 01 Jan 2026 00:00:00 GMT' } },
        { url: 'http://a.test/b', fetchedAt: Date.UTC(2026, 0, 2), text: 'second', meta: { digest: 2 } },
      ]);
      await w.close();
      const files = readdirSync(join(t.dir, 'warc'));
      expect(files.length).toBe(1);
      const file = join(t.dir, 'warc', files[0]!);
      const parser = new WARCParser(createReadStream(file));
      const seen: [string, string | null | undefined, string][] = [];
      const offsets: number[] = [];
      for await (const rec of parser) {
        offsets.push(parser.offset);
        const body = await rec.contentText();
        seen.push([rec.warcType ?? '', rec.warcTargetURI, body]);
        if (rec.warcType === 'conversion') expect(rec.warcBlockDigest).toBe('sha256:' + createHash('sha256').update(body, 'utf8').digest('hex'));
        if (rec.warcTargetURI === 'http://a.test/') {
          expect(rec.warcHeader('Volcrawl-Channel')).toBe('c1');
          expect(rec.warcHeader('Volcrawl-Last-Modified')).toBe('Thu, 01 Jan 2026 00:00:00 GMT');
        }
      }
      expect(seen.map((s) => s[0])).toEqual(['warcinfo', 'conversion', 'conversion']);
      expect(seen[1]).toEqual(['conversion', 'http://a.test/', 'héllo wörld']);
      expect(seen[2]).toEqual(['conversion', 'http://a.test/b', 'second']);
      // One gzip member per record: each member decompresses to exactly one record.
      const raw = readFileSync(file);
      offsets.push(raw.length);
      for (let i = 0; i + 1 < offsets.length; i++) {
        const rec = gunzipSync(raw.subarray(offsets[i], offsets[i + 1])).toString('utf8');
        expect(rec.startsWith('WARC/1.1\r\n')).toBe(true);
        expect(rec.indexOf('WARC/1.1\r\n', 1)).toBe(-1);
      }
    } finally {
      t.cleanup();
    }
  });

  it('rotates files at maxBytes, each starting with warcinfo, keeps call order, and refuses pages after close', async () => {
    const t = tempDir();
    try {
      const w = new WarcExporter(join(t.dir, 'warc'), 1);
      const urls = Array.from({ length: 6 }, (_, i) => `http://a.test/${i}`);
      // Concurrent calls, as concurrent uploads make them.
      await Promise.all([0, 2, 4].map((i) => w.append(urls.slice(i, i + 2).map((url) => ({ url, fetchedAt: 0, text: `text of ${url}`, meta: { title: 'a\r\nb' } })))));
      expect(w.records).toBe(6);
      expect(w.backlog).toBe(0);
      await w.close();
      await expect(w.append([{ url: 'http://a.test/late', fetchedAt: 0, text: 'x', meta: {} }])).rejects.toThrow();
      const files = readdirSync(join(t.dir, 'warc')).sort();
      expect(files.length).toBe(3);
      const got: string[] = [];
      for (const f of files) {
        const types: string[] = [];
        for await (const rec of new WARCParser(createReadStream(join(t.dir, 'warc', f)))) {
          types.push(rec.warcType ?? '');
          if (rec.warcType === 'conversion') {
            got.push(rec.warcTargetURI ?? '');
            expect(await rec.contentText()).toBe(`text of ${rec.warcTargetURI}`);
            expect(rec.warcHeader('Volcrawl-Title')).toBe('a b');
          }
        }
        expect(types).toEqual(['warcinfo', 'conversion', 'conversion']);
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
      mkdirSync(join(t.dir, 'warc', 'volcrawl-20260101T000000-00001.warc.gz'), { recursive: true });
      const w = new WarcExporter(join(t.dir, 'warc'), 1 << 20, Date.UTC(2026, 0, 1));
      const page = { url: 'http://a.test/', fetchedAt: 0, text: 'x', meta: {} };
      await expect(w.append([page])).rejects.toThrow(/EISDIR/);
      expect(w.backlog).toBe(0);
      await w.append([page]);
      await w.close();
      expect(w.records).toBe(1);
      expect(readdirSync(join(t.dir, 'warc')).sort()).toEqual(['volcrawl-20260101T000000-00001.warc.gz', 'volcrawl-20260101T000000-00002.warc.gz']);
    } finally {
      t.cleanup();
    }
  });
});
