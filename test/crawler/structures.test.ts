import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DigestSet, sha1_32 } from '../../src/crawler/hash.js';
import { Parser, Tokenizer } from 'htmlparser2';
import { collapseWhitespace, decodeBody, parseHtml } from '../../src/crawler/html.js';
import { FastTokenizer } from '../../src/crawler/tokenizer.js';
import { isPrivateAddress } from '../../src/crawler/safety.js';
import { UrlSeen } from '../../src/crawler/urlseen.js';
import { UrlTodo } from '../../src/crawler/urltodo.js';
import { Spool } from '../../src/crawler/spool.js';

const dir = mkdtempSync(join(tmpdir(), 'volcrawl-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('URLtodo', () => {
  it('keeps FIFO order across the spill file, with interleaved pushes and shifts', () => {
    const q = new UrlTodo(10, dir);
    const out: number[] = [];
    let next = 0;
    for (let round = 0; round < 50; round++) {
      for (let k = 0; k < 37; k++) q.push({ url: `http://x.test/${next++}`, depth: round });
      for (let k = 0; k < 23; k++) {
        const it = q.shift();
        if (it) out.push(Number(it.url.split('/').pop()));
      }
      expect(q.inMemory).toBeLessThanOrEqual(10);
    }
    for (let it = q.shift(); it; it = q.shift()) out.push(Number(it.url.split('/').pop()));
    expect(out).toEqual([...Array(next).keys()]);
    expect(q.spilledTotal).toBeGreaterThan(0);
    expect(q.length).toBe(0);
    q.close();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('holds at most 1000 entries in memory by default', () => {
    const q = new UrlTodo(undefined, dir);
    for (let i = 0; i < 5000; i++) q.push({ url: `http://x.test/${i}`, depth: 1 });
    expect(q.inMemory).toBe(1000);
    expect(q.length).toBe(5000);
    expect(q.shift()).toEqual({ url: 'http://x.test/0', depth: 1 });
    q.close();
  });
});

describe('URLseen', () => {
  it('remembers URLs and grows past the expected count', () => {
    const s = new UrlSeen(10);
    for (let i = 0; i < 10_000; i++) expect(s.add(`http://x.test/${i}`)).toBe(true);
    for (let i = 0; i < 10_000; i++) expect(s.add(`http://x.test/${i}`)).toBe(false);
    expect(s.has('http://x.test/5')).toBe(true);
    expect(s.has('http://x.test/10001')).toBe(false);
    expect(s.size).toBe(10_000);
  });
  it('is sized from the expected page count', () => {
    expect(new UrlSeen(100_000).bytes).toBeLessThanOrEqual(4 * 1024 * 1024);
  });
});

describe('Pageseen digests', () => {
  it('are the first 32 bits of SHA-1', () => {
    // sha1("abc") = a9993e36...
    expect(sha1_32('abc')).toBe(0xa9993e36);
    const d = new DigestSet([5, 0xffffffff, 1, 0xa9993e36]);
    expect(d.has(0xa9993e36)).toBe(true);
    expect(d.has(0xffffffff)).toBe(true);
    expect(d.has(2)).toBe(false);
  });
});

describe('address safety', () => {
  it.each([
    '127.0.0.1', '127.1.2.3', '10.0.0.1', '172.16.5.4', '192.168.1.1', '169.254.169.254', '0.0.0.0', '100.64.0.1',
    '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fc00::1', 'fd12:3456::1', 'ff02::1',
    '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.1.2.3', '64:ff9b::a00:1', '2002:7f00:1::', '::127.0.0.1', 'not-an-ip',
  ])('refuses %s', (a) => {
    expect(isPrivateAddress(a)).toBe(true);
  });
  it.each(['8.8.8.8', '93.184.216.34', '2606:4700:4700::1111', '::ffff:8.8.8.8', '172.32.0.1'])('allows %s', (a) => {
    expect(isPrivateAddress(a)).toBe(false);
  });
});

describe('HTML extraction', () => {
  it('follows base href, drops nofollow, reads frames and alternates', () => {
    const html = `<html><head><base href="http://x.test/dir/"><title> T  1 </title><link rel="alternate" href="alt.html"><link rel="stylesheet" href="s.css"></head>
      <body><a href="a.html#frag">a</a><a rel="nofollow" href="/nf">nf</a><area href="../up.html"><iframe src="if.html"></iframe><frame src="fr.html">
      <a href="mailto:x@y">m</a><a href="javascript:1">j</a><script>var s = "<a href='no.html'>";</script>text <b>here</b></body></html>`;
    const p = parseHtml(html, new URL('http://x.test/page'));
    expect(p.title).toBe('T 1');
    expect(p.links.map(({ url, nofollow }) => ({ url, nofollow }))).toEqual([
      { url: 'http://x.test/dir/alt.html', nofollow: false },
      { url: 'http://x.test/dir/a.html', nofollow: false },
      { url: 'http://x.test/nf', nofollow: true },
      { url: 'http://x.test/up.html', nofollow: false },
      { url: 'http://x.test/dir/if.html', nofollow: false },
      { url: 'http://x.test/dir/fr.html', nofollow: false },
    ]);
    expect(p.text).toContain('text here');
    expect(p.text).not.toContain('no.html');
  });
  it('tokenizes exactly like htmlparser2 with the native fast-forward', () => {
    const docs = [
      '<!DOCTYPE html><html><head><title>a &amp; b</title><style>p > a { x: "<" }</style><script>if (a < b && c > d) x = "</scr" + "ipt>";</script></head>',
      '<body><!-- a comment with <tags> and -- dashes --><p class="x" data-y=\'q"uo>te\' z=unquoted>text &lt; more</p><![CDATA[ raw <b> ]]><?pi stuff?>',
      '<title>mal<formed</head><body><p><b><i>unclosed <a href="/bad/404">still a link<div></span></p></a><a href=/bad/500 >unquoted</a><<<>>><a href="',
      '<textarea>keep <b>this</b></textarea><noscript><a href="n.html">n</a></noscript><svg><a href="s.html"/></svg>text\n\twith\u00a0odd   space',
      'no tags at all, just text that never ends',
    ];
    const events = (html: string, tokenizer: typeof Tokenizer): unknown[] => {
      const out: unknown[] = [];
      const p = new Parser(
        {
          onopentag: (n, a) => out.push(['open', n, a]),
          onclosetag: (n, implied) => out.push(['close', n, implied]),
          ontext: (t) => out.push(['text', t]),
          oncomment: (t) => out.push(['comment', t]),
          oncdatastart: () => out.push(['cdata']),
          onprocessinginstruction: (n, d) => out.push(['pi', n, d]),
        },
        { decodeEntities: false, lowerCaseTags: true, lowerCaseAttributeNames: true, Tokenizer: tokenizer },
      );
      // Also across chunk boundaries (the tokenizer's offset is then non-zero).
      for (let i = 0; i < html.length; i += 37) p.write(html.slice(i, i + 37));
      p.end();
      return out;
    };
    for (const d of [...docs, docs.join('')]) expect(events(d, FastTokenizer)).toEqual(events(d, Tokenizer));
  });

  it('collapses whitespace like a /\\s+/ replace over ASCII and no-break spaces', () => {
    for (const s of ['', ' ', 'a', ' a', 'a ', 'a b', 'a  b', 'a\tb', 'a\n\n b', '\u00a0a\u00a0', 'a \r\n b  ', 'clean text with single spaces']) {
      expect(collapseWhitespace(s)).toBe(s.replace(/[\t\n\r\f\v \u00a0]+/g, ' ').trim());
    }
  });

  it('honours meta robots', () => {
    const p = parseHtml('<meta name="robots" content="noindex,nofollow"><a href="/x">x</a>', new URL('http://x.test/'));
    expect(p.noindex).toBe(true);
    expect(p.links.every((l) => l.nofollow)).toBe(true);
  });
  it('decodes the declared charset and falls back to UTF-8 for unknown ones', () => {
    const latin1 = Buffer.from('caf\u00e9', 'latin1');
    expect(decodeBody(latin1, 'text/html; charset=ISO-8859-1').text).toBe('café');
    expect(decodeBody(Buffer.from('<meta charset="windows-1252">\u00e9', 'latin1'), 'text/html').text).toContain('é');
    const d = decodeBody(Buffer.from('ok'), 'text/html; charset=x-bogus');
    expect(d.fallback).toBe(true);
    expect(d.text).toBe('ok');
  });
});

describe('upload spool', () => {
  it('reads pages (raw UTF-8 text, any size) and validators back in order', () => {
    const sp = new Spool(dir);
    const expected: unknown[] = [];
    for (let i = 0; i < 300; i++) {
      const text = i === 150 ? 'ü€ 😀 '.repeat(100_000) : `page ${i} naïve café\n\ttab`;
      const page = { url: `http://x.test/${i}`, status: 200, depth: 1, fetchedAt: i, contentType: 'text/html', bytes: 10, digest: i, text };
      sp.addPage(page);
      expected.push({ kind: 'p', page });
      const validator = { url: `http://x.test/${i}`, digest: i, depth: 1, etag: `"e${i}"` };
      sp.addValidator(validator);
      expected.push({ kind: 'v', validator });
    }
    expect([...sp.read()]).toEqual(expected);
    sp.close();
    expect(readdirSync(dir)).toEqual([]);
  });
});
