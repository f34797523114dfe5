// Protocol-level checks between two or three real libp2p nodes on loopback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPair } from '@libp2p/crypto/keys';
import { peerIdFromPrivateKey } from '@libp2p/peer-id';
import type { VolcrawlLibp2p } from '../../src/dht/libp2p.js';
import { loopbackLibp2p } from '../../testbed/net/loopback.js';
import { UploadReceiver, uploadResult, UploadRefusedError, type UploadMessage } from '../../src/dht/upload.js';
import { PeerRateLimiter } from '../../src/dht/rate-limit.js';
import { CoordService } from '../../src/dht/coord-protocol.js';
import { PeerTable } from '../../src/dht/peers.js';
import { AppCoordinate, VivaldiNode } from '../../src/coords/index.js';
import { createRng } from '../../src/rng.js';

describe('rate limiter', () => {
  it('allows a burst, then the refill rate, per peer', () => {
    let t = 0;
    const rl = new PeerRateLimiter({ perSecond: 2, burst: 3 }, () => t);
    expect([rl.take('a'), rl.take('a'), rl.take('a'), rl.take('a')]).toEqual([true, true, true, false]);
    expect(rl.take('b')).toBe(true);
    t = 500;
    expect(rl.take('a')).toBe(true);
    expect(rl.take('a')).toBe(false);
  });
});

describe('upload and coordinate protocols', () => {
  let crawler: VolcrawlLibp2p;
  let storage: VolcrawlLibp2p;
  const got: UploadMessage[] = [];
  let refuse = false;
  beforeAll(async () => {
    crawler = await loopbackLibp2p();
    storage = await loopbackLibp2p();
    await new UploadReceiver({
      libp2p: storage,
      onUpload: (m) => {
        if (refuse) throw new Error('disk full');
        got.push(m);
      },
    }).start();
  });
  afterAll(async () => {
    await crawler.stop();
    await storage.stop();
  });

  it('uploads a result to the storage endpoint the task names and waits for its ack', async () => {
    const endpoint = { peer: storage.peerId.toString(), protocol: '/volcrawl/upload/1.0.0', addrs: storage.getMultiaddrs().map(String) };
    await uploadResult(crawler, endpoint, { orderId: 'o1', host: 'a.example', hostRttMs: 42, result: { taskId: 't1', part: 0, final: true, status: 'completed' } });
    expect(got).toHaveLength(1);
    expect(got[0]!.crawler).toBe(crawler.peerId.toString());
    expect(got[0]!.hostRttMs).toBe(42);
    refuse = true;
    await expect(uploadResult(crawler, endpoint, { orderId: 'o2', host: 'a.example', hostRttMs: null, result: { taskId: 't2', part: 0, final: true, status: 'completed' } })).rejects.toThrow(UploadRefusedError);
    refuse = false;
  });

  it('fails cleanly when the storage peer is unreachable', async () => {
    const ghost = peerIdFromPrivateKey(await generateKeyPair('Ed25519')).toString();
    await expect(
      uploadResult(crawler, { peer: ghost, protocol: '/volcrawl/upload/1.0.0', addrs: ['/ip4/127.0.0.1/tcp/1'] }, { orderId: 'o3', host: 'a', hostRttMs: null, result: { taskId: 't3', part: 0, final: true, status: 'completed' } }, { attempts: 2, timeoutMs: 2000 }),
    ).rejects.toThrow(/upload/);
  });

  it('a coordinate probe measures the imposed delay and carries the remote coordinate', async () => {
    const peersA = new PeerTable();
    const peersB = new PeerTable();
    const a = new CoordService({ libp2p: crawler, peers: peersA, vivaldi: new VivaldiNode({}, createRng(1)), crawler: true, rng: createRng(2), load: () => ({ running: 1, queued: 0, free: 3 }) });
    const b = new CoordService({ libp2p: storage, peers: peersB, vivaldi: new VivaldiNode({}, createRng(3)), crawler: true, rng: createRng(4), probeDelay: () => 80, load: () => ({ running: 0, queued: 0, free: 4 }) });
    await a.start();
    await b.start();
    await crawler.dial(storage.getMultiaddrs()[0]!);
    const rtt = await a.probe(storage.peerId.toString());
    expect(rtt).toBeGreaterThanOrEqual(79);
    expect(peersA.get(storage.peerId.toString())?.coord).toBeDefined();
    expect(peersA.get(storage.peerId.toString())?.load?.free).toBe(4);
    expect(peersB.get(crawler.peerId.toString())?.load?.running).toBe(1);
    await a.bye(storage.peerId.toString());
    expect(peersB.get(crawler.peerId.toString())?.down).toBe(true);
    await a.stop();
    await b.stop();
  });

  it('a probe reply carries the published coordinate for the table and the Vivaldi one for the prober\'s step', async () => {
    const peersA = new PeerTable();
    const peersB = new PeerTable();
    const vivA = new VivaldiNode({}, createRng(1));
    vivA.coord.vec.set([100, 0]);
    vivA.coord.error = 0.5;
    const vivB = new VivaldiNode({}, createRng(3));
    vivB.coord.error = 0.5;
    // B published the origin (a full window there); its Vivaldi coordinate has since wandered to (50, 0).
    const app = new AppCoordinate({ enabled: true, windowSize: 2 });
    app.observe(vivB.coord, 0);
    app.observe(vivB.coord, 1);
    vivB.coord.vec.set([50, 0]);
    // Rounds a minute apart: neither probes on its own during the test (their first round finds no peer yet).
    const a = new CoordService({ libp2p: crawler, peers: peersA, vivaldi: vivA, crawler: true, rng: createRng(2), lag: false, intervalMs: 60_000 });
    const b = new CoordService({ libp2p: storage, peers: peersB, vivaldi: vivB, app, crawler: true, rng: createRng(4), probeDelay: () => 80, lag: false, intervalMs: 60_000 });
    // Closed from the previous test, so their first rounds (timers of 0 ms, run before the one below) find no peer.
    await crawler.hangUp(storage.peerId);
    await a.start();
    await b.start();
    await new Promise((r) => setTimeout(r, 20));
    await crawler.dial(storage.getMultiaddrs()[0]!);
    expect(b.published?.vec[0]).toBe(0);
    await a.probe(storage.peerId.toString());
    // The table (what routers rank and checks compare) holds the published coordinate…
    expect(Array.from(peersA.get(storage.peerId.toString())!.coord!.vec)).toEqual([0, 0]);
    // …while A's Vivaldi step used (50, 0): predicted 50 ms + heights < 80 ms measured pushes A away from it, beyond 100
    // (against the origin, 100 ms predicted > 80 would have pulled it in).
    expect(vivA.coord.vec[0]).toBeGreaterThan(100);
    // An info reply carries the published coordinate alone.
    const info = await a.info(storage.peerId.toString());
    expect(info.coord?.vec).toEqual([0, 0]);
    expect(info.sys).toBeUndefined();
    await a.stop();
    await b.stop();
  });
});
