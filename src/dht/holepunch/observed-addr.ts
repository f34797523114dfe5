// /volcrawl/observed-addr/1.0.0: "what address do you see me at?" The asker
// opens a stream on a connection it dialled from its punch port; the observer
// answers with that connection's remote ip:port, which is the public mapping
// of the punch port (the outermost NAT's address and port), and closes.
//
//   reply  { ip, port }   ≤ 128 bytes
//
// identify also reports an observed address, but only once per connection and
// inside a message a hundred times larger; this one is asked again on every
// keep-alive round, which both refreshes the NAT's mapping and notices when it
// changes. Relayed connections are refused (their remote address is the
// relay's circuit, not the asker's mapping).
//
// /volcrawl/punch-witness/1.0.0: "is <peer> connected to you from ip:port?"
// Before a punch each side asks one of its observers whether the target the
// peer offered is where that peer's own punch port is seen (the peer keeps a
// connection from it to the observers too). So a peer cannot aim a volunteer's
// punch SYNs at any address it likes: only at its own mapping, as witnessed.
//
//   request { peer, ip, port }   reply { seen: boolean }   each ≤ 160 bytes
import { z } from 'zod';
import type { Connection, Stream } from '@libp2p/interface';
import type { ConnectionManager, Registrar } from '@libp2p/interface-internal';
import { peerIdFromString } from '@libp2p/peer-id';
import { jsonChannel } from '../wire.js';
import { endpointSchema, sameEndpoint, tcpEndpointOf, type Endpoint } from './endpoint.js';

export const OBSERVED_ADDR_PROTOCOL = '/volcrawl/observed-addr/1.0.0';
export const OBSERVED_ADDR_MAX_BYTES = 128;

/** Serves the protocol: answers each stream with the connection's remote TCP ip:port. */
export async function serveObservedAddr(registrar: Registrar, timeoutMs: number): Promise<void> {
  await registrar.handle(
    OBSERVED_ADDR_PROTOCOL,
    async (stream: Stream, connection: Connection) => {
      const ch = jsonChannel(stream, OBSERVED_ADDR_MAX_BYTES, timeoutMs);
      const seen = tcpEndpointOf(connection.remoteAddr);
      if (seen === null) {
        ch.abort('no TCP address observed on this connection');
        return;
      }
      try {
        await ch.write(seen);
        await ch.close();
      } catch {
        ch.abort('observed-addr reply failed');
      }
    },
    // A few keep-alive rounds at a time per connection are plenty; relayed connections are not served.
    { maxInboundStreams: 2, runOnLimitedConnection: false },
  );
}

/** Asks the peer at the other end of `connection` which ip:port it sees us at. */
export async function askObservedAddr(connection: Connection, timeoutMs: number): Promise<Endpoint> {
  const stream = await connection.newStream(OBSERVED_ADDR_PROTOCOL, { signal: AbortSignal.timeout(timeoutMs) });
  const ch = jsonChannel(stream, OBSERVED_ADDR_MAX_BYTES, timeoutMs);
  try {
    const seen = endpointSchema.parse(await ch.read());
    await ch.close();
    return seen;
  } catch (err) {
    ch.abort('observed-addr read failed');
    throw err;
  }
}

export const WITNESS_PROTOCOL = '/volcrawl/punch-witness/1.0.0';
export const WITNESS_MAX_BYTES = 160;
const witnessRequestSchema = z.strictObject({ peer: z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,64}$/), ip: endpointSchema.shape.ip, port: endpointSchema.shape.port });
const witnessReplySchema = z.strictObject({ seen: z.boolean() });

/** Whether `peer` has a direct connection to us from `at` (the observer's side of the witness protocol). */
export function witnesses(connectionManager: Pick<ConnectionManager, 'getConnections'>, peer: string, at: Endpoint): boolean {
  let id;
  try {
    id = peerIdFromString(peer);
  } catch {
    return false;
  }
  return connectionManager.getConnections(id).some((c) => c.status === 'open' && c.limits === undefined && ((e) => e !== null && sameEndpoint(e, at))(tcpEndpointOf(c.remoteAddr)));
}

/** Serves the witness protocol (on direct connections only: the asker is one of our observed peers). */
export async function serveWitness(registrar: Registrar, connectionManager: Pick<ConnectionManager, 'getConnections'>, timeoutMs: number): Promise<void> {
  await registrar.handle(
    WITNESS_PROTOCOL,
    async (stream: Stream) => {
      const ch = jsonChannel(stream, WITNESS_MAX_BYTES, timeoutMs);
      try {
        const q = witnessRequestSchema.parse(await ch.read());
        await ch.write({ seen: witnesses(connectionManager, q.peer, { ip: q.ip, port: q.port }) });
        await ch.close();
      } catch {
        ch.abort('witness request failed');
      }
    },
    { maxInboundStreams: 4, runOnLimitedConnection: false },
  );
}

/** Asks the observer at the other end of `connection` whether `peer` is connected to it from `at`. */
export async function askWitness(connection: Connection, peer: string, at: Endpoint, timeoutMs: number): Promise<boolean> {
  const stream = await connection.newStream(WITNESS_PROTOCOL, { signal: AbortSignal.timeout(timeoutMs) });
  const ch = jsonChannel(stream, WITNESS_MAX_BYTES, timeoutMs);
  try {
    await ch.write({ peer, ip: at.ip, port: at.port });
    const r = witnessReplySchema.parse(await ch.read());
    await ch.close();
    return r.seen;
  } catch (err) {
    ch.abort('witness read failed');
    throw err;
  }
}
