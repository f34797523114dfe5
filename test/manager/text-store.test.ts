// The page text store (src/manager/data/text-store.ts): texts read back across segment
// rotation and reopening, concurrent appends, an unreferenced tail left by a crash, and
// databases written before it (texts in LevelDB) read as before.
import { afterEach, describe, expect, it } from 'vitest';
import { appendFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { TextStore } from '../../src/manager/data/text-store.js';
import { Store } from '../../src/manager/data/store.js';
import { PageRepository } from '../../src/manager/data/pages.js';
import { K } from '../../src/manager/data/keys.js';
import type { PageVersion } from '../../src/manager/domain/records.js';
import { tempDir } from './helpers.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const text = (i: number): string => `page ${i} ` + 'é€😀 '.repeat(i % 7) + 'x'.repeat(i * 37);

function meta(url: string, version: number): Omit<PageVersion, 'text'> {
  return { url, version, status: 200, title: url, contentType: 'text/html', bytes: 1, digest: 'D', fetchedAt: 1, taskId: 't', crawler: 'c', storedAt: 1 } as unknown as Omit<PageVersion, 'text'>;
}

describe('text store', () => {
  it('reads back what it wrote, across segments, concurrent appends and a reopen', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    let ts = await TextStore.open(t.dir, { segmentBytes: 4096 });
    const all = Array.from({ length: 60 }, (_, i) => text(i));
    // Ten appends of six texts at once: each gets its own range.
    const refs = (await Promise.all(Array.from({ length: 10 }, (_, k) => ts.append(all.slice(k * 6, k * 6 + 6))))).flat();
    expect(await ts.read(refs)).toEqual(all);
    expect(new Set(refs.map((r) => r[0])).size).toBeGreaterThan(3);
    await ts.close();
    // A crash between a text's write and its batch leaves an unreferenced tail: later texts go after it.
    const segs = readdirSync(join(t.dir, 'texts')).sort();
    appendFileSync(join(t.dir, 'texts', segs.at(-1)!), 'torn');
    ts = await TextStore.open(t.dir, { segmentBytes: 4096 });
    cleanups.push(() => ts.close());
    const more = await ts.append(['after reopen', '']);
    expect(await ts.read([...refs, ...more])).toEqual([...all, 'after reopen', '']);
  });

  it('stores new versions outside LevelDB and still reads texts kept in px! by older databases', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const store = await Store.open(t.dir);
    cleanups.push(() => store.close());
    const pages = new PageRepository(store);
    // An older database: metadata without a reference, the text as raw UTF-8 in LevelDB.
    await store.batch([
      { type: 'put', key: K.pageVersion('c1', 'http://a.test/', 1), value: meta('http://a.test/', 1) },
      { type: 'put', key: K.pageText('c1', 'http://a.test/', 1), value: 'old text', valueEncoding: 'utf8' },
    ]);
    const ops = await pages.versionOps('c1', [
      { meta: meta('http://a.test/', 2), text: 'new text' },
      { meta: meta('http://b.test/', 1), text: text(5) },
    ]);
    expect(ops.every((op) => op.type === 'put' && op.valueEncoding === undefined)).toBe(true);
    await store.batch(ops);
    const vs = await pages.versions('c1', 'http://a.test/');
    expect(vs.map((v) => [v.version, v.text])).toEqual([
      [1, 'old text'],
      [2, 'new text'],
    ]);
    expect(vs.every((v) => !('tx' in v))).toBe(true);
    const picked = await pages.versionsWithText('c1', [
      { url: 'http://b.test/', version: 1 },
      { url: 'http://a.test/', version: 1 },
      { url: 'http://a.test/', version: 9 },
    ]);
    expect(picked.map((v) => v.text)).toEqual([text(5), 'old text']);
    expect(await store.keys(K.channelTexts('c1'))).toHaveLength(1); // only the old one
  });
});
