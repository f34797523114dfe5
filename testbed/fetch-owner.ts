// Which process sent a request to the local test web: the client socket's
// inode in /proc/net/tcp, then the process holding it in /proc/<pid>/fd
// (Linux only). Looked up when the connection opens, so "this volunteer never
// fetched that host" is counted where the requests arrive, not from the
// volunteers' own logs. Used by bench:volunteer and the owner network test.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { TestWeb } from './web/testweb.js';

/** The inode of the TCP socket whose local port is `clientPort` and remote port `serverPort`. */
function socketInode(clientPort: number, serverPort: number): string | null {
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const local = parseInt(f[1]!.split(':')[1]!, 16);
      const remote = parseInt(f[2]!.split(':')[1]!, 16);
      if (local === clientPort && remote === serverPort) return f[9]!;
    }
  }
  return null;
}

function pidOwning(inode: string, pids: number[]): number | null {
  const want = `socket:[${inode}]`;
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === want) return pid;
      } catch {
        // closed meanwhile
      }
    }
  }
  return null;
}

export interface Fetch {
  site: string;
  path: string;
  /** The process among `pids()` that opened the connection; null: none of them. */
  pid: number | null;
  at: number;
  userAgent: string;
}

/** Records every request the test web answers from now on, with the process it came from (one of `pids()`). */
export function trackFetches(web: TestWeb, pids: () => number[]): Fetch[] {
  const fetches: Fetch[] = [];
  const owner = new WeakMap<Socket, number | null>();
  for (const name of web.siteNames) {
    const site = web.site(name);
    site.server.on('connection', (sock: Socket) => {
      const inode = sock.remotePort !== undefined ? socketInode(sock.remotePort, site.port) : null;
      owner.set(sock, inode !== null ? pidOwning(inode, pids()) : null);
    });
    site.server.on('request', (req: IncomingMessage) =>
      fetches.push({ site: name, path: req.url ?? '/', pid: owner.get(req.socket) ?? null, at: Date.now(), userAgent: req.headers['user-agent'] ?? '' }),
    );
  }
  return fetches;
}
