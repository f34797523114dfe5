// The hole punch starts even when identify fails over the relay (issue #16; the
// holepunch test's forced-symmetric case saw no punch event in 60 s under CI
// load). The punch starts from identify's topology on the inbound side of a
// relayed connection, and identify through a relay gives up after 5 s — on a
// loaded machine it can, and then nothing started the punch. Now an inbound
// relayed connection the topology has not handled within `identifyGraceMs`
// starts it anyway. Real libp2p nodes on loopback: A holds a reservation and
// has no listener; B reaches it over the relay, and B's identify refuses to run
// on relayed connections, so A's identify of B fails for sure. A must still
// start a punch with B (it ends in an event: here a failure, as loopback has no
// observers to map the punch port).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { multiaddr } from '@multiformats/multiaddr';
import { createPunchNode, type PunchNode } from '../../testbed/nat/holepunch/node.js';
import { waitFor } from '../../testbed/net/harness.js';

const lo = ['/ip4/127.0.0.1/tcp/0'];

describe('a relayed peer whose identify fails is still punched', () => {
  let relay: PunchNode;
  let a: PunchNode;
  let b: PunchNode;
  const events: { ev: string; peer: string }[] = [];
  const identified: string[] = [];

  beforeAll(async () => {
    relay = await createPunchNode({ listen: lo, relayServer: true, holePunch: { auto: false } });
    const relayAddr = relay.getMultiaddrs().find((m) => m.toString().startsWith('/ip4/127.0.0.1/tcp/'))!.toString();
    a = await createPunchNode({ listen: [], reserve: [relayAddr], holePunch: { identifyGraceMs: 500, allowPrivateAddrs: true, requireWitness: false, maxAttempts: 1, coordinationTimeoutMs: 2000 } });
    b = await createPunchNode({ listen: lo, holePunch: { auto: false }, identify: { runOnLimitedConnection: false } });
    a.services.holePunch.addEventListener('punch:success', (e) => events.push({ ev: 'success', peer: e.detail.peer }));
    a.services.holePunch.addEventListener('punch:failure', (e) => events.push({ ev: 'failure', peer: e.detail.peer }));
    a.addEventListener('peer:identify', (e) => identified.push(e.detail.peerId.toString()));
    await waitFor(() => a.getMultiaddrs().some((m) => m.toString().includes('/p2p-circuit')), 60_000, 'A to hold a reservation');
  }, 90_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop(), relay?.stop()]);
  });

  it('the inbound side starts the punch after the grace period, without identify', async () => {
    const circuit = a.getMultiaddrs().find((m) => m.toString().includes('/p2p-circuit'))!;
    expect((await b.dial(multiaddr(circuit.toString()))).limits).toBeDefined();
    const peer = b.peerId.toString();
    await waitFor(() => events.some((e) => e.peer === peer), 60_000, 'a punch event about B on A');
    expect(identified).not.toContain(peer); // identify never got through: the fallback started it
  }, 90_000);
});
