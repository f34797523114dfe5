// The punch port's public mapping, learnt and kept alive. From the punch port
// the node keeps one libp2p connection to each observer (the manager, public
// volunteers) and asks it, every `refreshMs`, which ip:port it sees
// (observed-addr.ts). The connection keeps the NAT's mapping of the port alive
// (yamux pings every 30 s besides; home routers drop idle TCP mappings after
// minutes to hours), and the answers say which mapping peers must punch to and
// what kind of NAT this is (mapping.ts). A lost connection is redialled with a
// backoff; its observation is dropped meanwhile.
import { TypedEventEmitter, type ComponentLogger, type Connection, type Logger, type PeerId, type Upgrader } from '@libp2p/interface';
import { peerIdFromString } from '@libp2p/peer-id';
import type { Multiaddr } from '@multiformats/multiaddr';
import { formatEndpoint, sameEndpoint, tcpEndpointOf, type Endpoint } from './endpoint.js';
import { classifyMapping, type Observation, type PunchMapping } from './mapping.js';
import { askObservedAddr, askWitness } from './observed-addr.js';
import { withDeadline } from './deadline.js';
import { connectFromPort } from './simultaneous-open.js';
import { upgradeSocket } from './upgrade.js';

export interface PunchPortComponents {
  peerId: PeerId;
  upgrader: Upgrader;
  logger: ComponentLogger;
}

export interface PunchPortInit {
  port: number;
  /** How often each observer is asked again (the keep-alive round). */
  refreshMs: number;
  /** Bound on one connect + upgrade, and on one question. */
  timeoutMs: number;
  /** Longest pause between redials of a lost observer (the first is 1 s, doubling). */
  maxBackoffMs: number;
}

export interface PunchPortEvents {
  change: CustomEvent<PunchMapping>;
}

interface ObserverLoop {
  stop: AbortController;
  done: Promise<void>;
  /** The connection from the punch port while it is up (witness queries go over it). */
  conn?: Connection;
}

export class PunchPort extends TypedEventEmitter<PunchPortEvents> {
  private readonly log: Logger;
  private readonly loops = new Map<string, ObserverLoop>();
  private readonly seen = new Map<string, Endpoint>();
  private current: PunchMapping = classifyMapping([]);

  constructor(
    private readonly components: PunchPortComponents,
    private readonly init: PunchPortInit,
  ) {
    super();
    this.log = components.logger.forComponent('volcrawl:holepunch:port');
  }

  get port(): number {
    return this.init.port;
  }

  state(): PunchMapping {
    return this.current;
  }

  /** Resolves with the mapping once some observer has answered, or with what is known after `timeoutMs`. */
  async whenObserved(timeoutMs: number, signal?: AbortSignal): Promise<PunchMapping> {
    if (this.current.mapping !== null || this.loops.size === 0) return this.current;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.removeEventListener('change', done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.addEventListener('change', done);
      signal?.addEventListener('abort', done);
    });
    return this.current;
  }

  /** Whether one of our observers sees `peer`'s own connection coming from `at` (asked one after another; false when none does or none answers). */
  async witnessed(peer: string, at: Endpoint): Promise<boolean> {
    for (const loop of this.loops.values()) {
      const conn = loop.conn;
      if (conn === undefined || conn.status !== 'open') continue;
      try {
        if (await askWitness(conn, peer, at, this.init.timeoutMs)) return true;
      } catch (err) {
        this.log('witness query failed: %s', err instanceof Error ? err.message : String(err));
      }
    }
    return false;
  }

  /** Keeps connections to exactly these observers (TCP addresses with /p2p/; others and ourselves are skipped). */
  setObservers(addrs: readonly Multiaddr[]): void {
    const wanted = new Map<string, { peer: PeerId; at: Endpoint }>();
    for (const ma of addrs) {
      const id = ma.getComponents().findLast((c) => c.name === 'p2p')?.value;
      const at = tcpEndpointOf(ma);
      if (id === undefined || at === null || id === this.components.peerId.toString()) {
        this.log('observer %a skipped: not a TCP address of another peer with /p2p/', ma);
        continue;
      }
      wanted.set(id, { peer: peerIdFromString(id), at });
    }
    for (const [id, loop] of this.loops) if (!wanted.has(id)) loop.stop.abort();
    for (const [id, w] of wanted) if (!this.loops.has(id)) this.startLoop(id, w.peer, w.at);
  }

  async stop(): Promise<void> {
    for (const loop of this.loops.values()) loop.stop.abort();
    await Promise.all([...this.loops.values()].map((l) => l.done));
  }

  private startLoop(id: string, peer: PeerId, at: Endpoint): void {
    const stop = new AbortController();
    const loop: ObserverLoop = { stop, done: Promise.resolve() };
    this.loops.set(id, loop);
    loop.done = this.observe(peer, at, stop.signal, loop).finally(() => {
      // A loop stopped by setObservers may end after a new one for the same observer started.
      if (this.loops.get(id) === loop) this.loops.delete(id);
    });
  }

  /** One observer, until stopped: connect from the punch port, ask, ask again every round; redial when lost. */
  private async observe(peer: PeerId, at: Endpoint, stop: AbortSignal, loop: ObserverLoop): Promise<void> {
    let backoff = 1000;
    while (!stop.aborted) {
      let conn: Connection | undefined;
      try {
        // withDeadline, not AbortSignal.any with a timeout: see deadline.ts.
        const socket = await withDeadline(this.init.timeoutMs, stop, (signal) => connectFromPort({ localPort: this.init.port, remote: at, signal }));
        conn = await withDeadline(this.init.timeoutMs, stop, (signal) => upgradeSocket(this.components.upgrader, this.components.logger, socket, { remotePeer: peer, initiator: true, signal }));
        backoff = 1000;
        loop.conn = conn;
        while (!stop.aborted && conn.status === 'open') {
          this.record(peer.toString(), await askObservedAddr(conn, this.init.timeoutMs));
          await untilClosedOr(conn, this.init.refreshMs, stop);
        }
      } catch (err) {
        if (!stop.aborted) this.log('observer %p at %s: %s', peer, formatEndpoint(at), err instanceof Error ? err.message : String(err));
      }
      this.forget(peer.toString());
      loop.conn = undefined;
      if (conn !== undefined) await conn.close().catch(() => undefined);
      if (stop.aborted) break;
      await untilClosedOr(undefined, backoff, stop);
      backoff = Math.min(backoff * 2, this.init.maxBackoffMs);
    }
  }

  private record(observer: string, seen: Endpoint): void {
    const before = this.seen.get(observer);
    if (before !== undefined && sameEndpoint(before, seen)) return;
    this.log('observer %s sees punch port %d at %s', observer, this.init.port, formatEndpoint(seen));
    this.seen.set(observer, seen);
    this.update();
  }

  private forget(observer: string): void {
    if (this.seen.delete(observer)) this.update();
  }

  private update(): void {
    const observations: Observation[] = [...this.seen].map(([observer, seen]) => ({ observer, seen }));
    this.current = classifyMapping(observations);
    this.safeDispatchEvent('change', { detail: this.current });
  }
}

/** Waits `ms`, or less if `conn` closes or `stop` aborts. */
function untilClosedOr(conn: Connection | undefined, ms: number, stop: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      conn?.removeEventListener('close', done);
      stop.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    conn?.addEventListener('close', done);
    stop.addEventListener('abort', done);
  });
}
