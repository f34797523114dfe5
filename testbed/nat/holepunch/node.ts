// A libp2p 3 node with the hole-punch service, for the tests and the
// measurement (test/nat/holepunch*.test.ts, bench/holepunch.ts): the options of
// src/dht/libp2p.ts (TCP, Noise, Yamux, identify, ping, the same timeouts)
// plus what phase 2a adds around the punch — Circuit Relay v2 (server on
// public peers, client reservations behind NAT) and DCUtR (connection
// reversal, running beside the punch as it will in the node) — and an echo
// protocol allowed on relayed connections, to prove a connection carries
// streams. Not volcrawl's node: src/ never sees this.
import { createLibp2p, type Libp2p } from 'libp2p';
import { tcp } from '@libp2p/tcp';
import { noise } from '@chainsafe/libp2p-noise';
import { yamux } from '@chainsafe/libp2p-yamux';
import { identify, type Identify, type IdentifyInit } from '@libp2p/identify';
import { ping } from '@libp2p/ping';
import { circuitRelayServer, circuitRelayTransport } from '@libp2p/circuit-relay-v2';
import { dcutr } from '@libp2p/dcutr';
import type { Connection, PrivateKey, Stream } from '@libp2p/interface';
import { multiaddr } from '@multiformats/multiaddr';
import { holePunch, type HolePunch, type HolePunchInit } from '../../../src/dht/holepunch/index.js';
import { jsonChannel } from '../../../src/dht/wire.js';

export const ECHO_PROTOCOL = '/volcrawl-test/echo/1.0.0';

export interface PunchNodeOptions {
  listen?: string[];
  /** Relay addresses (with /p2p/) to hold a reservation on. The node dials them and listens on
   * `/p2p-circuit` (discovery mode: the reservation store finds them among its peers and retries),
   * not on `<relay>/p2p-circuit`, whose fixed 5 s deadline fails start-up on a loaded machine. */
  reserve?: string[];
  /** Offer relay service (public peers). */
  relayServer?: boolean;
  holePunch?: HolePunchInit;
  privateKey?: PrivateKey;
  /** identify's options (a test makes it refuse relayed connections, so identify over the relay fails). */
  identify?: IdentifyInit;
}

export type PunchNode = Libp2p<{ identify: Identify; holePunch: HolePunch } & Record<string, unknown>>;

export async function createPunchNode(opts: PunchNodeOptions): Promise<PunchNode> {
  const node = await createLibp2p({
    ...(opts.privateKey !== undefined ? { privateKey: opts.privateKey } : {}),
    addresses: { listen: [...(opts.listen ?? ['/ip4/0.0.0.0/tcp/0']), ...(opts.reserve ?? []).map(() => '/p2p-circuit')] },
    transports: [tcp(), circuitRelayTransport({ reservationCompletionTimeout: 30_000 })],
    connectionEncrypters: [noise()],
    streamMuxers: [yamux()],
    connectionManager: {
      dialTimeout: 10_000,
      addressDialTimeout: 6_000,
      inboundUpgradeTimeout: 10_000,
      inboundStreamProtocolNegotiationTimeout: 10_000,
      outboundStreamProtocolNegotiationTimeout: 10_000,
    },
    services: {
      identify: identify(opts.identify),
      ping: ping(),
      dcutr: dcutr(),
      holePunch: holePunch(opts.holePunch),
      ...(opts.relayServer === true ? { relay: circuitRelayServer() } : {}),
    },
  });
  await node.handle(
    ECHO_PROTOCOL,
    async (stream: Stream) => {
      const ch = jsonChannel(stream, 1024, 10_000);
      try {
        await ch.write({ echo: await ch.read() });
        await ch.close();
      } catch {
        ch.abort('echo failed');
      }
    },
    { runOnLimitedConnection: true },
  );
  for (const r of opts.reserve ?? []) void dialUntilConnected(node, r);
  return node as unknown as PunchNode;
}

/** Dials `addr` until a connection is made (a loaded machine can time out a handshake), for at most two minutes. */
async function dialUntilConnected(node: Libp2p, addr: string): Promise<void> {
  const end = Date.now() + 120_000;
  while (node.status === 'started' && Date.now() < end) {
    try {
      await node.dial(multiaddr(addr), { signal: AbortSignal.timeout(20_000) });
      return;
    } catch (err) {
      process.stderr.write(`dial ${addr} failed, retrying: ${err instanceof Error ? err.message : String(err)}\n`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

/** Sends `text` over `conn` on the echo protocol and returns what came back. */
export async function echoOver(conn: Connection, text: string): Promise<string> {
  const stream = await conn.newStream(ECHO_PROTOCOL, { runOnLimitedConnection: true, signal: AbortSignal.timeout(10_000) });
  const ch = jsonChannel(stream, 1024, 10_000);
  try {
    await ch.write(text);
    const reply = (await ch.read()) as { echo?: unknown };
    await ch.close();
    return String(reply.echo);
  } catch (err) {
    ch.abort('echo failed');
    throw err;
  }
}

/** Plain data about a connection, for assertions. */
export function describeConnection(c: Connection): { remoteAddr: string; limited: boolean; direct: boolean; direction: string; status: string } {
  return { remoteAddr: c.remoteAddr.toString(), limited: c.limits !== undefined, direct: c.direct, direction: c.direction, status: c.status };
}
