import { describe, expect, it } from 'vitest';
import { sha1_32 } from '../../src/crawler/hash.js';
import { changeProbability, compareCrawls, compareOptions, fetchWindow, type CrawlView, type PageView } from '../../src/manager/trust/compare.js';
import { binomialTail } from '../../src/manager/trust/stats.js';
import { digitOnlyDifferences, normaliseText, textDigest } from '../../src/manager/trust/text.js';

const T0 = Date.UTC(2026, 0, 1);
const MIN = 60_000;
const SLOW = { ratePerMinute: 1 / (7 * 24 * 60) }; // a change a week
const STATIC = { ratePerMinute: 0 };
const FAST = { ratePerMinute: 1 / 2 }; // a change every two minutes

const url = (i: number): string => `http://site.test/p${i}`;
const EDITIONS = ['first', 'second', 'third'];
const textOf = (i: number, version = 0): string => `Page ${i}, ${EDITIONS[version]} edition: the quick brown fox jumps over the lazy dog ${i * 31}`;
function page(i: number, at: number, o: { version?: number; text?: string; digest?: number; title?: string } = {}): PageView {
  const text = o.text ?? textOf(i, o.version);
  const body = textOf(i, o.version);
  return { url: url(i), digest: o.digest ?? sha1_32(`<html>${body}</html>`), text, title: o.title ?? `Page ${i}`, bytes: body.length + 13, fetchedAt: at + i * 1000 };
}
function crawl(volunteer: string, start: number, pages: readonly PageView[], o: Partial<CrawlView> = {}): CrawlView {
  return {
    volunteer,
    taskId: `${volunteer}-task`,
    status: 'completed',
    issuedAt: start,
    receivedAt: start + MIN,
    pages,
    validators: pages.map((p) => ({ url: p.url, digest: p.digest })),
    ...o,
  };
}
const honest = (volunteer: string, start: number, n = 10, versions: Record<number, number> = {}): CrawlView =>
  crawl(volunteer, start, Array.from({ length: n }, (_, i) => page(i, start, { version: versions[i] ?? 0 })));

describe('text normalisation', () => {
  it('removes only what honest crawls of one version can differ in', () => {
    expect(normaliseText('  a\u00a0b\n\tc  ')).toBe('a b c');
    expect(normaliseText('ﬁne')).toBe('fine'); // NFKC ligature
    expect(normaliseText('Price: 10')).not.toBe(normaliseText('price: 10'));
    expect(textDigest('a  b')).toBe(textDigest('a b'));
    expect(textDigest('a b')).not.toBe(textDigest('a c'));
  });
  it('counts words that differ only in their digits', () => {
    expect(digitOnlyDifferences('seen 12 times at 10:02', 'seen 13 times at 10:03')).toBe(2);
    expect(digitOnlyDifferences('seen 12 times', 'seen 12 times')).toBe(0);
    expect(digitOnlyDifferences('seen 12 times', 'seen 12 visits')).toBeNull();
    expect(digitOnlyDifferences('seen 12 times', 'seen 12 times today')).toBeNull();
  });
});

describe('change probability and fetch windows', () => {
  it('is 1 − (1 − floor)·e^{−k·r·Δt}', () => {
    const o = compareOptions();
    expect(changeProbability(0, 10 * MIN, o)).toBeCloseTo(0.005, 12);
    expect(changeProbability(1 / 60, 30 * MIN, o)).toBeCloseTo(1 - 0.995 * Math.exp(-2 * 0.5), 12);
  });
  it('clamps a claimed fetch time into the trusted window, widened by the clock skew', () => {
    const c = crawl('a', T0, [], { receivedAt: T0 + 10 * MIN });
    expect(fetchWindow(c, undefined, 60_000)).toEqual([T0, T0 + 10 * MIN]);
    expect(fetchWindow(c, T0 + 5 * MIN, 60_000)).toEqual([T0 + 4 * MIN, T0 + 6 * MIN]);
    expect(fetchWindow(c, T0 - 99 * MIN, 0)).toEqual([T0, T0]); // a lie before the issue is clamped
    expect(fetchWindow(c, T0 + 99 * MIN, 0)).toEqual([T0 + 10 * MIN, T0 + 10 * MIN]);
  });
});

describe('compareCrawls', () => {
  it('two honest crawls of an unchanged channel agree on every page', () => {
    const cmp = compareCrawls(honest('a', T0), honest('b', T0 + MIN), SLOW);
    expect(cmp.verdict).toBe('agree');
    expect(cmp.weight).toBe(1);
    expect(cmp.counts.identical).toBe(10);
    expect(cmp.trials).toBe(10);
    expect(cmp.mismatches).toBe(0);
  });

  describe('a page that legitimately changed between the two crawls never counts against either volunteer', () => {
    it('one changed page on a slow channel: still an agreement (one page never makes a disagreement)', () => {
      const cmp = compareCrawls(honest('a', T0), honest('b', T0 + MIN, 10, { 3: 1 }), SLOW);
      expect(cmp.counts.mismatch).toBe(1);
      expect(cmp.verdict).toBe('agree');
      expect(cmp.disagreements).toEqual([]);
    });
    it('on a fast channel every page may have changed: compared on title and length only, never a disagreement', () => {
      const b = honest('b', T0 + 30 * MIN, 10, Object.fromEntries(Array.from({ length: 10 }, (_, i) => [i, 1])));
      const cmp = compareCrawls(honest('a', T0), b, FAST);
      expect(cmp.counts['changed-consistent']).toBe(10);
      expect(cmp.trials).toBe(0);
      expect(cmp.verdict).toBe('inconclusive');
      expect(cmp.weight).toBe(0);
    });
    it('a changed page that lost its title and half its text is still only "divergent", not held against anyone', () => {
      const b = honest('b', T0 + 30 * MIN);
      b.pages = b.pages.map((p, i) => (i === 0 ? { ...p, digest: 1, title: 'New', text: 'short' } : p));
      const cmp = compareCrawls(honest('a', T0), b, FAST);
      expect(cmp.pages.find((p) => p.url === url(0))!.kind).toBe('changed-divergent');
      expect(cmp.disagreements).toEqual([]);
    });
  });

  it('rewritten text (spam) with digests to match on half the pages: a mismatch, P = P(Bin(10, 0.005) ≥ 5)', () => {
    const forged = honest('a', T0);
    forged.pages = forged.pages.map((p, i) => (i < 5 ? { ...p, text: `BUY CHEAP PILLS ${i}`, digest: sha1_32(`spam ${i}`) } : p));
    forged.validators = forged.pages.map((p) => ({ url: p.url, digest: p.digest }));
    const cmp = compareCrawls(forged, honest('b', T0 + MIN), STATIC);
    expect(cmp.verdict).toBe('disagree');
    expect(cmp.disagreements.map((d) => d.reason)).toEqual(['mismatch']);
    expect(cmp.disagreements[0]!.side).toBeNull(); // a pair cannot tell who lied
    expect(cmp.mismatches).toBe(5);
    expect(cmp.expectedMismatches).toBeCloseTo(0.05, 12);
    expect(cmp.pValue).toBeCloseTo(binomialTail(10, 0.005, 5), 20);
    expect(cmp.weight).toBe(1);
  });

  it('rewritten text under the true digest (defacement of a page that really changed) is a contradiction, however fast the channel changes', () => {
    const a = honest('a', T0);
    a.pages = a.pages.map((p, i) => (i === 2 ? { ...p, text: `${p.text} visit http://spam.test/` } : p));
    const cmp = compareCrawls(a, honest('b', T0 + 30 * MIN), FAST);
    expect(cmp.verdict).toBe('disagree');
    expect(cmp.disagreements.map((d) => d.reason)).toEqual(['contradiction']);
    expect(cmp.weight).toBe(2);
    expect(cmp.pages.find((p) => p.url === url(2))!.kind).toBe('contradiction');
  });

  it('empty pages under the true digest are a contradiction; with a made-up digest, a mismatch; both are named', () => {
    const emptied = honest('a', T0);
    emptied.pages = emptied.pages.map((p) => ({ ...p, text: '' }));
    const c1 = compareCrawls(emptied, honest('b', T0 + MIN), SLOW);
    expect(c1.disagreements.map((d) => d.reason)).toEqual(['contradiction']);
    expect(c1.disagreements[0]!.detail).toMatch(/10 empty in a/);
    const faked = honest('a', T0);
    faked.pages = faked.pages.map((p, i) => ({ ...p, text: '', digest: 1000 + i }));
    faked.validators = faked.pages.map((p) => ({ url: p.url, digest: p.digest }));
    const c2 = compareCrawls(faked, honest('b', T0 + MIN), SLOW);
    expect(c2.disagreements.map((d) => d.reason)).toEqual(['mismatch']);
    expect(c2.disagreements[0]!.detail).toMatch(/10 empty in a/);
  });

  it('noindex claimed to hide a page is a contradiction (one body, one noindex flag)', () => {
    const a = honest('a', T0);
    a.pages = a.pages.map((p) => ({ ...p, text: '', noindex: true }));
    expect(compareCrawls(a, honest('b', T0 + MIN), SLOW).disagreements.map((d) => d.reason)).toEqual(['contradiction']);
  });

  it('acknowledged but never crawled: "completed" with no page while the other found ten', () => {
    const cmp = compareCrawls(crawl('a', T0, []), honest('b', T0 + MIN), SLOW);
    expect(cmp.verdict).toBe('disagree');
    expect(cmp.disagreements).toEqual([expect.objectContaining({ reason: 'not-crawled', side: 'a' })]);
    expect(cmp.weight).toBe(0.5);
  });

  it('an incremental crawl is judged on the pages the manager knew: it does not parse unchanged pages, so it cannot reach the rest', () => {
    // The channel's first crawl hit its deadline after 3 pages; the known list held those 3 ever since.
    const known = [url(0), url(1), url(2)];
    const incremental = crawl('a', T0, honest('a', T0).pages.slice(0, 3), { known });
    expect(compareCrawls(incremental, honest('b', T0 + MIN), SLOW).verdict).toBe('agree');
    // Acknowledged and not crawled is still caught on those pages, and a crawl from scratch on all of them.
    expect(compareCrawls(crawl('a', T0, [], { known }), honest('b', T0 + MIN), SLOW).disagreements).toEqual([expect.objectContaining({ reason: 'not-crawled', side: 'a' })]);
    expect(compareCrawls(crawl('a', T0, honest('a', T0).pages.slice(0, 3), { known: [] }), honest('b', T0 + MIN), SLOW).disagreements).toEqual([expect.objectContaining({ reason: 'not-crawled', side: 'a' })]);
  });

  it('acknowledged but never crawled: a failure claimed while the other crawl found the pages', () => {
    const cmp = compareCrawls(crawl('a', T0, [], { status: 'failed' }), honest('b', T0 + MIN), SLOW);
    expect(cmp.disagreements).toEqual([expect.objectContaining({ reason: 'failure-claim', side: 'a' })]);
    expect(compareCrawls(crawl('a', T0, [], { status: 'failed' }), crawl('b', T0 + MIN, [], { status: 'robots-unavailable' }), SLOW).verdict).toBe('inconclusive');
    expect(compareCrawls(crawl('a', T0, [], { status: 'cancelled' }), honest('b', T0 + MIN), SLOW).verdict).toBe('inconclusive');
  });

  it('a few pages lost to fetch errors are not a dropped task, and a page-capped crawl may stop early', () => {
    const lossy = honest('a', T0);
    lossy.pages = lossy.pages.slice(0, 8);
    lossy.validators = lossy.validators.slice(0, 8);
    const cmp = compareCrawls(lossy, honest('b', T0 + MIN), SLOW);
    expect(cmp.counts['missing-a']).toBe(2);
    expect(cmp.verdict).toBe('agree');
    const capped = crawl('a', T0, honest('a', T0).pages.slice(0, 3), { status: 'page-cap' });
    expect(compareCrawls(capped, honest('b', T0 + MIN), SLOW).verdict).toBe('agree');
  });

  it('echoed digests (never fetched, claimed unchanged) disagree where pages had changed before the crawl', () => {
    // The previous crawl saw version 0; pages 0-4 changed before the echoing volunteer's task.
    const echo = crawl('a', T0, [], { validators: honest('x', T0 - 60 * MIN).validators, receivedAt: T0 + 2000 });
    const cmp = compareCrawls(echo, honest('b', T0 + MIN, 10, { 0: 1, 1: 1, 2: 1, 3: 1, 4: 1 }), SLOW);
    expect(cmp.counts['same-digest']).toBe(5);
    expect(cmp.counts.mismatch).toBe(5);
    expect(cmp.disagreements.map((d) => d.reason)).toEqual(['mismatch']);
  });

  it('a view counter is volatile: neither agreement nor disagreement', () => {
    const withCounter = (who: string, start: number, n: number): CrawlView => {
      const c = honest(who, start, 3);
      c.pages = c.pages.map((p) => ({ ...p, text: `${p.text} seen ${n} times`, digest: sha1_32(`${p.url} ${n}`) }));
      c.validators = c.pages.map((p) => ({ url: p.url, digest: p.digest }));
      return c;
    };
    const cmp = compareCrawls(withCounter('a', T0, 1041), withCounter('b', T0 + MIN, 1042), SLOW);
    expect(cmp.counts.volatile).toBe(3);
    expect(cmp.verdict).toBe('inconclusive');
  });

  it('on a page whose own history says it is stable, a changed number is not volatile (a forged price)', () => {
    const price = (who: string, start: number, p: string): CrawlView => {
      const c = honest(who, start, 3);
      c.pages = c.pages.map((x) => ({ ...x, text: `${x.text} price ${p} EUR`, digest: sha1_32(`${x.url} ${p}`) }));
      c.validators = c.pages.map((x) => ({ url: x.url, digest: x.digest }));
      return c;
    };
    const perPage = { ratePerMinute: 1 / 60, pageRatesPerMinute: Object.fromEntries([0, 1, 2].map((i) => [url(i), 0])) };
    const cmp = compareCrawls(price('a', T0, '999'), price('b', T0 + MIN, '100'), perPage);
    expect(cmp.counts.mismatch).toBe(3);
    expect(cmp.verdict).toBe('disagree');
    // Without per-page history the same difference is given the benefit of the doubt.
    expect(compareCrawls(price('a', T0, '999'), price('b', T0 + MIN, '100'), SLOW).counts.volatile).toBe(3);
  });

  it('SEO link injection: inter-site URLs only one full crawl reported', () => {
    const a = crawl('a', T0, honest('a', T0).pages, { interSiteUrls: ['http://x.test/', 'http://spam1.test/', 'http://spam2.test/', 'http://spam3.test/'] });
    const b = crawl('b', T0 + MIN, honest('b', T0 + MIN).pages, { interSiteUrls: ['http://x.test/'] });
    const cmp = compareCrawls(a, b, SLOW);
    expect(cmp.disagreements).toEqual([expect.objectContaining({ reason: 'injected-links', side: 'a' })]);
  });

  it('a sampled check compares only its target pages', () => {
    const targets = [url(1), url(2), url(3)];
    const b = crawl('b', T0 + MIN, honest('b', T0 + MIN).pages.filter((p) => targets.includes(p.url)), { targets });
    const cmp = compareCrawls(honest('a', T0), b, SLOW);
    expect(cmp.pages.map((p) => p.url)).toEqual(targets);
    expect(cmp.counts['missing-b']).toBe(0);
    expect(cmp.verdict).toBe('agree');
  });

  it('validates its options', () => {
    expect(() => compareOptions({ minMismatches: 1 })).toThrow(/minMismatches/);
    expect(() => compareOptions({ rateSafetyFactor: 0.5 })).toThrow(/rateSafetyFactor/);
    expect(compareOptions({ weights: { contradiction: 3 } as never }).weights.mismatch).toBe(1);
  });
});
