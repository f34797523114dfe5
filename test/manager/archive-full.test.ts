// `dht-manager serve --archive full` end to end on loopback: the manager as
// serve starts it, a real VolunteerNode running src/crawler's TaskManager, and
// the local test web. The volunteer uploads its exchanges over the archive
// protocol; the manager checks them and writes its own WARC files. They are
// read back with the tests' reader (gzip members and records split by hand,
// block digests recomputed: test/crawler/warc-reader.ts) and with warcio's
// parser and CDX indexer: response payloads are the bytes the test web sent,
// a recrawl's 304s are revisits, robots.txt and the redirect are there, and
// every CDXJ line loads its record.
import { createReadStream, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CDXIndexer, WARCParser } from 'warcio';
import { TaskManager } from '../../src/crawler/manager.js';
import { waitFor } from '../../testbed/net/harness.js';
import { checkRecords, field, parseCdxj, parseHttp, parseRecords, readWarcGz, sha1Base32 } from '../crawler/warc-reader.js';
import { LoopbackNetwork } from './network-fixture.js';

let net: LoopbackNetwork | undefined;
let managerStopped = false;

describe('--archive full: a manager and a volunteer', () => {
  beforeAll(async () => {
    net = await LoopbackNetwork.start({
      dirPrefix: 'volcrawl-archive-',
      sites: [{ name: 'arc', pages: 6, fanout: 5, gzip: true, changesPerDay: 0, archiveCases: true, recordBodies: true }],
      webSeed: 9,
      warc: true,
      archive: 'full',
      manager: { groupIntervals: [0.05, 0.1, 0.2, 0.4, 0.8], recrawl: { minInterval: 0 }, retryDelayMs: 1000 },
      volunteerSeed: 300,
    });
    await net.addVolunteer(0, (sink) => new TaskManager({ threads: 1, queue: 2, allowPrivate: true, sink }));
  }, 120_000);

  afterAll(async () => {
    if (net === undefined) return;
    await Promise.all(net.volunteers.map((n) => n.kill()));
    if (!managerStopped) await net.mgr.stop().catch(() => undefined);
    await net.web.close();
    rmSync(net.dir, { recursive: true, force: true });
  }, 60_000);

  it('archives what the volunteer fetched, as received, and the recrawl as revisits', async () => {
    const { mgr, web, dir } = net!;
    const site = web.site('arc');
    const ch = await net!.addChannel({ url: site.url('/'), depth: 2, delayMs: 0, group: 0 });
    const m = mgr.manager;
    // Two crawls: the second one's pages answer 304 to the manager's validators.
    await waitFor(async () => (await m.channels.history(ch.id)).length >= 2, 150_000, 'two crawls of the channel');
    const status = (await (await fetch(`${mgr.api.url}/api/status`)).json()) as { counters: Record<string, number> };
    expect(status.counters['archiveBatches']).toBeGreaterThanOrEqual(2);
    expect(status.counters['archiveRefused']).toBe(0);
    expect(status.counters['archiveDigestMismatches']).toBe(0);

    // Stopping the manager closes the files and writes their indexes.
    await Promise.all(net!.volunteers.map((n) => n.kill()));
    managerStopped = true;
    await mgr.stop();
    const wdir = join(dir, 'warc');
    const files = readdirSync(wdir).filter((f) => f.startsWith('volcrawl-archive-') && f.endsWith('.warc.gz'));
    expect(files.length).toBe(1);
    const raw = readFileSync(join(wdir, files[0]!));
    const recs = readWarcGz(raw);
    checkRecords(recs); // block digests, WARC-Warcinfo-ID on every record, no control characters
    expect(field(recs[0]!, 'WARC-Type')).toBe('warcinfo');
    expect(field(recs[0]!, 'WARC-Filename')).toBe(files[0]);
    expect(raw.includes(Buffer.from(dir))).toBe(false);
    const ofType = (t: string) => recs.filter((r) => field(r, 'WARC-Type') === t);
    const responses = ofType('response');
    const revisits = ofType('revisit');
    const requests = ofType('request');

    // Every response and revisit has its request, paired by WARC-Concurrent-To.
    expect(requests.map((r) => field(r, 'WARC-Concurrent-To')).sort()).toEqual([...responses, ...revisits].map((r) => field(r, 'WARC-Record-ID')).sort());

    // Pages as the test web sent them: gzip-encoded payloads, their digests.
    const pageUrls = [0, 1, 2, 3, 4, 5].map((i) => site.pageUrl(i));
    for (const url of pageUrls) {
      const first = responses.find((r) => field(r, 'WARC-Target-URI') === url);
      expect(first, url).toBeDefined();
      const http = parseHttp(first!.block);
      expect(http.startLine).toMatch(/^HTTP\/1\.1 200/);
      const sent = site.sentBodies.get(new URL(url).pathname)!;
      expect(http.body.equals(sent)).toBe(true);
      expect(gunzipSync(http.body).toString('utf8')).toContain('<html>');
      expect(field(first!, 'WARC-Payload-Digest')).toBe(sha1Base32(sent));
    }
    // robots.txt and the redirect, so a replay follows it.
    expect(responses.some((r) => field(r, 'WARC-Target-URI') === site.url('/robots.txt'))).toBe(true);
    const moved = responses.find((r) => field(r, 'WARC-Target-URI') === site.url('/warc/moved'));
    expect(parseHttp(moved!.block).startLine).toMatch(/^HTTP\/1\.1 301/);

    // The recrawl: 304s became server-not-modified revisits pointing at the pages.
    const notModified = revisits.filter((r) => field(r, 'WARC-Profile')?.endsWith('/server-not-modified'));
    expect(notModified.length).toBeGreaterThan(0);
    for (const r of notModified) {
      const url = field(r, 'WARC-Target-URI')!;
      expect(pageUrls).toContain(url);
      expect(parseHttp(r.block).startLine).toMatch(/^HTTP\/1\.1 304/);
      // It refers to the capture the manager archived: URI, date and payload digest (kept with the page's validators).
      const original = responses.find((x) => field(x, 'WARC-Target-URI') === url)!;
      expect(field(r, 'WARC-Refers-To-Target-URI')).toBe(url);
      expect(field(r, 'WARC-Refers-To-Date')).toBe(field(original, 'WARC-Date'));
      expect(field(r, 'WARC-Payload-Digest')).toBe(field(original, 'WARC-Payload-Digest'));
    }

    // The index beside the file: every line loads exactly its record.
    const lines = parseCdxj(readFileSync(join(wdir, files[0]!.replace(/\.warc\.gz$/, '.cdxj')), 'utf8'));
    expect(lines.length).toBe(responses.length + revisits.length);
    for (const l of lines) {
      const one = parseRecords(gunzipSync(raw.subarray(Number(l.json.offset), Number(l.json.offset) + Number(l.json.length))));
      expect(one.length).toBe(1);
      expect(field(one[0]!, 'WARC-Target-URI')).toBe(l.json.url);
    }

    // warcio reads every record, with the same payloads, and indexes them at the same offsets.
    let parsed = 0;
    for await (const rec of new WARCParser(createReadStream(join(wdir, files[0]!)))) {
      parsed++;
      if (rec.warcType === 'response' && pageUrls.includes(rec.warcTargetURI ?? '')) {
        const body = Buffer.from(await rec.readFully(false));
        expect(body.equals(site.sentBodies.get(new URL(rec.warcTargetURI!).pathname)!)).toBe(true);
      }
    }
    expect(parsed).toBe(recs.length);
    const indexed: Record<string, unknown>[] = [];
    for await (const r of new CDXIndexer({}).iterIndex([{ filename: files[0]!, reader: createReadStream(join(wdir, files[0]!)) }])) indexed.push(r);
    expect(indexed.map((r) => [r['url'], String(r['offset']), String(r['length'])]).sort()).toEqual(lines.map((l) => [l.json.url, l.json.offset, l.json.length]).sort());
  }, 240_000);
});
