// Hole-punch test nodes (peer.ts) in a NAT test network, driven through their
// control sockets: shared by test/nat/holepunch.test.ts and bench/holepunch.ts.
import { request } from 'node:http';
import { join } from 'node:path';
import type { NatNet } from '../network.js';
import type { ProcessHandle } from '../../processes.js';
import { waitForLine } from '../lines.js';
import type { HolePunchStats, PunchFailure, PunchSuccess } from '../../../src/dht/holepunch/index.js';

const PEER = 'testbed/nat/holepunch/peer.ts';
/** The TCP port every peer listens on (inside its own namespace). */
export const LISTEN_PORT = 4001;
/** The debug namespaces each peer logs: the service's and its punch port's (not the connections', which would drown them). */
const HOLEPUNCH_LOG = 'volcrawl:holepunch,volcrawl:holepunch:port';

export type PunchEvent = ({ ev: 'success' } & Omit<PunchSuccess, 'connection'> & { remoteAddr: string }) | ({ ev: 'failure' } & PunchFailure);
export interface ConnInfo {
  remoteAddr: string;
  limited: boolean;
  direct: boolean;
  direction: string;
  status: string;
}
export interface PeerInfo {
  peerId: string;
  addrs: string[];
  stats: HolePunchStats;
}

interface Peer {
  host: string;
  id: string;
  proc: ProcessHandle;
  control: string;
}

export class PunchPeers {
  private readonly peers = new Map<string, Peer>();

  /** `dir`: where the control sockets go (a temp dir of the caller's). */
  constructor(
    private readonly net: NatNet,
    private readonly dir: string,
  ) {}

  /** Starts peer.ts in `host` (listening on LISTEN_PORT) with `args`; resolves with its peer id. */
  async start(host: string, args: string[], key = host): Promise<string> {
    const control = join(this.dir, `${key}.sock`);
    // The hole-punch service's log (stderr, a few lines per punch) names why a punch ended or never started.
    const proc = this.net.spawnIn(host, PEER, ['--control', control, '--listen', `/ip4/0.0.0.0/tcp/${LISTEN_PORT}`, ...args], { env: { DEBUG: HOLEPUNCH_LOG } });
    const m = await waitForLine(proc, /"ev":"started","peerId":"(\w+)"/, 90_000);
    this.peers.set(key, { host, id: m[1]!, proc, control });
    return m[1]!;
  }

  private peer(key: string): Peer {
    const p = this.peers.get(key);
    if (p === undefined) throw new Error(`no punch peer ${key}`);
    return p;
  }

  id(key: string): string {
    return this.peer(key).id;
  }

  /** Its TCP address with /p2p/ (public peers: what others dial and observe through). */
  addr(key: string): string {
    const p = this.peer(key);
    return `/ip4/${this.net.host(p.host).ip}/tcp/${LISTEN_PORT}/p2p/${p.id}`;
  }

  /** Its address through `relay` (which it reserved on). */
  circuitAddr(key: string, relay: string): string {
    return `${this.addr(relay)}/p2p-circuit/p2p/${this.id(key)}`;
  }

  /** One control call; rejects with the peer's error (and the tail of its output). */
  async call<T>(key: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const p = this.peer(key);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request({ socketPath: p.control, method, path, headers: payload === undefined ? {} : { 'content-type': 'application/json' }, timeout: 120_000 }, (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.end(payload);
    });
    if (status !== 200) throw new Error(`${key} ${method} ${path}: ${text}\n${p.proc.output(30)}`);
    return JSON.parse(text) as T;
  }

  info(key: string): Promise<PeerInfo> {
    return this.call<PeerInfo>(key, 'GET', '/info');
  }

  events(key: string): Promise<PunchEvent[]> {
    return this.call<PunchEvent[]>(key, 'GET', '/events');
  }

  conns(key: string, other: string): Promise<ConnInfo[]> {
    return this.call<ConnInfo[]>(key, 'GET', `/conns?peer=${this.id(other)}`);
  }

  /**
   * Polls `probe` until it returns something other than undefined; rejects after `timeoutMs` with `what`
   * and a report of `key` and of every peer in `also` (its output, punch events and stats), so a failure
   * names its cause from both sides of a punch.
   */
  async until<T>(key: string, what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000, also: string[] = []): Promise<T> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const got = await probe();
      if (got !== undefined) return got;
      const p = this.peer(key);
      if (!p.proc.running) throw new Error(`${key} exited (${p.proc.exitStatus}) before ${what}\n${await this.report([key, ...also])}`);
      if (Date.now() > end) throw new Error(`${key}: no ${what} within ${timeoutMs} ms\n${await this.report([key, ...also])}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** What a failed wait prints of each peer: the tail of its output, its punch events and its hole-punch stats. */
  async report(keys: string[]): Promise<string> {
    const parts = await Promise.all(
      [...new Set(keys)].map(async (key) => {
        const p = this.peer(key);
        const ask = async (path: string): Promise<string> => {
          if (!p.proc.running) return '(not running)';
          try {
            return JSON.stringify(await this.call(key, 'GET', path));
          } catch (err) {
            return `(unanswered: ${err instanceof Error ? err.message.split('\n')[0] : String(err)})`;
          }
        };
        const [events, info] = await Promise.all([ask('/events'), ask('/info')]);
        return `--- ${key} (${p.id}) ---\nevents: ${events}\ninfo: ${info}\n${p.proc.output(60)}`;
      }),
    );
    return parts.join('\n');
  }

  /** Resolves once `key` holds a relay reservation (a /p2p-circuit address) and knows its punch port's mapping. */
  async ready(key: string, natType?: string, timeoutMs = 120_000): Promise<PeerInfo> {
    return this.until(
      key,
      `a reservation and a ${natType ?? ''} mapping`,
      async () => {
        const i = await this.info(key);
        const reserved = i.addrs.some((a) => a.includes('/p2p-circuit'));
        return reserved && i.stats.mapping !== null && (natType === undefined || i.stats.natType === natType) ? i : undefined;
      },
      timeoutMs,
    );
  }

  /** The first punch event at `key` about `other` after the first `skip` events. */
  async nextEvent(key: string, other: string, skip = 0, timeoutMs = 60_000): Promise<PunchEvent> {
    const id = this.id(other);
    return this.until(key, `a punch event about ${other}`, async () => (await this.events(key)).slice(skip).find((e) => e.peer === id), timeoutMs, [other]);
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.peers.values()].map((p) => p.proc.stop(3000)));
  }
}
