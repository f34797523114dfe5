// A connected TCP socket turned into a libp2p connection by the node's own
// Upgrader (Noise against the peer we expect, then Yamux), the way @libp2p/tcp
// upgrades the sockets it dials. The hole punch needs this because it makes its
// sockets itself: from a fixed local port, and in a simultaneous open where
// both ends' sockets are "outbound". The roles therefore come from a rule both
// peers share (service.ts: peer-id order): the initiator runs Noise's initiator
// and multistream-select's dialer, the other side the responders
// (`upgradeOutbound(…, { initiator: false })`, which still returns the
// connection). Both ends verify the remote's identity inside Noise: the
// expected peer id goes into the connection's remote address (`/p2p/<id>`),
// from which the upgrader hands it to Noise, so someone else answering at the
// address fails the handshake with a peer-id mismatch.
import type { Socket } from 'node:net';
import { TimeoutError, type AbortOptions, type ComponentLogger, type Connection, type PeerId, type Upgrader } from '@libp2p/interface';
import { AbstractMultiaddrConnection, ipPortToMultiaddr, type SendResult } from '@libp2p/utils';
import type { Multiaddr } from '@multiformats/multiaddr';

/** Idle time after which the socket is aborted (as @libp2p/tcp does; yamux pings every 30 s). */
const INACTIVITY_TIMEOUT_MS = 2 * 60_000;

type Chunks = Parameters<AbstractMultiaddrConnection['sendData']>[0];

/** A libp2p MultiaddrConnection over a connected net.Socket. */
class SocketConnection extends AbstractMultiaddrConnection {
  constructor(
    private readonly socket: Socket,
    remoteAddr: Multiaddr,
    direction: 'inbound' | 'outbound',
    logger: ComponentLogger,
  ) {
    super({ remoteAddr, direction, log: logger.forComponent('volcrawl:holepunch:socket'), inactivityTimeout: INACTIVITY_TIMEOUT_MS });
    socket.on('data', (buf: Buffer) => this.onData(buf));
    socket.on('error', (err) => this.abort(err));
    socket.setTimeout(INACTIVITY_TIMEOUT_MS);
    socket.once('timeout', () => this.abort(new TimeoutError('socket idle')));
    // The remote's FIN: Node answers with ours (no half-open sockets) and 'close' follows.
    socket.once('end', () => this.onTransportClosed());
    socket.once('close', (hadError) => (hadError ? this.abort(new Error('TCP transmission error')) : this.onTransportClosed()));
    socket.on('drain', () => this.safeDispatchEvent('drain'));
  }

  sendData(data: Chunks): SendResult {
    let sentBytes = 0;
    let canSendMore = true;
    for (const buf of data) {
      sentBytes += buf.byteLength;
      canSendMore = this.socket.write(buf);
      if (!canSendMore) break;
    }
    return { sentBytes, canSendMore };
  }

  async sendClose(options?: AbortOptions): Promise<void> {
    if (this.socket.destroyed) return;
    const closed = new Promise<void>((resolve) => this.socket.once('close', () => resolve()));
    this.socket.end();
    const signal = options?.signal;
    if (signal === undefined) return closed;
    await Promise.race([
      closed,
      new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true })),
    ]);
    this.socket.destroy();
  }

  sendReset(): void {
    // resetAndDestroy sends an RST; after end() has started only destroy() is allowed.
    if (this.socket.writableEnded) this.socket.destroy();
    else this.socket.resetAndDestroy();
  }

  sendPause(): void {
    this.socket.pause();
  }

  sendResume(): void {
    this.socket.resume();
  }
}

export interface SocketUpgradeOptions {
  /** The peer that must be at the other end (checked by Noise). */
  remotePeer: PeerId;
  /** Noise initiator and multistream-select dialer (true), or the responder (false). */
  initiator: boolean;
  signal: AbortSignal;
}

/**
 * Upgrades a connected socket into a libp2p Connection (registered with the
 * connection manager like any other: `connection:open`, identify, topologies).
 * On failure the socket is destroyed and the upgrader's error is rethrown.
 */
export async function upgradeSocket(upgrader: Upgrader, logger: ComponentLogger, socket: Socket, opts: SocketUpgradeOptions): Promise<Connection> {
  if (socket.remoteAddress === undefined || socket.remotePort === undefined) {
    socket.destroy();
    throw new Error('socket is not connected');
  }
  const remoteAddr = ipPortToMultiaddr(socket.remoteAddress, socket.remotePort).encapsulate(`/p2p/${opts.remotePeer.toString()}`);
  // The direction is the role, not who sent the first SYN: yamux gives the
  // outbound side odd stream ids and the inbound side even ones, and refuses a
  // connection where both ends think they are the client.
  const maConn = new SocketConnection(socket, remoteAddr, opts.initiator ? 'outbound' : 'inbound', logger);
  try {
    return await upgrader.upgradeOutbound(maConn, { signal: opts.signal, initiator: opts.initiator });
  } catch (err) {
    maConn.abort(err instanceof Error ? err : new Error(String(err)));
    throw err;
  }
}

/** Whether an upgrade failed because the remote proved to be another peer (Noise's identity check). */
export function isPeerIdMismatch(err: unknown): boolean {
  return err instanceof Error && /does not match expected remote identity key|unexpected peer/i.test(err.message);
}
