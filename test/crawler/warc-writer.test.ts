// The WARC writer's worker thread runs with a small young generation (so the
// buffers of written records are freed soon after), and nothing else of its
// heap is capped: an entry far larger than the young generation is written whole.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WARC_WORKER_YOUNG_GENERATION_MB, WarcWriter } from '../../src/crawler/warc/writer.js';
import { checkRecords, field, readWarcGz, sha1Base32 } from './warc-reader.js';

describe('WARC writer worker', () => {
  it('runs with its young generation bounded and still writes entries larger than it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'volcrawl-warc-writer-'));
    try {
      const w = new WarcWriter({ dir, prefix: 'big', now: Date.UTC(2026, 0, 1) });
      await w.ready();
      expect(w.workerLimits.maxYoungGenerationSizeMb).toBe(WARC_WORKER_YOUNG_GENERATION_MB);
      // Not capped: V8 sizes the old generation itself (far above what the young one holds).
      expect(w.workerLimits.maxOldGenerationSizeMb ?? 0).toBeGreaterThan(4 * WARC_WORKER_YOUNG_GENERATION_MB);
      const bigMb = 2 * WARC_WORKER_YOUNG_GENERATION_MB;
      const text = 'abcdefghij'.repeat(bigMb * 104_858); // > bigMb MiB of text
      const body = Buffer.alloc(bigMb * 2 ** 20, 'x');
      const request = Buffer.from('GET /big HTTP/1.1\r\nhost: a.test\r\n\r\n', 'latin1');
      await w.append([
        { kind: 'conversion', page: { url: 'http://a.test/text', fetchedAt: Date.UTC(2026, 0, 1), text, meta: {} } },
        {
          kind: 'response',
          exchange: { url: 'http://a.test/big', date: Date.UTC(2026, 0, 1), request, status: 200, statusText: 'OK', headers: [Buffer.from('Content-Length'), Buffer.from(String(body.length))], body, truncated: false },
        },
      ]);
      const summary = await w.close();
      expect(summary.counts).toEqual({ warcinfo: 1, conversion: 1, response: 1, request: 1 });
      const files = readdirSync(dir).filter((f) => f.endsWith('.warc.gz'));
      expect(files.length).toBe(1);
      const recs = readWarcGz(readFileSync(join(dir, files[0]!)));
      checkRecords(recs);
      const conv = recs.find((r) => field(r, 'WARC-Type') === 'conversion')!;
      expect(conv.block.length).toBe(text.length);
      expect(field(conv, 'WARC-Block-Digest')).toBe(sha1Base32(Buffer.from(text)));
      const resp = recs.find((r) => field(r, 'WARC-Type') === 'response')!;
      expect(field(resp, 'WARC-Payload-Digest')).toBe(sha1Base32(body));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
