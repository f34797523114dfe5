// The order a channel's task goes out in is ≤ 1 MiB (signing.ts): the known list
// is cut by bytes as well as by count, and archived captures (payload digest and
// date per page, `--archive full`) make each entry longer.
import { describe, expect, it } from 'vitest';
import { buildTask } from '../../src/manager/domain/task-builder.js';
import type { Channel } from '../../src/manager/domain/channel.js';
import type { KnownEntry } from '../../src/manager/domain/records.js';
import { MAX_TASK_BYTES } from '../../src/dht/signing.js';
import { parseTask } from '../../src/crawler/task.js';

const ch: Channel = {
  id: 'c1',
  kind: 'host',
  origin: 'http://big.test',
  host: 'big.test',
  pathPrefixes: ['/'],
  seeds: ['http://big.test/'],
  filters: [],
  depth: 3,
  expectedPages: 5000,
  maxPages: 10_000,
  delayMs: 1000,
  group: 0,
  pinnedGroup: false,
  changeRate: null,
  changeInterval: 60,
  createdAt: 0,
  updatedAt: 0,
};

function known(n: number, pathChars: number, capture: boolean): KnownEntry[] {
  return Array.from({ length: n }, (_, i) => ({
    url: `http://big.test/${String(i).padStart(pathChars, 'x')}`,
    digest: i,
    depth: 1,
    etag: `"${i}-abcdef"`,
    lastModified: 'Thu, 01 Jan 2026 00:00:00 GMT',
    ...(capture ? { payloadDigest: 'sha1:' + 'A'.repeat(32), capturedAt: 1_795_000_000_000 + i } : {}),
  }));
}

describe('a task built for an order', () => {
  it('carries every known entry of an ordinary channel, captures included', () => {
    const t = buildTask(ch, 'c1.x.1', Date.now() + 60_000, known(2000, 40, true), [], []);
    expect(t.known.length).toBe(2000);
    expect(t.known[0]).toMatchObject({ payloadDigest: 'sha1:' + 'A'.repeat(32), capturedAt: 1_795_000_000_000 });
    expect(parseTask(t).known[0]!.capturedAt).toBe(1_795_000_000_000);
  });

  it('cuts the known list by bytes so that the order still fits', () => {
    const t = buildTask(ch, 'c1.x.1', Date.now() + 60_000, known(5000, 200, true), [], []);
    expect(t.known.length).toBeLessThan(5000);
    expect(t.known.length).toBeGreaterThan(1000);
    expect(Buffer.byteLength(JSON.stringify(t))).toBeLessThan(MAX_TASK_BYTES);
    expect(t.pageDigests.length).toBe(5000); // digests are not cut with it
  });
});
