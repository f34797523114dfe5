// The hole-punch service: a libp2p service (registered like dcutr) that turns a
// relayed connection between two NATed peers into a direct TCP connection
// where their NATs allow it, and says why where they do not.
//
// When a peer reaches us over a relay (an inbound limited connection whose
// remote speaks the protocol, after identify), we coordinate a punch with it
// over that connection (coordination.ts): each side offers its punch port's
// public mapping as the observers see it (punch-port.ts), both connect from
// their punch port to the other's mapping at once (simultaneous-open.ts), and
// the socket becomes a libp2p connection (upgrade.ts) — Noise initiator is the
// side with the smaller peer id, and Noise checks that the expected peer
// answered. The direct connection then serves every new stream (libp2p
// prefers unlimited connections) and the relayed one is closed, as DCUtR does.
// A failed attempt is retried (bounded) when its reason may pass; a peer whose
// punch failed for good is left alone for a while.
import { serviceDependencies, TypedEventEmitter, type ComponentLogger, type Connection, type Libp2pEvents, type Logger, type PeerId, type Startable, type Stream, type TypedEventTarget, type Upgrader } from '@libp2p/interface';
import type { ConnectionManager, Registrar } from '@libp2p/interface-internal';
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr';
import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { coordinate, HOLEPUNCH_PROTOCOL, PUNCH_FAILURE_REASONS, PunchError, refuse, respond, type CoordinationOptions, type PunchFailureReason, type PunchOffer } from './coordination.js';
import { withDeadline } from './deadline.js';
import { formatEndpoint, type Endpoint } from './endpoint.js';
import type { NatType, PunchMapping } from './mapping.js';
import { serveObservedAddr, serveWitness, OBSERVED_ADDR_PROTOCOL, WITNESS_PROTOCOL } from './observed-addr.js';
import { PunchPort } from './punch-port.js';
import { connectFromPort, freeTcpPort, PunchTimeoutError } from './simultaneous-open.js';
import { isPeerIdMismatch, upgradeSocket } from './upgrade.js';

export interface HolePunchInit {
  /** The fixed local port every punch (and the keep-alive to the observers) connects from; not libp2p's listen port. 0 or unset: a free port chosen at start. */
  punchPort?: number;
  /** Public peers that report our punch port's mapping (TCP multiaddrs with /p2p/: the manager, public volunteers). Two tell a cone NAT from a symmetric one. */
  observers?: (string | Multiaddr)[];
  /** Punch when a peer reaches us over a relay (default true); `punch()` works either way. */
  auto?: boolean;
  /** Accept peers' private mappings (LAN and test networks; default false). */
  allowPrivateAddrs?: boolean;
  /** Deadline of the coordination exchange (default 10 s). */
  coordinationTimeoutMs?: number;
  /** Deadline of the simultaneous open (default 10 s: SYNs are retransmitted after 1, 3 and 7 s). */
  punchTimeoutMs?: number;
  /** Deadline of the Noise + muxer upgrade (default 10 s). */
  upgradeTimeoutMs?: number;
  /** Attempts per `punch()` when the reason may pass (default 3). */
  maxAttempts?: number;
  /** Pause before the n-th retry: n × this (default 1 s). */
  retryDelayMs?: number;
  /** After a final failure, automatic punches to that peer wait this long (default 10 min). */
  cooldownMs?: number;
  /** Punches in flight at once, both roles (default 4). */
  maxConcurrent?: number;
  /** How often the observers are asked again, keeping the mapping alive (default 60 s). */
  refreshMs?: number;
  /** Close the relayed connection once the direct one is up (default true). */
  closeRelayed?: boolean;
  /** Try even when a side's NAT is symmetric (default false: such a punch cannot work; for measurements). */
  punchThroughSymmetric?: boolean;
  /** Aim only at a target one of our observers sees the peer connected from (default true; false for tests without observers). */
  requireWitness?: boolean;
  /** Punch attempts started per minute, both roles (default 20): each sends SYNs at the peer's mapping for up to punchTimeoutMs. */
  maxPerMinute?: number;
  /** An inbound relayed connection whose identify has not started the punch within this long starts it anyway (default 15 s; identify gives up after 5). */
  identifyGraceMs?: number;
}

export interface HolePunchComponents {
  peerId: PeerId;
  upgrader: Upgrader;
  registrar: Registrar;
  connectionManager: ConnectionManager;
  logger: ComponentLogger;
  /** libp2p's event bus (connection:open: the fallback when identify fails over the relay). */
  events?: TypedEventTarget<Libp2pEvents>;
}

export type PunchRole = 'coordinator' | 'responder';

export interface PunchSuccess {
  peer: string;
  role: PunchRole;
  /** 1 for the first attempt of a punch() (the responder counts each request as 1). */
  attempt: number;
  /** From the start of the attempt (coordination) to the upgraded connection. */
  ms: number;
  /** The peer's public ip:port the connection goes to. */
  remote: string;
  connection: Connection;
}

export interface PunchFailure {
  peer: string;
  role: PunchRole;
  attempt: number;
  ms: number;
  reason: PunchFailureReason;
  message: string;
  /** No further attempt follows (the coordinator's last one, or a reason that will not pass). */
  final: boolean;
}

export type PunchResult = { ok: true; connection: Connection } | { ok: false; reason: PunchFailureReason; message: string };

export interface HolePunchStats {
  punchPort: number;
  natType: NatType;
  /** The punch port's public ip:port, as the observers see it. */
  mapping: string | null;
  /** Observers answering now. */
  observers: number;
  /** Punch attempts, both roles; each ends in one success or one failure. */
  attempts: number;
  successes: number;
  failures: Record<PunchFailureReason, number>;
  inFlight: number;
}

export interface HolePunchEvents {
  'punch:success': CustomEvent<PunchSuccess>;
  'punch:failure': CustomEvent<PunchFailure>;
  /** The punch port's mapping or NAT type changed (an observer answered differently, or was lost). */
  'mapping:change': CustomEvent<PunchMapping>;
}

export interface HolePunch {
  addEventListener<K extends keyof HolePunchEvents>(type: K, listener: (evt: HolePunchEvents[K]) => void): void;
  removeEventListener<K extends keyof HolePunchEvents>(type: K, listener: (evt: HolePunchEvents[K]) => void): void;
  /** Counters and the current mapping (plain data, for logs and the status line). */
  stats(): HolePunchStats;
  mapping(): PunchMapping;
  /** Replaces the observers (e.g. when public volunteers come and go). */
  setObservers(addrs: (string | Multiaddr)[]): void;
  /** Punches to `peer` over our relayed connection to it (retried up to maxAttempts); resolves with the direct connection or the last reason. */
  punch(peer: PeerId): Promise<PunchResult>;
}

/** Reasons worth another attempt: timing, a busy or not-yet-observed peer, a relay hiccup. */
const RETRYABLE = new Set<PunchFailureReason>(['timeout', 'upgrade-failed', 'coordination-failed', 'refused', 'no-mapping', 'peer-no-mapping']);
const MAX_COOLDOWN_ENTRIES = 1024;

class HolePunchService extends TypedEventEmitter<HolePunchEvents> implements HolePunch, Startable {
  readonly [Symbol.toStringTag] = 'volcrawl:holepunch';
  readonly [serviceDependencies] = ['@libp2p/identify'];
  private readonly log: Logger;
  private readonly opts: Required<Omit<HolePunchInit, 'observers' | 'punchPort'>>;
  private port: PunchPort | undefined;
  private observers: Multiaddr[];
  private topologyId: string | undefined;
  private stopping = new AbortController();
  private readonly busy = new Map<string, Promise<PunchResult>>();
  private readonly cooldown = new Map<string, number>();
  /** Inbound relayed connections waiting for identify's topology to start their punch: the fallback's timers. */
  private readonly pending = new Map<string, ReturnType<typeof setTimeout>>();
  /** Start times of the attempts of the last minute (the rate limit). */
  private readonly recent: number[] = [];
  private counts = { attempts: 0, successes: 0, inFlight: 0, failures: Object.fromEntries(PUNCH_FAILURE_REASONS.map((r) => [r, 0])) as Record<PunchFailureReason, number> };

  constructor(
    private readonly components: HolePunchComponents,
    private readonly init: HolePunchInit,
  ) {
    super();
    this.log = components.logger.forComponent('volcrawl:holepunch');
    this.observers = (init.observers ?? []).map((a) => multiaddr(a));
    this.opts = {
      auto: init.auto ?? true,
      allowPrivateAddrs: init.allowPrivateAddrs ?? false,
      coordinationTimeoutMs: init.coordinationTimeoutMs ?? 10_000,
      punchTimeoutMs: init.punchTimeoutMs ?? 10_000,
      upgradeTimeoutMs: init.upgradeTimeoutMs ?? 10_000,
      maxAttempts: init.maxAttempts ?? 3,
      retryDelayMs: init.retryDelayMs ?? 1000,
      cooldownMs: init.cooldownMs ?? 10 * 60_000,
      maxConcurrent: init.maxConcurrent ?? 4,
      refreshMs: init.refreshMs ?? 60_000,
      closeRelayed: init.closeRelayed ?? true,
      punchThroughSymmetric: init.punchThroughSymmetric ?? false,
      requireWitness: init.requireWitness ?? true,
      maxPerMinute: init.maxPerMinute ?? 20,
      identifyGraceMs: init.identifyGraceMs ?? 15_000,
    };
  }

  /**
   * The punch starts from identify's topology (the peer speaks the protocol), and identify over a
   * relayed connection can time out on a loaded machine (5 s for the whole exchange through the
   * relay): then nothing would start it. So an inbound relayed connection the topology has not
   * handled within `identifyGraceMs` starts the punch itself.
   */
  private readonly onConnectionOpen = (e: CustomEvent<Connection>): void => {
    const c = e.detail;
    if (c.limits === undefined || c.direction !== 'inbound') return;
    const key = c.remotePeer.toString();
    if (this.pending.has(key) || this.pending.size >= MAX_COOLDOWN_ENTRIES) return;
    const t = setTimeout(() => {
      this.pending.delete(key);
      if (c.status !== 'open') return;
      this.log('identify did not start a punch with %p within %d ms: starting it', c.remotePeer, this.opts.identifyGraceMs);
      this.onRelayedPeer(c.remotePeer, c, 'grace');
    }, this.opts.identifyGraceMs);
    t.unref?.();
    this.pending.set(key, t);
  };

  async start(): Promise<void> {
    this.stopping = new AbortController();
    // Every deadline of every punch in flight listens to it (until the step ends).
    setMaxListeners(Infinity, this.stopping.signal);
    const port = this.init.punchPort !== undefined && this.init.punchPort > 0 ? this.init.punchPort : await freeTcpPort();
    this.port = new PunchPort(this.components, { port, refreshMs: this.opts.refreshMs, timeoutMs: this.opts.coordinationTimeoutMs, maxBackoffMs: 60_000 });
    this.port.addEventListener('change', (e) => this.safeDispatchEvent('mapping:change', { detail: e.detail }));
    await serveObservedAddr(this.components.registrar, this.opts.coordinationTimeoutMs);
    await serveWitness(this.components.registrar, this.components.connectionManager, this.opts.coordinationTimeoutMs);
    await this.components.registrar.handle(HOLEPUNCH_PROTOCOL, (stream, connection) => void this.onRequest(stream, connection), {
      runOnLimitedConnection: true,
      maxInboundStreams: 1,
      maxOutboundStreams: 1,
    });
    if (this.opts.auto) {
      this.topologyId = await this.components.registrar.register(HOLEPUNCH_PROTOCOL, {
        notifyOnLimitedConnection: true,
        onConnect: (peer, connection) => this.onRelayedPeer(peer, connection, 'identify'),
      });
      this.components.events?.addEventListener('connection:open', this.onConnectionOpen);
    }
  }

  /** Observers are dialled once the node is up (the upgrader needs the started transports and muxers). */
  afterStart(): void {
    this.port?.setObservers(this.observers);
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    this.components.events?.removeEventListener('connection:open', this.onConnectionOpen);
    for (const t of this.pending.values()) clearTimeout(t);
    this.pending.clear();
    if (this.topologyId !== undefined) this.components.registrar.unregister(this.topologyId);
    this.topologyId = undefined;
    await this.components.registrar.unhandle(HOLEPUNCH_PROTOCOL);
    await this.components.registrar.unhandle(OBSERVED_ADDR_PROTOCOL);
    await this.components.registrar.unhandle(WITNESS_PROTOCOL);
    await this.port?.stop();
    await Promise.allSettled([...this.busy.values()]);
  }

  stats(): HolePunchStats {
    const m = this.mapping();
    return {
      punchPort: this.port?.port ?? 0,
      natType: m.natType,
      mapping: m.mapping === null ? null : formatEndpoint(m.mapping),
      observers: m.observations.length,
      attempts: this.counts.attempts,
      successes: this.counts.successes,
      failures: { ...this.counts.failures },
      inFlight: this.counts.inFlight,
    };
  }

  mapping(): PunchMapping {
    return this.port?.state() ?? { natType: 'unknown', mapping: null, observations: [] };
  }

  setObservers(addrs: (string | Multiaddr)[]): void {
    this.observers = addrs.map((a) => multiaddr(a));
    this.port?.setObservers(this.observers);
  }

  punch(peer: PeerId): Promise<PunchResult> {
    const key = peer.toString();
    const running = this.busy.get(key);
    if (running !== undefined) return running;
    const p = this.punchWithRetries(peer).finally(() => this.busy.delete(key));
    this.busy.set(key, p);
    return p;
  }

  /** The topology's callback: the inbound side of a relayed connection starts the punch (as in DCUtR). */
  private onRelayedPeer(peer: PeerId, connection: Connection, via: 'identify' | 'grace'): void {
    if (connection.limits === undefined || connection.direction !== 'inbound') return;
    clearTimeout(this.pending.get(peer.toString()));
    this.pending.delete(peer.toString());
    if (this.stopping.signal.aborted) return;
    const until = this.cooldown.get(peer.toString());
    if (until !== undefined && until > performance.now()) {
      this.log('%p reached us over a relay (%s); not punching: cooling down for %d ms more', peer, via, Math.round(until - performance.now()));
      return;
    }
    this.log('%p reached us over a relay (%s): punching%s', peer, via, this.busy.has(peer.toString()) ? ' (already running)' : '');
    void this.punch(peer).then((r) => {
      if (!r.ok && !RETRYABLE.has(r.reason)) this.coolDown(peer.toString());
    });
  }

  private async punchWithRetries(peer: PeerId): Promise<PunchResult> {
    let last: PunchResult = { ok: false, reason: 'coordination-failed', message: 'no attempt' };
    for (let attempt = 1; attempt <= this.opts.maxAttempts && !this.stopping.signal.aborted; attempt++) {
      const direct = this.directConnection(peer);
      if (direct !== undefined) {
        this.log('not punching %p: a direct connection is open (%a)', peer, direct.remoteAddr);
        return { ok: true, connection: direct };
      }
      const relayed = this.components.connectionManager.getConnections(peer).find((c) => c.status === 'open' && c.limits !== undefined);
      if (relayed === undefined) {
        this.log('not punching %p: no relayed connection is open', peer);
        return { ok: false, reason: 'coordination-failed', message: 'no relayed connection to the peer' };
      }
      const isLast = attempt === this.opts.maxAttempts;
      last = await this.attempt(peer, 'coordinator', attempt, isLast, () => this.coordinatorAttempt(peer, relayed));
      if (last.ok) {
        if (this.opts.closeRelayed) void relayed.close().catch(() => undefined);
        return last;
      }
      if (!RETRYABLE.has(last.reason)) return last;
      if (!isLast) await sleep(this.opts.retryDelayMs * attempt, undefined, { signal: this.stopping.signal }).catch(() => undefined);
    }
    return last;
  }

  private async coordinatorAttempt(peer: PeerId, relayed: Connection): Promise<{ connection: Connection; remote: Endpoint }> {
    if (this.counts.inFlight > this.opts.maxConcurrent) throw new PunchError('rate-limited', `${this.opts.maxConcurrent} punches already in flight`);
    // A peer that has just reached us may have done so before an observer answered us.
    await this.port?.whenObserved(this.opts.coordinationTimeoutMs, this.stopping.signal);
    let stream: Stream;
    try {
      stream = await this.within(this.opts.coordinationTimeoutMs, (signal) => relayed.newStream(HOLEPUNCH_PROTOCOL, { runOnLimitedConnection: true, signal }));
    } catch (err) {
      throw new PunchError('coordination-failed', `could not open a coordination stream: ${err instanceof Error ? err.message : String(err)}`);
    }
    this.log('coordinating a punch with %p over %a', peer, relayed.remoteAddr);
    const plan = await coordinate(stream, this.offer(), this.coordinationOptions(peer));
    await sleep(plan.delayMs, undefined, { signal: this.stopping.signal }).catch(() => undefined);
    return this.connect(peer, plan.target);
  }

  /** A coordination the peer started (the stream handler, on the relayed connection). */
  private async onRequest(stream: Stream, connection: Connection): Promise<void> {
    const peer = connection.remotePeer;
    const key = peer.toString();
    this.log('%p asks to coordinate a punch', peer);
    if (this.stopping.signal.aborted) {
      stream.abort(new Error('stopping'));
      return;
    }
    if (this.busy.has(key) || this.counts.inFlight >= this.opts.maxConcurrent) {
      await this.attempt(peer, 'responder', 1, true, async () => {
        await refuse(stream, this.opts.coordinationTimeoutMs).catch(() => undefined);
        throw new PunchError('rate-limited', this.busy.has(key) ? 'a punch with this peer is already running' : `${this.opts.maxConcurrent} punches already in flight`);
      });
      return;
    }
    const p = this.attempt(peer, 'responder', 1, true, async () => {
      const plan = await respond(stream, () => this.offer(), this.coordinationOptions(peer));
      return this.connect(peer, plan.target);
    });
    this.busy.set(key, p);
    await p.finally(() => this.busy.delete(key));
  }

  /** The punch proper: connect from the punch port at the same time as the peer, then upgrade in the agreed role. */
  private async connect(peer: PeerId, target: Endpoint): Promise<{ connection: Connection; remote: Endpoint }> {
    const port = this.port;
    if (port === undefined) throw new PunchError('aborted', 'not started');
    let socket;
    try {
      socket = await this.within(this.opts.punchTimeoutMs, (signal) => connectFromPort({ localPort: port.port, remote: target, signal }));
    } catch (err) {
      if (this.stopping.signal.aborted) throw new PunchError('aborted', 'the service stopped');
      throw new PunchError('timeout', err instanceof PunchTimeoutError ? err.message : String(err));
    }
    const initiator = this.components.peerId.toString() < peer.toString();
    try {
      const connection = await this.within(this.opts.upgradeTimeoutMs, (signal) => upgradeSocket(this.components.upgrader, this.components.logger, socket, { remotePeer: peer, initiator, signal }));
      return { connection, remote: target };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      throw new PunchError(isPeerIdMismatch(err) ? 'peer-id-mismatch' : 'upgrade-failed', `${formatEndpoint(target)}: ${message}`);
    }
  }

  /** Runs one attempt with its bookkeeping: counters, events, the in-flight gauge. */
  private async attempt(peer: PeerId, role: PunchRole, attempt: number, isLast: boolean, run: () => Promise<{ connection: Connection; remote: Endpoint }>): Promise<PunchResult> {
    const start = performance.now();
    const overRate = this.overRate(start);
    this.counts.attempts += 1;
    this.counts.inFlight += 1;
    try {
      if (overRate) throw new PunchError('rate-limited', `more than ${this.opts.maxPerMinute} punches in the last minute`);
      const { connection, remote } = await run();
      this.counts.successes += 1;
      const ms = Math.round(performance.now() - start);
      this.log('punched %p as %s in %d ms: %a', peer, role, ms, connection.remoteAddr);
      this.safeDispatchEvent('punch:success', { detail: { peer: peer.toString(), role, attempt, ms, remote: formatEndpoint(remote), connection } });
      return { ok: true, connection };
    } catch (err) {
      const e = err instanceof PunchError ? err : new PunchError(this.stopping.signal.aborted ? 'aborted' : 'coordination-failed', err instanceof Error ? err.message : String(err));
      this.counts.failures[e.reason] += 1;
      const final = isLast || !RETRYABLE.has(e.reason) || role === 'responder';
      this.log('punch to %p as %s (attempt %d) failed: %s - %s', peer, role, attempt, e.reason, e.message);
      this.safeDispatchEvent('punch:failure', { detail: { peer: peer.toString(), role, attempt, ms: Math.round(performance.now() - start), reason: e.reason, message: e.message, final } });
      return { ok: false, reason: e.reason, message: e.message };
    } finally {
      this.counts.inFlight -= 1;
    }
  }

  /** Counts an attempt starting at `now` in the last minute's window; true when it is one too many. */
  private overRate(now: number): boolean {
    while (this.recent.length > 0 && this.recent[0]! <= now - 60_000) this.recent.shift();
    if (this.recent.length >= this.opts.maxPerMinute) return true;
    this.recent.push(now);
    return false;
  }

  private offer(): PunchOffer {
    const m = this.mapping();
    return { mapping: m.mapping, nat: m.natType };
  }

  private coordinationOptions(peer: PeerId): CoordinationOptions {
    const port = this.port;
    return {
      timeoutMs: this.opts.coordinationTimeoutMs,
      allowPrivateAddrs: this.opts.allowPrivateAddrs,
      punchThroughSymmetric: this.opts.punchThroughSymmetric,
      ...(this.opts.requireWitness && port !== undefined ? { witness: (target: Endpoint) => port.witnessed(peer.toString(), target) } : {}),
    };
  }

  private directConnection(peer: PeerId): Connection | undefined {
    return this.components.connectionManager.getConnections(peer).find((c) => c.status === 'open' && c.limits === undefined && c.direct);
  }

  /** Runs one step of a punch under its deadline, which the service's stop also ends (deadline.ts: why not AbortSignal.any). */
  private within<T>(ms: number, step: (signal: AbortSignal) => Promise<T>): Promise<T> {
    return withDeadline(ms, this.stopping.signal, step);
  }

  private coolDown(peer: string): void {
    if (this.cooldown.size >= MAX_COOLDOWN_ENTRIES) this.cooldown.delete(this.cooldown.keys().next().value!);
    this.cooldown.set(peer, performance.now() + this.opts.cooldownMs);
  }
}

/** The service factory, for `services: { holePunch: holePunch({ observers: [manager] }) }` in createLibp2p. */
export function holePunch(init: HolePunchInit = {}): (components: HolePunchComponents) => HolePunch {
  return (components) => new HolePunchService(components, init);
}
