// Relay limits (issue #16): a relay built as volcrawl builds it (src/dht/nat.ts
// through createVolcrawlLibp2p) refuses reservations beyond its per-IP share,
// however many peer ids ask; libp2p's own per-connection byte limit cuts a
// relayed connection that carries more; and volcrawl's byte budget per
// reservation refuses circuits once the period's budget is spent (each charged
// the per-connection limit). On loopback every client comes from 127.0.0.1:
// one host, many peer ids.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPair } from '@libp2p/crypto/keys';
import { multiaddr } from '@multiformats/multiaddr';
import { createVolcrawlLibp2p, type VolcrawlLibp2p } from '../../src/dht/libp2p.js';
import { VOLUNTEER_RELAY_LIMITS } from '../../src/dht/nat.js';
import type { RelayGuard } from '../../src/dht/relay-guard.js';
import { createPunchNode, type PunchNode } from '../../testbed/nat/holepunch/node.js';
import { waitFor } from '../../testbed/net/harness.js';

const SINK = '/volcrawl-test/sink/1.0.0';
/** Three circuits' worth (at the 64 KiB per-connection limit) per reservation and period. */
const BUDGET = 3 * 64 * 1024;

describe('relay limits', () => {
  let relay: VolcrawlLibp2p;
  const clients: PunchNode[] = [];
  const circuitOf = (n: PunchNode) => n.getMultiaddrs().find((m) => m.toString().includes('/p2p-circuit'));

  beforeAll(async () => {
    relay = await createVolcrawlLibp2p({
      privateKey: await generateKeyPair('Ed25519'),
      listen: ['/ip4/127.0.0.1/tcp/0'],
      allowPrivateAddrs: true,
      nat: { relayServer: { ...VOLUNTEER_RELAY_LIMITS, maxReservationsPerIp: 2, dataLimitBytes: 64 * 1024, budgetPerReservationBytes: BUDGET }, relayReservations: 0, holePunch: false, lan: true },
    });
    const at = relay.getMultiaddrs()[0]!.toString();
    for (let i = 0; i < 3; i++) clients.push(await createPunchNode({ listen: ['/ip4/127.0.0.1/tcp/0'], reserve: [at], holePunch: { auto: false } }));
  }, 60_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.stop()));
    await relay?.stop();
  });

  it('three peer ids from one IP: two reservations granted, the third refused', async () => {
    const guard = (relay.services as unknown as { relayGuard: RelayGuard }).relayGuard;
    await waitFor(() => clients.filter((c) => circuitOf(c) !== undefined).length === 2 && guard.refused > 0, 60_000, 'two reservations and a refusal');
    expect(guard.heldBy('127.0.0.1')).toBe(2);
    expect(clients.filter((c) => circuitOf(c) === undefined)).toHaveLength(1);
  }, 90_000);

  it('a relayed connection that carries more than its byte limit is cut', async () => {
    const [a, b] = clients.filter((c) => circuitOf(c) !== undefined);
    // A sink on A that counts what arrives over the relay.
    let received = 0;
    await a!.handle(
      SINK,
      async (stream) => {
        for await (const chunk of stream) received += chunk.byteLength;
      },
      { runOnLimitedConnection: true },
    );
    const conn = await clients.find((c) => c !== a && c !== b)!.dial(multiaddr(circuitOf(a!)!.toString()));
    expect(conn.limits).toBeDefined();
    const stream = await conn.newStream(SINK, { runOnLimitedConnection: true });
    // First prove the relay carries data (a cut racing the receiver's reads can
    // otherwise discard everything that arrived: received 0 in one CI run).
    stream.send(new Uint8Array(1024));
    await waitFor(() => received > 0, 30_000, 'the first kilobyte over the relay');
    // Then 1 KiB chunks until the relay's 64 KiB limit cuts the connection. The
    // bound only ends the loop if the relay never cuts: the sender's buffers and
    // the streams' windows let a sender queue far past 64 KiB before the cut
    // reaches it (a clean-clone CI run at load ≈ 10 queued the whole 1 MiB of
    // an earlier bound before the connection's close reached it, and ended the
    // test there), so the bound sits 128× above the limit; that the relay cut
    // the connection and let ≤ 65 KiB through is checked below either way.
    const bound = 8 * 1024 * 1024;
    let sent = 1024;
    try {
      for (; sent < bound && conn.status === 'open'; sent += 1024) {
        if (!stream.send(new Uint8Array(1024))) await stream.onDrain({ signal: AbortSignal.timeout(10_000) });
      }
    } catch {
      // the cut
    }
    await waitFor(() => conn.status !== 'open', 30_000, 'the relayed connection to close');
    expect(sent).toBeLessThan(bound);
    expect(received).toBeLessThanOrEqual(64 * 1024 + 1024);
  }, 90_000);

  it("a reservation's byte budget: circuits beyond it in the period are refused, whoever dials", async () => {
    const guard = (relay.services as unknown as { relayGuard: RelayGuard }).relayGuard;
    const [a] = clients.filter((c) => circuitOf(c) !== undefined);
    const dialers = clients.filter((c) => c !== a);
    const before = guard.budgetUsed(a!.peerId.toString());
    let opened = 0;
    let refusal: unknown;
    for (let i = 0; i < 6 && refusal === undefined; i++) {
      const d = dialers[i % dialers.length]!;
      await d.hangUp(a!.peerId); // a fresh circuit each time, never a connection kept from before
      try {
        const c = await d.dial(multiaddr(circuitOf(a!)!.toString()), { signal: AbortSignal.timeout(20_000) });
        expect(c.limits).toBeDefined();
        opened++;
        await d.hangUp(a!.peerId);
      } catch (err) {
        refusal = err;
      }
    }
    expect(String(refusal)).toMatch(/PERMISSION_DENIED|permission/i);
    expect(opened).toBe((BUDGET - before) / (64 * 1024));
    expect(guard.budgetUsed(a!.peerId.toString())).toBe(BUDGET);
    expect(guard.circuitsRefused).toBeGreaterThan(0);
  }, 90_000);
});
