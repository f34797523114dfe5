import { describe, expect, it } from 'vitest';
import { createReadStream, readdirSync } from 'node:fs';
import { join } from 'node:path';
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
      const parser = new WARCParser(createReadStream(join(t.dir, 'warc', files[0]!)));
      const seen: [string, string | null | undefined, string][] = [];
      for await (const rec of parser) {
        const body = await rec.contentText();
        seen.push([rec.warcType ?? '', rec.warcTargetURI, body]);
        if (rec.warcType === 'conversion') expect(rec.warcBlockDigest).toMatch(/^sha256:[0-9a-f]{64}$/);
        if (rec.warcTargetURI === 'http://a.test/') {
          expect(rec.warcHeader('Volcrawl-Channel')).toBe('c1');
          expect(rec.warcHeader('Volcrawl-Last-Modified')).toBe('Thu, 01 Jan 2026 00:00:00 GMT');
        }
      }
      expect(seen.map((s) => s[0])).toEqual(['warcinfo', 'conversion', 'conversion']);
      expect(seen[1]).toEqual(['conversion', 'http://a.test/', 'héllo wörld']);
      expect(seen[2]).toEqual(['conversion', 'http://a.test/b', 'second']);
    } finally {
      t.cleanup();
    }
  });
});
