// The network archive's storage side against what an untrusted volunteer can
// send: the real Manager on LevelDB in a temp dir, batches built with the
// volunteer's encoder and then tampered with. And the archive protocol between
// two real libp2p nodes: a gzip bomb, a lying length, a forged sender field.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { gzipSync } from 'node:zlib';
import { lpStream } from '@libp2p/utils';
import type { Manager } from '../../src/manager/manager.js';
import { UploadRefused } from '../../src/manager/errors.js';
import { MAX_MISMATCHES } from '../../src/manager/services/archive.js';
import type { Task } from '../../src/crawler/task.js';
import type { Exchange } from '../../src/crawler/warc/exchange.js';
import { entryRecords, serialise, type ArchiveEntry } from '../../src/crawler/warc/record.js';
import { decodeUploadBatch, encodeUploadBatch, UploadBatchError } from '../../src/crawler/warc/upload-batch.js';
import { ARCHIVE_PROTOCOL, ArchiveReceiver, ArchiveRefusedError, uploadArchiveBatch, type ArchiveHeader } from '../../src/dht/archive-upload.js';
import type { VolcrawlLibp2p } from '../../src/dht/libp2p.js';
import { loopbackLibp2p } from '../../testbed/net/loopback.js';
import { Clock, openManager, resultFor, tempDir, upload } from './helpers.js';

const b = (s: string) => Buffer.from(s, 'latin1');

function exchange(url: string, date: number, body: Buffer, status = 200): Exchange {
  const u = new URL(url);
  return {
    url,
    date,
    request: b(`GET ${u.pathname} HTTP/1.1\r\nhost: ${u.host}\r\n\r\n`),
    status,
    statusText: status === 304 ? 'Not Modified' : 'OK',
    headers: [b('Content-Type'), b('text/html'), b('Content-Encoding'), b('gzip'), b('Set-Cookie'), b('a=1'), b('Set-Cookie'), b('b=2')],
    body,
    truncated: false,
  };
}

function batchFor(task: Task, at: number, n = 2): { entries: unknown[]; raw: Buffer; sent: ArchiveEntry[] } {
  const o = task.scope.origin;
  const sent: ArchiveEntry[] = [];
  for (let i = 0; i < n; i++) sent.push({ kind: 'response', exchange: exchange(`${o}/p${i}`, at, gzipSync(`<html>page ${i}</html>`)) });
  sent.push({ kind: 'revisit', exchange: exchange(`${o}/old`, at, Buffer.alloc(0), 304), profile: 'server-not-modified', refersTo: { uri: `${o}/old` } });
  const enc = encodeUploadBatch(sent);
  return { entries: enc.entries, raw: enc.raw, sent };
}

describe('the archive service', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function setup(): Promise<{ m: Manager; task: Task; clock: Clock; written: ArchiveEntry[][] }> {
    const t = tempDir();
    const clock = new Clock();
    const written: ArchiveEntry[][] = [];
    const m = await openManager(t.dir, clock, { archive: { append: async (e) => void written.push(e) } });
    cleanups.push(async () => {
      await m.close();
      t.cleanup();
    });
    await m.channels.add({ url: 'http://site.test/' });
    const [issued] = await m.tasks.issueDue();
    const task = issued!.task;
    expect(task.archive).toBe('full');
    // peerA holds the task from its first part on.
    clock.advance(1000);
    await m.ingest.ingest(upload(task, resultFor(task, [{ path: '/', body: 'v1' }], { final: false, at: clock.now() })), 'peerA');
    return { m, task, clock, written };
  }

  it('writes a holder\'s batch once, rebuilt with its own fields and the digests it checked', async () => {
    const { m, task, clock, written } = await setup();
    const { entries, raw, sent } = batchFor(task, clock.now());
    expect(await m.archive!.receive({ orderId: task.id, batch: 0, entries }, raw, 'peerA')).toBe('written');
    expect(await m.archive!.receive({ orderId: task.id, batch: 0, entries }, raw, 'peerA')).toBe('duplicate');
    expect(written.length).toBe(1);
    const got = written[0]!;
    expect(got.map((e) => e.kind)).toEqual(['response', 'response', 'revisit']);
    // The records the manager builds carry the block digests the volunteer's own records had.
    for (const [i, e] of got.entries()) {
      const mine = entryRecords(e)[0]!;
      const theirs = entryRecords(sent[i]!)[0]!;
      const digest = (r: typeof mine) => r.fields.find(([n]) => n === 'WARC-Block-Digest')![1];
      expect(digest(mine)).toBe(digest(theirs));
    }
    expect(m.counters.archiveBatches).toBe(1);
    expect(m.counters.archiveEntries).toBe(3);
  });

  it('refuses a peer that does not hold the task, an unknown task, and exchanges off the channel\'s origin or dates', async () => {
    const { m, task, clock, written } = await setup();
    const { entries, raw } = batchFor(task, clock.now());
    await expect(m.archive!.receive({ orderId: task.id, batch: 0, entries }, raw, 'peerB')).rejects.toThrow(/does not hold this task/);
    await expect(m.archive!.receive({ orderId: 'nope.1.1', batch: 0, entries }, raw, 'peerA')).rejects.toThrow(/unknown task/);
    const elsewhere = encodeUploadBatch([{ kind: 'response', exchange: exchange('http://other.test/', clock.now(), b('x')) }]);
    await expect(m.archive!.receive({ orderId: task.id, batch: 1, entries: elsewhere.entries }, elsewhere.raw, 'peerA')).rejects.toThrow(/not on http:\/\/site\.test/);
    const old = encodeUploadBatch([{ kind: 'response', exchange: exchange('http://site.test/', clock.now() - 86_400_000, b('x')) }]);
    await expect(m.archive!.receive({ orderId: task.id, batch: 2, entries: old.entries }, old.raw, 'peerA')).rejects.toThrow(/dated outside the task/);
    expect(written.length).toBe(0);
    expect(m.counters.archiveRefused).toBe(4);
    expect(m.counters.archiveDigestMismatches).toBe(0);
  });

  it('counts digest mismatches against the volunteer and refuses it after MAX_MISMATCHES', async () => {
    const { m, task, clock, written } = await setup();
    const good = batchFor(task, clock.now());
    // The first payload byte: after the first entry's request head and header lines.
    const first = (good.entries[0] as { exchange: { requestLength: number; headerLengths: number[] } }).exchange;
    const at = first.requestLength + first.headerLengths.reduce((a, n) => a + n, 0);
    for (let i = 0; i < MAX_MISMATCHES; i++) {
      const raw = Buffer.from(good.raw);
      raw[at] = raw[at]! ^ 0xff;
      await expect(m.archive!.receive({ orderId: task.id, batch: i, entries: good.entries }, raw, 'peerA')).rejects.toThrow(/payload digest does not match/);
    }
    expect(m.counters.archiveDigestMismatches).toBe(MAX_MISMATCHES);
    // Now even an honest batch from it is refused.
    await expect(m.archive!.receive({ orderId: task.id, batch: 9, entries: good.entries }, good.raw, 'peerA')).rejects.toThrow(UploadRefused);
    expect(written.length).toBe(0);
  });
});

describe('an uploaded batch, decoded', () => {
  const o = { origin: 'http://site.test', notBefore: 0, notAfter: Number.MAX_SAFE_INTEGER };
  const one = () => encodeUploadBatch([{ kind: 'response', exchange: exchange('http://site.test/a', 1000, b('payload')) }]);
  const entry = (e: unknown[]) => e[0] as { exchange: Record<string, unknown> };

  it('refuses a forged block digest, a response head changed in flight, and lengths that do not add up', () => {
    const forged = one();
    entry(forged.entries).exchange['blockDigest'] = 'sha1:' + 'A'.repeat(32);
    expect(() => decodeUploadBatch(forged.entries, forged.raw, o)).toThrow(/block digest does not match/);
    const status = one();
    entry(status.entries).exchange['status'] = 404;
    expect(() => decodeUploadBatch(status.entries, status.raw, o)).toThrow(UploadBatchError);
    const short = one();
    expect(() => decodeUploadBatch(short.entries, short.raw.subarray(1), o)).toThrow(/shorter than its entries say/);
    expect(() => decodeUploadBatch(short.entries, Buffer.concat([short.raw, b('x')]), o)).toThrow(/more bytes than its entries say/);
    const odd = one();
    entry(odd.entries).exchange['headerLengths'] = [1, 2, 3];
    expect(() => decodeUploadBatch(odd.entries, odd.raw, o)).toThrow(/malformed archive batch/);
    const big = one();
    entry(big.entries).exchange['bodyLength'] = 1e9;
    expect(() => decodeUploadBatch(big.entries, big.raw, o)).toThrow(/malformed archive batch/);
  });

  it('never lets a value from the volunteer end a WARC field and start a forged one', () => {
    const evil = encodeUploadBatch([{ kind: 'response', exchange: exchange('http://site.test/a\r\nWARC-Type: forged', 1000, b('p')) }]);
    // The URL parser drops the CR LF: whatever reaches a field is one line.
    const [e] = decodeUploadBatch(evil.entries, evil.raw, o);
    const rec = serialise(entryRecords(e!)[0]!);
    const head = rec.subarray(0, rec.indexOf('\r\n\r\n')).toString('latin1').split('\r\n');
    expect(head.filter((l) => l.startsWith('WARC-Type:'))).toEqual(['WARC-Type: response']);
    expect(head).toContain('WARC-Target-URI: http://site.test/a WARC-Type: forged');
  });
});

describe('the archive protocol', () => {
  let crawler: VolcrawlLibp2p;
  let storage: VolcrawlLibp2p;
  const got: { header: ArchiveHeader; raw: Buffer; from: string }[] = [];
  beforeAll(async () => {
    crawler = await loopbackLibp2p();
    storage = await loopbackLibp2p();
    const receiver = new ArchiveReceiver({
      libp2p: storage,
      onBatch: async (header, raw, from) => {
        if (header.orderId === 'refuse-me') throw new Error('no such task');
        got.push({ header, raw, from });
      },
    });
    await receiver.start();
    await crawler.peerStore.merge(storage.peerId, { multiaddrs: storage.getMultiaddrs() });
  }, 60_000);
  afterAll(async () => {
    await crawler?.stop();
    await storage?.stop();
  });
  const endpoint = () => ({ peer: storage.peerId.toString(), protocol: '/volcrawl/upload/1.0.0', addrs: storage.getMultiaddrs().map(String) });

  /** One raw exchange on the protocol, as a hostile crawler could write it. */
  async function rawExchange(header: unknown, body: Uint8Array): Promise<unknown> {
    const stream = await crawler.dialProtocol(storage.peerId, ARCHIVE_PROTOCOL);
    const lp = lpStream(stream, { maxDataLength: 32 * 1024 * 1024 });
    await lp.write(new TextEncoder().encode(JSON.stringify(header)));
    await lp.write(body);
    const reply = JSON.parse(new TextDecoder().decode((await lp.read()).subarray())) as unknown;
    await stream.close();
    return reply;
  }

  it('delivers a batch with the sender checked, and relays a refusal', async () => {
    const enc = one();
    await uploadArchiveBatch(crawler, endpoint(), { orderId: 't.1.1', batch: 0, entries: enc.entries, raw: enc.raw });
    expect(got.length).toBe(1);
    expect(got[0]!.from).toBe(crawler.peerId.toString());
    expect(got[0]!.raw.equals(enc.raw)).toBe(true);
    await expect(uploadArchiveBatch(crawler, endpoint(), { orderId: 'refuse-me', batch: 0, entries: enc.entries, raw: enc.raw })).rejects.toThrow(ArchiveRefusedError);
  }, 60_000);

  it('refuses a gzip bomb, bytes that inflate to another length, and a forged sender', async () => {
    const enc = one();
    const header = { orderId: 't.1.1', crawler: crawler.peerId.toString(), batch: 1, rawBytes: enc.raw.length, entries: enc.entries };
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 });
    expect(await rawExchange(header, bomb)).toMatchObject({ ok: false, reason: expect.stringMatching(/do not inflate/) });
    expect(await rawExchange({ ...header, rawBytes: enc.raw.length + 1 }, gzipSync(enc.raw))).toMatchObject({ ok: false, reason: expect.stringMatching(/inflate to/) });
    expect(await rawExchange({ ...header, crawler: storage.peerId.toString() }, gzipSync(enc.raw))).toMatchObject({ ok: false, reason: expect.stringMatching(/does not match the sender/) });
    expect(await rawExchange({ ...header, rawBytes: 1e12 }, gzipSync(enc.raw))).toMatchObject({ ok: false, reason: 'malformed archive header' });
    expect(got.length).toBe(1);
  }, 60_000);

  function one() {
    return encodeUploadBatch([{ kind: 'response', exchange: exchange('http://site.test/a', 1000, b('payload')) }]);
  }
});
