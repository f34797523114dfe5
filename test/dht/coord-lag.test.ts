// A coordinate probe taken while either side's event loop stalled is dropped:
// it neither feeds Vivaldi nor counts toward the pace. Stalls are injected
// through the service's lag source (no real stall, no timing).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VolcrawlLibp2p } from '../../src/dht/libp2p.js';
import { loopbackLibp2p } from '../../testbed/net/loopback.js';
import { CoordService, type LagSource } from '../../src/dht/coord-protocol.js';
import { PeerTable } from '../../src/dht/peers.js';
import { LoopLag, VivaldiNode } from '../../src/coords/index.js';
import { createRng } from '../../src/rng.js';

/** A lag source whose tick, when awaited, records a stall of `stallMs()` ending now. */
function fakeLag(stallMs: () => number): LagSource {
  const lag = new LoopLag();
  return {
    lag,
    nextTick: async () => lag.record(performance.now(), stallMs()),
    release: () => undefined,
  };
}

describe('coordinate probes on a stalled event loop', () => {
  let a: VolcrawlLibp2p;
  let b: VolcrawlLibp2p;
  beforeAll(async () => {
    a = await loopbackLibp2p();
    b = await loopbackLibp2p();
    await a.dial(b.getMultiaddrs()[0]!);
  });
  afterAll(async () => {
    await a.stop();
    await b.stop();
  });

  async function probeOnce(prober: LagSource, responder: LagSource) {
    const vivaldi = new VivaldiNode({}, createRng(1));
    const peers = new PeerTable();
    const sa = new CoordService({ libp2p: a, peers, vivaldi, crawler: true, rng: createRng(2), lag: prober });
    const sb = new CoordService({ libp2p: b, peers: new PeerTable(), vivaldi: new VivaldiNode({}, createRng(3)), crawler: true, rng: createRng(4), probeDelay: () => 40, lag: responder });
    await sb.start();
    try {
      await sa.probe(b.peerId.toString());
      return { samples: sa.samples, spoiled: sa.probesSpoiled, judged: sa.pace.samples, rtt: peers.get(b.peerId.toString())?.rttMs };
    } finally {
      await sb.stop();
      await sa.stop();
    }
  }

  it('keeps a sample taken on calm loops', async () => {
    const r = await probeOnce(fakeLag(() => 0), fakeLag(() => 0));
    expect(r).toMatchObject({ samples: 1, spoiled: 0, judged: 1 });
    expect(r.rtt).toBeGreaterThanOrEqual(39);
  });

  it("drops a sample our own loop's stall spoiled: no Vivaldi update, no pace judgement, no RTT noted", async () => {
    const r = await probeOnce(fakeLag(() => 5_000), fakeLag(() => 0));
    expect(r).toMatchObject({ samples: 0, spoiled: 1, judged: 0, rtt: undefined });
  });

  it("drops a sample the responder's stall spoiled (it says so in its reply)", async () => {
    const responder = fakeLag(() => 0);
    // The responder's loop stalls around the time it reads the request (a
    // wide window, so that a slow start on a loaded machine still falls in it).
    responder.lag.record(performance.now() + 60_000, 120_000);
    const r = await probeOnce(fakeLag(() => 0), responder);
    expect(r).toMatchObject({ samples: 0, spoiled: 1, judged: 0 });
  });
});
