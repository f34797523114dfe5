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
import type { Connection, Stream } from '@libp2p/interface';
import type { Registrar } from '@libp2p/interface-internal';
import { jsonChannel } from '../wire.js';
import { endpointSchema, tcpEndpointOf, type Endpoint } from './endpoint.js';

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
