// A volunteer is not turned into a scanner of its owner's LAN (issue #16;
// src/dht/dial-guard.ts): a stack built as a volunteer's outside --lan refuses
// to dial private and loopback addresses a peer advertises, but dials those
// its owner gave (bootstrap) and, once a host connects to it from an address,
// that address.
// Real libp2p nodes on loopback: 127.0.0.1 stands for the owner's LAN.
import { afterAll, describe, expect, it } from 'vitest';
import { generateKeyPair } from '@libp2p/crypto/keys';
import { createVolcrawlLibp2p, type VolcrawlLibp2p } from '../../src/dht/libp2p.js';
import type { PrivateDialGuard } from '../../src/dht/dial-guard.js';
import { createPunchNode, type PunchNode } from '../../testbed/nat/holepunch/node.js';
import { waitFor } from '../../testbed/net/harness.js';

const lo = ['/ip4/127.0.0.1/tcp/0'];
const volunteer = async (allow: string[]): Promise<VolcrawlLibp2p> =>
  createVolcrawlLibp2p({ privateKey: await generateKeyPair('Ed25519'), listen: lo, nat: { guardPrivateDials: { allow }, relayReservations: 0, holePunch: false } });
const guardOf = (n: VolcrawlLibp2p) => (n.services as unknown as { dialGuard: PrivateDialGuard }).dialGuard;

describe("a volunteer does not dial its owner's LAN on a peer's word", () => {
  const nodes: { stop(): Promise<void> | void }[] = [];
  afterAll(async () => {
    await Promise.all(nodes.map(async (n) => n.stop()));
  });

  it('refuses a LAN address a peer advertises; dials the owner-given one and one a LAN host connects from', async () => {
    const lanHost: PunchNode = await createPunchNode({ listen: lo, holePunch: { auto: false } });
    nodes.push(lanHost);
    const at = lanHost.getMultiaddrs()[0]!;

    const v = await volunteer([]);
    nodes.push(v);
    await expect(v.dial(at, { signal: AbortSignal.timeout(10_000) })).rejects.toThrow();
    expect(guardOf(v).refused).toBeGreaterThan(0);
    expect(lanHost.getConnections(v.peerId)).toHaveLength(0);

    // The owner named it (a bootstrap address): dialled.
    const owned = await volunteer([at.toString()]);
    nodes.push(owned);
    expect((await owned.dial(at, { signal: AbortSignal.timeout(10_000) })).status).toBe('open');

    // A host connects to the guarded volunteer from 127.0.0.1: that address is on our LAN now, and a new dial there passes.
    const printer: PunchNode = await createPunchNode({ listen: lo, holePunch: { auto: false } });
    nodes.push(printer);
    await lanHost.dial(v.getMultiaddrs()[0]!, { signal: AbortSignal.timeout(10_000) });
    await waitFor(() => v.getConnections(lanHost.peerId).some((c) => c.status === 'open'), 10_000, 'the inbound connection');
    expect((await v.dial(printer.getMultiaddrs()[0]!, { signal: AbortSignal.timeout(10_000) })).status).toBe('open');
  }, 60_000);
});
