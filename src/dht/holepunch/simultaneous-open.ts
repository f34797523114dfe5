// TCP simultaneous open from a fixed local port: both peers connect to each
// other's public mapping of their punch port at about the same time. The first
// SYN out of each NAT opens that NAT for the peer's SYN (a port-restricted cone
// admits packets from the exact address:port it sent to); when the peer's SYN
// meets our socket in SYN_SENT, the kernel completes the connection from both
// ends. A SYN that arrives before the peer has sent its own is dropped by the
// peer's router and retransmitted by the kernel (1 s, 3 s, 7 s …), so a
// deadline of several seconds forgives poor timing. An RST (the peer has no
// NAT and had not connected yet, so its kernel refused us) ends one connect;
// we connect again from the same port until the deadline.
//
// Several sockets can be bound to the same local port at once (libuv sets
// SO_REUSEADDR, Linux allows it while none of them listens): the keep-alive to
// the observers and any number of punches share the port. A listening socket
// cannot share it (EADDRINUSE), which is why the punch port is not libp2p's
// listen port.
import { connect, createServer, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Endpoint } from './endpoint.js';

export interface SimultaneousOpenOptions {
  localPort: number;
  remote: Endpoint;
  /** The deadline: aborting it ends the attempt. */
  signal: AbortSignal;
  /** Pause before connecting again after a refusal or reset (default 250 ms). */
  retryDelayMs?: number;
}

export class PunchTimeoutError extends Error {
  override name = 'PunchTimeoutError';
}

/** Connects from `localPort` to `remote` until a connection is made or the signal aborts; the socket is returned paused (nothing read yet). */
export async function connectFromPort(opts: SimultaneousOpenOptions): Promise<Socket> {
  const retryDelay = opts.retryDelayMs ?? 250;
  let tries = 0;
  let lastError = 'no answer';
  while (!opts.signal.aborted) {
    tries += 1;
    try {
      return await connectOnce(opts);
    } catch (err) {
      lastError = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      if (opts.signal.aborted) break;
      await sleep(retryDelay, undefined, { signal: opts.signal }).catch(() => undefined);
    }
  }
  throw new PunchTimeoutError(`no TCP connection from port ${opts.localPort} to ${opts.remote.ip}:${opts.remote.port} before the deadline (${tries} connect${tries === 1 ? '' : 's'}, last: ${lastError})`);
}

function connectOnce(opts: SimultaneousOpenOptions): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: opts.remote.ip, port: opts.remote.port, localPort: opts.localPort, noDelay: true, keepAlive: true });
    const done = (err?: Error): void => {
      socket.off('connect', onConnect);
      socket.off('error', onError);
      opts.signal.removeEventListener('abort', onAbort);
      if (err === undefined) resolve(socket);
      else {
        socket.destroy();
        reject(err);
      }
    };
    const onConnect = (): void => done();
    const onError = (err: Error): void => done(err);
    const onAbort = (): void => done(new PunchTimeoutError('deadline'));
    socket.once('connect', onConnect);
    socket.once('error', onError);
    opts.signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** A local TCP port nobody uses right now (asked from the kernel), for a punch port chosen at start. */
export function freeTcpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '0.0.0.0', () => {
      const addr = srv.address();
      srv.close(() => (addr !== null && typeof addr === 'object' ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}
