// Spike peers (peer.ts) running in a NAT test network, and what each reported:
// shared by the spike's driver (run.ts) and test/nat/libp2p.test.ts.
import type { NatNet } from '../network.js';
import type { ProcessHandle, SpawnIo } from '../../processes.js';

const PEER = 'testbed/nat/spike/peer.ts';

/** One line peer.ts printed: `t` ms since its start, `ev` what happened. */
export type PeerEvent = { t: number; ev: string; [k: string]: unknown };

export class SpikePeers {
  readonly procs = new Map<string, ProcessHandle>();
  readonly events = new Map<string, PeerEvent[]>();

  constructor(private readonly net: NatNet) {}

  /** Starts peer.ts in `host` with `args`; `key` names it (default: the host). */
  start(host: string, args: string[], key = host, io: Omit<SpawnIo, 'netns'> = {}): ProcessHandle {
    const h = this.net.spawnIn(host, PEER, args, io);
    const evs: PeerEvent[] = [];
    this.procs.set(key, h);
    this.events.set(key, evs);
    h.follow((line) => {
      if (!line.startsWith('{')) return;
      try {
        evs.push(JSON.parse(line) as PeerEvent);
      } catch {
        // a log line that starts with a brace
      }
    });
    return h;
  }

  of(key: string): PeerEvent[] {
    const evs = this.events.get(key);
    if (evs === undefined) throw new Error(`no spike peer ${key}`);
    return evs;
  }

  /** Resolves with the first event matching `pred` (already seen or to come); rejects after `timeoutMs` or when the peer exits. */
  async waitFor(key: string, pred: (e: PeerEvent) => boolean, what: string, timeoutMs = 60_000): Promise<PeerEvent> {
    const end = Date.now() + timeoutMs;
    const h = this.procs.get(key)!;
    for (;;) {
      const e = this.of(key).find(pred);
      if (e !== undefined) return e;
      if (!h.running) throw new Error(`${key} exited (${h.exitStatus}) before ${what}\n${h.output(30)}`);
      if (Date.now() > end) throw new Error(`${key}: no ${what} within ${timeoutMs} ms\n${h.output(30)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async peerId(key: string): Promise<string> {
    return (await this.waitFor(key, (e) => e.ev === 'started', 'start')).peerId as string;
  }

  /** Its TCP address on port 4001 (peer.ts's usual listen port) with /p2p/. */
  async tcpAddr(key: string, host = key): Promise<string> {
    return `/ip4/${this.net.host(host).ip}/tcp/4001/p2p/${await this.peerId(key)}`;
  }

  /** Its latest self-reported addresses (self:peer:update). */
  selfAddrs(key: string): string[] {
    const self = [...this.of(key)].reverse().find((e) => e.ev === 'self');
    return (self?.addrs ?? []) as string[];
  }

  /** Its current relay address (not via loopback) with its own /p2p/ suffix. */
  circuitAddr(key: string): string | undefined {
    const id = this.of(key).find((e) => e.ev === 'started')?.peerId as string | undefined;
    const relayed = this.selfAddrs(key).filter((a) => a.includes('/p2p-circuit') && !a.startsWith('/ip4/127.'));
    return relayed.length === 0 || id === undefined ? undefined : `${relayed[0]}/p2p/${id}`;
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.procs.values()].map((h) => h.stop(3000)));
  }
}
