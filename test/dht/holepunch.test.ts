// The hole punch's parts that need no NAT: what the observers' answers say
// about a NAT, the punch verdict both sides reach, and the coordination
// exchange over a real (in-memory) libp2p stream pair, including peers that
// send garbage, too much, or nothing. The punch itself runs through real NATs
// in test/nat/holepunch.test.ts.
import { describe, expect, it } from 'vitest';
import { lpStream, streamPair } from '@libp2p/utils';
import { classifyMapping } from '../../src/dht/holepunch/mapping.js';
import { coordinate, punchPlan, PunchError, refuse, respond, type PunchOffer } from '../../src/dht/holepunch/coordination.js';
import { isDialableEndpoint, tcpEndpointOf } from '../../src/dht/holepunch/endpoint.js';
import { multiaddr } from '@multiformats/multiaddr';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { createLibp2p } from 'libp2p';
import { tcp } from '@libp2p/tcp';
import { noise } from '@chainsafe/libp2p-noise';
import { yamux } from '@chainsafe/libp2p-yamux';
import { generateKeyPair } from '@libp2p/crypto/keys';
import { peerIdFromPrivateKey } from '@libp2p/peer-id';
import type { PeerId } from '@libp2p/interface';
import { isPeerIdMismatch, upgradeSocket } from '../../src/dht/holepunch/upgrade.js';
import { askWitness } from '../../src/dht/holepunch/observed-addr.js';
import type { HolePunchComponents } from '../../src/dht/holepunch/index.js';
import { createPunchNode, type PunchNode } from '../../testbed/nat/holepunch/node.js';

const A = { ip: '51.0.0.2', port: 40001 };
const B = { ip: '61.0.0.2', port: 40002 };
const opts = { timeoutMs: 5_000, allowPrivateAddrs: false, punchThroughSymmetric: false };

async function reason(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (err instanceof PunchError) return err.reason;
    throw err;
  }
  throw new Error('expected a PunchError');
}

describe('the NAT type from the observers', () => {
  it('no answer: unknown, no mapping; one observer: unknown but its mapping; two agreeing: cone; two differing: symmetric', () => {
    expect(classifyMapping([])).toMatchObject({ natType: 'unknown', mapping: null });
    expect(classifyMapping([{ observer: 'o1', seen: A }])).toMatchObject({ natType: 'unknown', mapping: A });
    expect(classifyMapping([{ observer: 'o1', seen: A }, { observer: 'o2', seen: { ...A } }])).toMatchObject({ natType: 'cone', mapping: A });
    expect(classifyMapping([{ observer: 'o1', seen: A }, { observer: 'o2', seen: { ...A, port: 40999 } }])).toMatchObject({ natType: 'symmetric' });
    // Another address (a multi-homed NAT pool) counts as another mapping too.
    expect(classifyMapping([{ observer: 'o1', seen: A }, { observer: 'o2', seen: { ...A, ip: '51.0.0.3' } }]).natType).toBe('symmetric');
  });
});

describe('endpoints', () => {
  it('reads the TCP ip:port of a direct address and nothing from relayed or non-TCP ones', () => {
    expect(tcpEndpointOf(multiaddr('/ip4/51.0.0.2/tcp/4001/p2p/12D3KooWLAwdDAvqLdhoxcg4gi4isW6orPym5N3JtZ2kPGsGzt4x'))).toEqual({ ip: '51.0.0.2', port: 4001 });
    expect(tcpEndpointOf(multiaddr('/ip4/11.0.0.2/tcp/4001/p2p/12D3KooWLAwdDAvqLdhoxcg4gi4isW6orPym5N3JtZ2kPGsGzt4x/p2p-circuit'))).toBeNull();
    expect(tcpEndpointOf(multiaddr('/ip4/51.0.0.2/udp/4001/quic-v1'))).toBeNull();
  });

  it('a private, loopback, CGN or unspecified address is not dialable unless private addresses are allowed', () => {
    for (const ip of ['192.168.1.2', '10.0.0.1', '127.0.0.1', '100.64.3.2', '169.254.1.1', '0.0.0.0', '::1', 'fd00::1', '::']) {
      expect(isDialableEndpoint({ ip, port: 80 }, false), ip).toBe(false);
    }
    expect(isDialableEndpoint({ ip: '192.168.1.2', port: 80 }, true)).toBe(true);
    expect(isDialableEndpoint(A, false)).toBe(true);
  });
});

describe('the punch verdict', () => {
  const cone = (mapping = A): PunchOffer => ({ mapping, nat: 'cone' });
  it('punches to the peer mapping when both are known and neither NAT is symmetric', () => {
    expect(punchPlan(cone(A), cone(B), opts)).toEqual(B);
    expect(punchPlan({ mapping: A, nat: 'unknown' }, cone(B), opts)).toEqual(B);
  });

  it('names why not: a missing mapping, a symmetric NAT on either side, a private target', () => {
    const why = (mine: PunchOffer, theirs: PunchOffer, o = opts) => {
      try {
        punchPlan(mine, theirs, o);
        return 'punch';
      } catch (err) {
        return (err as PunchError).reason;
      }
    };
    expect(why({ mapping: null, nat: 'unknown' }, cone(B))).toBe('no-mapping');
    expect(why(cone(A), { mapping: null, nat: 'unknown' })).toBe('peer-no-mapping');
    expect(why({ mapping: A, nat: 'symmetric' }, cone(B))).toBe('symmetric-nat');
    expect(why(cone(A), { mapping: B, nat: 'symmetric' })).toBe('peer-symmetric-nat');
    expect(why(cone(A), cone({ ip: '192.168.1.7', port: 22 }))).toBe('bad-address');
    expect(why(cone(A), cone({ ip: '192.168.1.7', port: 22 }), { ...opts, allowPrivateAddrs: true })).toBe('punch');
    expect(why(cone(A), { mapping: B, nat: 'symmetric' }, { ...opts, punchThroughSymmetric: true })).toBe('punch');
  });
});

describe('the coordination exchange', () => {
  it('both sides learn the other mapping; the coordinator waits half the round trip, the responder not at all', async () => {
    const [out, inb] = await streamPair();
    const [c, r] = await Promise.all([coordinate(out, { mapping: A, nat: 'cone' }, opts), respond(inb, () => ({ mapping: B, nat: 'cone' }), opts)]);
    expect(c.target).toEqual(B);
    expect(r).toEqual({ target: A, delayMs: 0 });
    expect(c.delayMs).toBeGreaterThanOrEqual(0);
  });

  it('a symmetric NAT stops both sides before any connect, each naming its side', async () => {
    const [out, inb] = await streamPair();
    const [c, r] = await Promise.all([reason(coordinate(out, { mapping: A, nat: 'symmetric' }, opts)), reason(respond(inb, () => ({ mapping: B, nat: 'cone' }), opts))]);
    expect([c, r]).toEqual(['symmetric-nat', 'peer-symmetric-nat']);
  });

  it('a busy responder refuses, and the coordinator says so', async () => {
    const [out, inb] = await streamPair();
    const [c] = await Promise.all([reason(coordinate(out, { mapping: A, nat: 'cone' }, opts)), refuse(inb, 5_000)]);
    expect(c).toBe('refused');
  });

  it('a peer that sends garbage, an unknown field, an oversized message or the wrong message is refused as bad-message', async () => {
    const bad: Uint8Array[] = [
      new TextEncoder().encode('{not json'),
      new TextEncoder().encode(JSON.stringify({ type: 'connect', mapping: A, nat: 'cone', extra: 1 })),
      new TextEncoder().encode(JSON.stringify({ type: 'connect', mapping: { ip: '51.0.0.2', port: 70_000 }, nat: 'cone' })),
      new TextEncoder().encode(JSON.stringify({ type: 'sync' })),
      new Uint8Array(1024).fill(0x20),
    ];
    for (const msg of bad) {
      const [out, inb] = await streamPair();
      const lp = lpStream(out);
      const [, got] = await Promise.all([lp.write(msg).catch(() => undefined), reason(respond(inb, () => ({ mapping: B, nat: 'cone' }), opts))]);
      expect(got, new TextDecoder().decode(msg.subarray(0, 60))).toBe('bad-message');
    }
  });

  it("a target no observer witnesses (not where the peer's own punch port is seen) stops both sides before any connect", async () => {
    const [out, inb] = await streamPair();
    const asked: unknown[] = [];
    const no = async (t: unknown) => (asked.push(t), false);
    const [c, r] = await Promise.all([reason(coordinate(out, { mapping: A, nat: 'cone' }, { ...opts, witness: no })), reason(respond(inb, () => ({ mapping: B, nat: 'cone' }), { ...opts, witness: no }))]);
    expect([c, r]).toEqual(['unwitnessed', 'unwitnessed']);
    // Each side checked the other's offer: where its own SYNs would go.
    expect(asked).toHaveLength(2);
    expect(asked).toEqual(expect.arrayContaining([A, B]));
    const [out2, inb2] = await streamPair();
    const yes = async () => true;
    const [c2, r2] = await Promise.all([coordinate(out2, { mapping: A, nat: 'cone' }, { ...opts, witness: yes }), respond(inb2, () => ({ mapping: B, nat: 'cone' }), { ...opts, witness: yes })]);
    expect([c2.target, r2.target]).toEqual([B, A]);
  });

  it('a responder that never answers fails the coordination at its deadline', async () => {
    const [out] = await streamPair();
    expect(await reason(coordinate(out, { mapping: A, nat: 'cone' }, { ...opts, timeoutMs: 300 }))).toBe('coordination-failed');
  });
});

describe('the punch port and the upgrade on loopback (real libp2p nodes)', () => {
  const lo = ['/ip4/127.0.0.1/tcp/0'];
  const tcpAddr = (n: PunchNode) => n.getMultiaddrs().find((a) => a.toString().startsWith('/ip4/127.0.0.1/tcp/'))!;

  it('two observers report the punch port as it leaves the host (not the listen port)', async () => {
    const [o1, o2] = await Promise.all([createPunchNode({ listen: lo }), createPunchNode({ listen: lo })]);
    const node = await createPunchNode({ listen: lo, holePunch: { observers: [tcpAddr(o1).toString(), tcpAddr(o2).toString()], allowPrivateAddrs: true } });
    try {
      const hp = node.services.holePunch;
      await until(() => hp.stats().observers === 2);
      const s = hp.stats();
      expect(s).toMatchObject({ natType: 'cone', mapping: `127.0.0.1:${s.punchPort}`, observers: 2 });
      expect(hp.mapping().observations.map((o) => o.observer).sort()).toEqual([o1.peerId.toString(), o2.peerId.toString()].sort());
      // The punch port is not libp2p's listen port: a listener cannot share its port with outgoing connections.
      expect(node.getMultiaddrs().some((a) => a.toString().includes(`/tcp/${s.punchPort}/`))).toBe(false);
      // The observer witnesses the node's punch port (and nothing else) to a third peer asking before a punch.
      const asker = await createPunchNode({ listen: lo });
      try {
        const conn = await asker.dial(tcpAddr(o1));
        const me = node.peerId.toString();
        expect(await askWitness(conn, me, { ip: '127.0.0.1', port: s.punchPort }, 5_000)).toBe(true);
        expect(await askWitness(conn, me, { ip: '127.0.0.1', port: s.punchPort === 65_535 ? 1 : s.punchPort + 1 }, 5_000)).toBe(false);
        expect(await askWitness(conn, asker.peerId.toString(), { ip: '127.0.0.1', port: s.punchPort }, 5_000)).toBe(false);
      } finally {
        await asker.stop();
      }
      // An observer that goes away is forgotten, and the NAT type falls back to unknown.
      await o2.stop();
      await until(() => hp.stats().observers === 1);
      expect(hp.stats().natType).toBe('unknown');
    } finally {
      await Promise.all([node.stop(), o1.stop(), o2.stop()]);
    }
  }, 30_000);

  it('a punched socket is upgraded only if the expected peer answers (Noise checks the identity)', async () => {
    const grabbed: Record<string, HolePunchComponents> = {};
    const make = (name: string) => createLibp2p({ addresses: { listen: lo }, transports: [tcp()], connectionEncrypters: [noise()], streamMuxers: [yamux()], services: { grab: (c: HolePunchComponents) => void (grabbed[name] = c) } });
    const [a, b] = await Promise.all([make('a'), make('b')]);
    const stranger = peerIdFromPrivateKey(await generateKeyPair('Ed25519'));
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      const pair = async (): Promise<[Socket, Socket]> => {
        const accepted = new Promise<Socket>((r) => server.once('connection', r));
        const client = connect({ host: '127.0.0.1', port });
        await new Promise((r) => client.once('connect', r));
        return [client, await accepted];
      };
      const up = (who: 'a' | 'b', socket: Socket, remotePeer: PeerId, initiator: boolean) =>
        upgradeSocket(grabbed[who]!.upgrader, grabbed[who]!.logger, socket, { remotePeer, initiator, signal: AbortSignal.timeout(10_000) });

      // The right peers: one connection each way, streams open (yamux agrees on who is the client).
      let [s1, s2] = await pair();
      const [ca, cb] = await Promise.all([up('a', s1, b.peerId, true), up('b', s2, a.peerId, false)]);
      expect([ca.remotePeer.toString(), cb.remotePeer.toString(), ca.direction, cb.direction]).toEqual([b.peerId.toString(), a.peerId.toString(), 'outbound', 'inbound']);
      await ca.close();

      // a expects a stranger, b answers: a refuses with a peer-id mismatch.
      [s1, s2] = await pair();
      const [ra] = await Promise.allSettled([up('a', s1, stranger, true), up('b', s2, a.peerId, false)]);
      expect(ra.status).toBe('rejected');
      expect(isPeerIdMismatch((ra as PromiseRejectedResult).reason), String((ra as PromiseRejectedResult).reason)).toBe(true);
    } finally {
      server.close();
      await Promise.all([a.stop(), b.stop()]);
    }
  }, 30_000);
});

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !cond(); i++) await new Promise((r) => setTimeout(r, 50));
  expect(cond()).toBe(true);
}
