// WARC files of `volunteer-crawler crawl`, run as a real process against the
// local test web, read back with the tests' own reader (warc-reader.ts: gzip
// members split by hand, records by Content-Length, digests recomputed) and,
// as a second reader, with warcio's parser.
import { execFile } from 'node:child_process';
import { createReadStream, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WARCParser } from 'warcio';
import { cdxjLine, surt } from '../../src/crawler/warc/cdxj.js';
import { fieldValue } from '../../src/crawler/warc/fields.js';
import { TestWeb } from '../../testbed/web/testweb.js';
import { checkRecords, field, headerValues, parseCdxj, parseHttp, parseRecords, readWarcGz, sha1Base32, type WarcRec } from './warc-reader.js';

const run = promisify(execFile);
const DAY = 86_400_000;
let web: TestWeb;
const dir = mkdtempSync(join(tmpdir(), 'volcrawl-warc-'));

async function crawl(...args: string[]): Promise<{ code: number; stderr: string }> {
  try {
    const r = await run(process.execPath, ['bin/volunteer-crawler.js', 'crawl', ...args], { timeout: 90_000 });
    return { code: 0, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stderr: string };
    return { code: e.code, stderr: e.stderr };
  }
}

interface Output {
  recs: (WarcRec & { offset: number; length: number; file: string })[];
  pages: { url: string; finalUrl?: string; text: string }[];
  validators: { url: string; payloadDigest?: string; capturedAt?: number }[];
  files: string[];
}

function readOutput(out: string): Output {
  const files = readdirSync(out).filter((f) => f.endsWith('.warc.gz'));
  const recs = files.flatMap((f) => readWarcGz(readFileSync(join(out, f))).map((r) => ({ ...r, file: f })));
  const lines = (name: string) => readFileSync(join(out, name), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  return { recs, pages: lines('pages.jsonl'), validators: lines('validators.jsonl'), files };
}

const ofType = (o: Output, t: string) => o.recs.filter((r) => field(r, 'WARC-Type') === t);
const byUrl = (recs: WarcRec[], url: string) => recs.filter((r) => field(r, 'WARC-Target-URI') === url);

beforeAll(async () => {
  web = await TestWeb.start([{ name: 'arch', pages: 31, fanout: 5, gzip: true, changesPerDay: 1, archiveCases: true, recordBodies: true }], { seed: 3 });
});
afterAll(async () => {
  await web.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('WARC files of a crawl', () => {
  let first: Output;
  const out1 = join(dir, 'first');

  it('keep every exchange as received: header lines, reason phrase, encoded payloads; robots.txt and redirects; requests paired', async () => {
    const site = web.site('arch');
    const r = await crawl(site.url('/'), '--allow-private', '--delay', '0', '--depth', '1', '--out', out1, '--warc-errors');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/WARC: 1 file, \d+ responses, 0 revisits/);
    first = readOutput(out1);
    expect(first.files).toHaveLength(1);
    checkRecords(first.recs);
    expect(field(first.recs[0]!, 'WARC-Type')).toBe('warcinfo');
    expect(field(first.recs[0]!, 'WARC-Filename')).toBe(first.files[0]);

    // Every response is followed by its request, paired by WARC-Concurrent-To, and its payload digest is the body's.
    const responses = ofType(first, 'response');
    for (const res of responses) {
      const i = first.recs.indexOf(res as (typeof first.recs)[number]);
      const req = first.recs[i + 1]!;
      expect(field(req, 'WARC-Type')).toBe('request');
      expect(field(req, 'WARC-Concurrent-To')).toBe(field(res, 'WARC-Record-ID'));
      expect(field(req, 'WARC-Target-URI')).toBe(field(res, 'WARC-Target-URI'));
      expect(parseHttp(req.block).startLine).toBe(`GET ${new URL(field(req, 'WARC-Target-URI')!).pathname} HTTP/1.1`);
      expect(field(res, 'WARC-Payload-Digest')).toBe(sha1Base32(parseHttp(res.block).body));
    }
    expect(ofType(first, 'request')).toHaveLength(responses.length);

    // robots.txt and the redirect, as the server sent them.
    const robots = byUrl(responses, site.url('/robots.txt'));
    expect(robots).toHaveLength(1);
    expect(parseHttp(robots[0]!.block).body.toString()).toBe('User-agent: *\nDisallow: /private/\n');
    const moved = parseHttp(byUrl(responses, site.url('/warc/moved'))[0]!.block);
    expect(moved.startLine).toBe('HTTP/1.1 301 Moved Permanently');
    expect(headerValues(moved, 'location')).toEqual(['/warc/headers.html']);
    expect(moved.body.toString()).toContain('moved to');

    // Repeated headers as separate lines, in order; the Latin-1 byte as it came; the real reason phrase.
    const h = parseHttp(byUrl(responses, site.url('/warc/headers.html'))[0]!.block);
    expect(h.startLine).toBe('HTTP/1.1 200 Fine Thanks');
    const names = h.headerLines.map((l) => l.toString('latin1').split(':')[0]);
    expect(names.slice(0, 5)).toEqual(['Content-Type', 'Set-Cookie', 'X-Latin', 'Set-Cookie', 'Content-Length']);
    expect(headerValues(h, 'set-cookie')).toEqual(['a=1; Path=/; HttpOnly', 'b=2; Path=/']);
    expect(h.headerLines.find((l) => l.toString('latin1').startsWith('X-Latin'))).toEqual(Buffer.from('X-Latin: caf\u00e9', 'latin1'));

    // Transfer coding removed, and said so; the body dechunked.
    const c = parseHttp(byUrl(responses, site.url('/warc/chunked.html'))[0]!.block);
    expect(headerValues(c, 'x-crawler-transfer-encoding')).toEqual(['chunked']);
    expect(headerValues(c, 'transfer-encoding')).toEqual([]);
    expect(c.body.toString()).toBe('<html><head><title>chunked</title></head><body>first chunk, second chunk</body></html>');

    // A gzip-encoded page: the payload is the bytes on the wire, encoded, and so is its digest; the crawler decoded it for itself.
    const pageUrl = site.pageUrl(1);
    const g = byUrl(responses, pageUrl)[0]!;
    const gm = parseHttp(g.block);
    expect(headerValues(gm, 'content-encoding')).toEqual(['gzip']);
    const wire = site.sentBodies.get('/p/1.html')!;
    expect(gm.body.equals(wire)).toBe(true);
    expect(field(g, 'WARC-Payload-Digest')).toBe(sha1Base32(wire));
    expect(headerValues(gm, 'content-length')).toEqual([String(wire.length)]);
    expect(first.pages.find((p) => p.url === pageUrl)!.text).toContain('page 1');

    // 4xx behind --warc-errors.
    expect(parseHttp(byUrl(responses, site.url('/warc/gone'))[0]!.block).startLine).toBe('HTTP/1.1 404 Not Found');

    // The second reader agrees on the records.
    let n = 0;
    for await (const rec of new WARCParser(createReadStream(join(out1, first.files[0]!)))) {
      expect(rec.warcType).toBe(field(first.recs[n]!, 'WARC-Type'));
      n++;
    }
    expect(n).toBe(first.recs.length);
  });

  it('index each file in a CDXJ beside it whose offset and length load exactly the record', () => {
    const f = first.files[0]!;
    const raw = readFileSync(join(out1, f));
    const text = readFileSync(join(out1, f.replace(/\.warc\.gz$/, '.cdxj')), 'utf8');
    const lines = parseCdxj(text);
    expect(lines.map((l) => l.raw)).toEqual([...lines.map((l) => l.raw)].sort());
    // One line per response (and revisit); request and warcinfo records are not indexed.
    expect(lines).toHaveLength(ofType(first, 'response').length);
    for (const l of lines) {
      const off = Number(l.json.offset);
      const len = Number(l.json.length);
      const recs = parseRecords(gunzipSync(raw.subarray(off, off + len)));
      expect(recs).toHaveLength(1);
      const rec = recs[0]!;
      expect(field(rec, 'WARC-Target-URI')).toBe(l.json.url);
      expect(l.timestamp).toBe(field(rec, 'WARC-Date')!.replace(/[-:TZ]/g, ''));
      expect(l.json.digest).toBe(field(rec, 'WARC-Payload-Digest'));
      expect(l.json.status).toBe(parseHttp(rec.block).startLine.split(' ')[1]);
      expect(l.json.filename).toBe(f);
      const port = new URL(l.json.url!).port;
      expect(l.urlkey.startsWith(`1,0,0,127:${port})/`)).toBe(true);
    }
    expect(lines.find((l) => l.json.url === web.site('arch').url('/warc/headers.html'))!.json.mime).toBe('text/html');
  });

  it('on a recrawl with --known, write revisits for unchanged pages and responses for changed ones, agreeing with pages.jsonl and validators.jsonl', async () => {
    const site = web.site('arch');
    const before = web.clock.now();
    web.clock.advance(DAY);
    const out2 = join(dir, 'second');
    const r = await crawl(site.url('/'), '--allow-private', '--delay', '0', '--depth', '1', '--out', out2, '--known', join(out1, 'validators.jsonl'));
    expect(r.code, r.stderr).toBe(0);
    const second = readOutput(out2);
    checkRecords(second.recs);
    const pageIdx = [0, 1, 2, 3, 4, 5];
    const changed = pageIdx.filter((i) => site.versionAt(i) > site.versionAt(i, before)).map((i) => site.pageUrl(i));
    const unchanged = pageIdx.filter((i) => site.versionAt(i) === site.versionAt(i, before)).map((i) => site.pageUrl(i));
    expect(changed.length).toBeGreaterThan(0);
    expect(unchanged.length).toBeGreaterThan(0);

    const responses = ofType(second, 'response').map((x) => field(x, 'WARC-Target-URI'));
    const revisits = ofType(second, 'revisit');
    const revisitUrls = revisits.map((x) => field(x, 'WARC-Target-URI'));
    // Changed pages: a response, and a line in pages.jsonl; unchanged: a revisit, and none.
    expect(second.pages.map((p) => p.url).sort()).toEqual([...changed].sort());
    for (const u of changed) expect(responses).toContain(u);
    for (const u of unchanged) {
      expect(responses).not.toContain(u);
      expect(revisitUrls).toContain(u);
    }
    // Every live page has its validators; every revisit stands for a page in validators.jsonl and not in pages.jsonl.
    expect(second.validators.map((v) => v.url).sort()).toEqual(first.validators.map((v) => v.url).sort());
    for (const u of revisitUrls) expect(second.pages.some((p) => p.url === u)).toBe(false);

    const firstResponse = (u: string) => byUrl(ofType(first, 'response'), u)[0]!;
    for (const rv of revisits) {
      const u = field(rv, 'WARC-Target-URI')!;
      const http = parseHttp(rv.block);
      expect(http.body.length).toBe(0); // the head only
      expect(field(rv, 'WARC-Refers-To-Target-URI')).toBe(u);
      expect(field(rv, 'WARC-Refers-To-Date')).toBe(field(firstResponse(u), 'WARC-Date'));
      expect(field(rv, 'WARC-Payload-Digest')).toBe(field(firstResponse(u), 'WARC-Payload-Digest'));
      const i = second.recs.indexOf(rv as (typeof second.recs)[number]);
      expect(field(second.recs[i + 1]!, 'WARC-Concurrent-To')).toBe(field(rv, 'WARC-Record-ID'));
      if (u.includes('/warc/')) {
        // No validators on these: the same payload again.
        expect(field(rv, 'WARC-Profile')).toBe('http://netpreserve.org/warc/1.1/revisit/identical-payload-digest');
        expect(http.startLine).toMatch(/^HTTP\/1\.1 200 /);
      } else {
        expect(field(rv, 'WARC-Profile')).toBe('http://netpreserve.org/warc/1.1/revisit/server-not-modified');
        expect(http.startLine).toBe('HTTP/1.1 304 Not Modified');
      }
    }
    // The conditional request went out with the known validators.
    const req = second.recs[second.recs.indexOf(revisits.find((x) => !field(x, 'WARC-Target-URI')!.includes('/warc/'))! as (typeof second.recs)[number]) + 1]!;
    expect(headerValues(parseHttp(req.block), 'if-none-match')).toHaveLength(1);
    // The index lists revisits as pywb does.
    const cdxj = parseCdxj(readFileSync(join(out2, second.files[0]!.replace(/\.warc\.gz$/, '.cdxj')), 'utf8'));
    expect(cdxj.filter((l) => l.json.mime === 'warc/revisit').length).toBe(revisits.length);
  });
});

describe('the WARC module', () => {
  it('computes urlkeys as the surt package does', () => {
    // Expected values: the output of surt 0.3.1 (internetarchive/surt) for the same URLs.
    const cases: [string, string][] = [
      ['http://www.archive.org/', 'org,archive)/'],
      ['http://archive.org/goo/?a=2&b&a=1', 'org,archive)/goo?a=1&a=2&b'],
      ['http://archive.org/index.php?PHPSESSID=0123456789abcdefghijklemopqrstuv&action=profile;u=4221', 'org,archive)/index.php?action=profile;u=4221'],
      ['http://example.com/script?type=a+b+%26+c&grape=wine', 'com,example)/script?+c&grape=wine&type=a+b+'],
      ['http://example.com/app?item=Wroc%C5%82aw', 'com,example)/app?item=wroc%c5%82aw'],
      ['http://127.0.0.1:39871/p/1.html', '1,0,0,127:39871)/p/1.html'],
      ['https://Example.COM:443/A/./b/../C//d/?Z=1&y=%41', 'com,example)/a/c/d?y=a&z=1'],
      ['http://www12.example.com/%7Euser/caf%C3%A9.html#frag', 'com,example)/~user/caf%c3%a9.html'],
      ['http://[::1]:8080/x', '::1:8080)/x'],
      ['http://example.com/(a(123456789012345678901234))/page.aspx', 'com,example)/page.aspx'],
      ['http://example.com/p?q=%E2%82%AC&q', 'com,example)/p?q&q=%e2%82%ac'],
      ['dns:archive.org', 'dns:archive.org'],
    ];
    for (const [url, key] of cases) expect(surt(url), url).toBe(key);
  });

  it('writes index lines as pywb does and field values without control characters', () => {
    expect(cdxjLine({ url: 'http://a.test/é?b=1&a=2', date: Date.UTC(2026, 0, 2, 3, 4, 5), mime: 'text/html', status: 200, digest: 'sha1:AAAA' }, 10, 20, 'f.warc.gz')).toBe(
      'test,a)/%c3%a9?a=2&b=1 20260102030405 {"url": "http://a.test/\\u00e9?b=1&a=2", "mime": "text/html", "status": "200", "digest": "sha1:AAAA", "length": "20", "offset": "10", "filename": "f.warc.gz"}\n',
    );
    expect(fieldValue('a\r\nb\u0000\tc\u2028d ')).toBe('a b c d');
    expect(fieldValue('x'.repeat(10_000)).length).toBe(8192);
  });
});
