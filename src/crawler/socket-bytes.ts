// Bytes as the operating system counts them for the crawler's HTTP
// connections: the TCP sockets' own bytesRead/bytesWritten — request and
// response heads, bodies as sent (compressed, chunked), and for https the TLS
// handshake and record overhead too. undici's connector opens a TLS socket
// with its own handle, whose counts are the decrypted bytes; so for https
// this connector opens the TCP connection itself (through the same connector,
// with the same safe DNS lookup) and has undici wrap it in TLS, keeping the
// TCP socket to count.
import type { Socket } from 'node:net';
import { buildConnector } from 'undici';

export class SocketBytes {
  private done = { read: 0, written: 0 };
  private readonly live = new Set<Socket>();

  track(s: Socket): void {
    this.live.add(s);
    s.once('close', () => {
      this.done.read += s.bytesRead;
      this.done.written += s.bytesWritten;
      this.live.delete(s);
    });
  }

  /** Bytes received so far on every connection, open or closed. */
  get read(): number {
    let n = this.done.read;
    for (const s of this.live) n += s.bytesRead;
    return n;
  }

  /** Bytes sent so far on every connection, open or closed. */
  get written(): number {
    let n = this.done.written;
    for (const s of this.live) n += s.bytesWritten;
    return n;
  }
}

/** An undici connector (`Client`'s `connect`) that counts every TCP connection it opens into `counter`. */
export function countingConnector(opts: buildConnector.BuildOptions, counter: SocketBytes): buildConnector.connector {
  const base = buildConnector(opts);
  return (o, callback) => {
    if (o.protocol !== 'https:') {
      base(o, (...r) => {
        // A failed connect calls back with the error alone (no socket at all).
        if (r[1] !== null && r[1] !== undefined) counter.track(r[1]);
        callback(...r);
      });
      return;
    }
    base({ ...o, protocol: 'http:', port: o.port !== '' ? o.port : '443' }, (...r) => {
      if (r[1] === null || r[1] === undefined) return callback(...r);
      counter.track(r[1]);
      base({ ...o, httpSocket: r[1] }, callback);
    });
  };
}
