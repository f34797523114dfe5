// The standalone `volunteer-crawler crawl` command, run as a real child process.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gunzipSync } from 'node:zlib';
import { TestWeb } from '../../testbed/web/testweb.js';

const run = promisify(execFile);
let web: TestWeb;
const dir = mkdtempSync(join(tmpdir(), 'volcrawl-cli-'));

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, ['bin/volunteer-crawler.js', 'crawl', ...args], { timeout: 150_000 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

beforeAll(async () => {
  web = await TestWeb.start([{ name: 'site', pages: 31, fanout: 5 }]);
});
afterAll(async () => {
  await web.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('volunteer-crawler crawl', () => {
  it('crawls a channel into JSON lines and a WARC file, and recrawls with --known', async () => {
    const site = web.site('site');
    const out = join(dir, 'a');
    const r = await cli(site.url('/'), '--allow-private', '--delay', '0', '--depth', '1', '--out', out);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/completed: 6 pages fetched/);
    const pages = readFileSync(join(out, 'pages.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(pages.length).toBe(6);
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    expect(summary.status).toBe('completed');
    const warcFiles = readdirSync(out).filter((f) => f.endsWith('.warc.gz'));
    expect(summary.warc.files.map((f: { name: string }) => f.name)).toEqual(warcFiles);
    const warc = gunzipSync(readFileSync(join(out, warcFiles[0]!))).toString('latin1');
    expect(warc.match(/WARC-Type: response/g)?.length).toBe(7); // robots.txt and the 6 pages (test/crawler/warc.test.ts reads them in detail)
    expect(warc).toContain('WARC-Type: warcinfo');
    const out2 = join(dir, 'b');
    const r2 = await cli(site.url('/'), '--allow-private', '--delay', '0', '--depth', '1', '--out', out2, '--known', join(out, 'validators.jsonl'), '--no-warc');
    expect(r2.code).toBe(0);
    expect(r2.stderr).toMatch(/6 unchanged \(6 via 304\)/);
    expect(readFileSync(join(out2, 'pages.jsonl'), 'utf8')).toBe('');
    expect(readdirSync(out2).filter((f) => f.includes('.warc') || f.endsWith('.cdxj'))).toEqual([]);
  });

  it('is refused without --allow-private on loopback', async () => {
    const r = await cli(web.site('site').url('/'), '--out', join(dir, 'c'));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/refused/);
  });

  it('rejects a bad URL, flag or pattern with a clear error and exit code 2', async () => {
    const cases: [string[], RegExp][] = [
      [['ftp://example.com/'], /only http and https/],
      [['not a url'], /not a URL/],
      [['http://example.com/', '--depth', 'x'], /--depth must be an integer/],
      [['http://example.com/', '--filter', '(a+)+$'], /catastrophic backtracking/],
      [['http://example.com/', '--filter', '(['], /does not compile/],
      [['http://example.com/', '--frobnicate'], /unknown option/],
      [['http://example.com/', '--warc-max-size', '0'], /--warc-max-size must be positive/],
    ];
    const results = await Promise.all(cases.map(([args]) => cli(...args)));
    results.forEach((r, i) => {
      expect(r.code, cases[i]![0].join(' ')).toBe(2);
      expect(r.stderr).toMatch(cases[i]![1]);
    });
  }, 180_000); // seven processes at once: on a loaded 2-core machine each start takes seconds
});
