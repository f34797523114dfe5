// A libp2p stack for a test on loopback. Every peer of such a test dials from
// 127.0.0.1, the same "host" to libp2p's per-host inbound rate limit (5 new
// connections a second by default), so a test that meshes a handful of nodes —
// or whose kad-dht queries dial several at once — would have connections
// refused at random (ECONNRESET on the dialling side) whenever it runs fast.
// The limit protects a real node from one flooding host; on loopback it only
// makes tests flaky, so it is lifted here as the test networks already do.
import { generateKeyPair } from '@libp2p/crypto/keys';
import { createVolcrawlLibp2p, type Libp2pOptions, type VolcrawlLibp2p } from '../../src/dht/libp2p.js';

/** Inbound connections a second from one host that a loopback test node accepts. */
export const LOOPBACK_INBOUND_THRESHOLD = 10_000;

/** A node listening on a free loopback port, private addresses allowed, a fresh key unless given. */
export async function loopbackLibp2p(opts: Partial<Libp2pOptions> = {}): Promise<VolcrawlLibp2p> {
  return createVolcrawlLibp2p({
    listen: ['/ip4/127.0.0.1/tcp/0'],
    allowPrivateAddrs: true,
    inboundConnectionThreshold: LOOPBACK_INBOUND_THRESHOLD,
    ...opts,
    privateKey: opts.privateKey ?? (await generateKeyPair('Ed25519')),
  });
}
