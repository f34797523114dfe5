import { describe, expect, it } from 'vitest';
import { createReadStream, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { WARCParser } from 'warcio';
import { WarcExporter } from '../../src/manager/warc.js';
import { tempDir } from './helpers.js';

describe('WARC export', () => {
  it('writes conversion + metadata records that warcio reads back, with valid digests', async () => {
    const t = tempDir();
    try {
      const w = new WarcExporter(join(t.dir, 'warc'));
      await w.append([
        { url: 'http://a.test/', fetchedAt: Date.UTC(2026, 0, 1), text: 'héllo wörld', meta: { digest: 1 } },
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
      }
      expect(seen.map((s) => s[0])).toEqual(['warcinfo', 'conversion', 'metadata', 'conversion', 'metadata']);
      expect(seen[1]).toEqual(['conversion', 'http://a.test/', 'héllo wörld']);
      expect(JSON.parse(seen[4]![2])).toEqual({ digest: 2 });
    } finally {
      t.cleanup();
    }
  });
});
