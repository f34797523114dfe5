// The volunteer's NAT handling as a node service (docs/nat.md, phase 2): it
// follows the reachability libp2p's parts establish (AutoNAT v2, relay
// reservations, a UPnP mapping), puts kad-dht in server mode only while others
// can dial this node (client mode behind NAT: a DHT server nobody can reach
// stalls every query that picks it), points the hole punch at its observers
// (the bootstrap peers: the manager and public volunteers), and tells the
// owner: a log line on every change, and a snapshot for the status line.
import type { Logger } from 'pino';
import { InvalidArgumentError, type Command } from 'commander';
import { multiaddr } from '@multiformats/multiaddr';
import { peerIdFromString } from '@libp2p/peer-id';
import type { Connection, PeerId } from '@libp2p/interface';
import { VOLUNTEER_RELAY_LIMITS, type NatOptions } from '../dht/nat.js';
import type { HolePunch, PunchFailure, PunchMapping, PunchSuccess } from '../dht/holepunch/index.js';
import type { Reachability, ReachabilityService } from '../dht/reachability.js';
import type { ReachKind } from '../dht/volunteer-state.js';
import { TaskPuller } from '../dht/task-pull.js';
import type { VolunteerNode } from './node.js';

export interface NatServiceOptions {
  reachability: ReachabilityService;
  holePunch?: HolePunch;
  /** kad-dht's mode switch. */
  dht: { setMode(mode: 'client' | 'server'): Promise<void>; getMode(): 'client' | 'server' };
  /** Peers that report the hole punch port's public mapping: TCP multiaddrs with /p2p/ (the bootstrap peers). */
  observers: string[];
  /** Meeting neighbours behind NAT (see `meet`); without it the node only punches when someone dials it over a relay. */
  meet?: MeetOptions;
  /** Relays it may reserve on (0: none — such a node pulls its tasks as soon as it is not public). */
  reservations?: number;
  /** Told when `reach()` changes (the owner's state report carries it to the manager). */
  onReachChange?: (reach: ReachKind) => void;
  log: Logger;
}

/** How a NATed node meets the crawlers near it (which are likely NATed too). */
export interface MeetOptions {
  /** Crawlers near this node's coordinate (a cell lookup around it), ids. */
  nearby(): Promise<string[]>;
  /** libp2p: open a connection (a relayed one when the peer has only relay addresses) and list ours. */
  dial(peer: PeerId, options: { signal: AbortSignal }): Promise<Connection>;
  getConnections(peer: PeerId): Connection[];
  /** Gap between rounds, ms (default 60 s; the first round 10 s after the node became relayed). */
  everyMs?: number;
  /** Peers dialled per round (default 3). */
  perRound?: number;
}

export interface NatStatus {
  reachability: Reachability['state'];
  /** Addresses others dial directly (public or mapped). */
  direct: string[];
  /** Relays holding a reservation for this node. */
  relays: number;
  /** The hole punch: NAT type as its observers see it, punches that succeeded / failed. */
  natType: string;
  punched: number;
  punchFailed: number;
  /** Nobody can dial this node: it pulls its tasks. */
  pull: boolean;
  /** Peers a punch reached (most recent last, at most PUNCHED_PEERS_KEPT). */
  punchedPeers: string[];
}

/** Peers kept in the status's punched list. */
const PUNCHED_PEERS_KEPT = 64;

export class NatService {
  readonly name = 'nat';
  private readonly onChange = (e: CustomEvent<Reachability>): void => void this.apply(e.detail);
  private readonly onPunch = (e: CustomEvent<PunchSuccess>): void => {
    this.o.log.info({ peer: e.detail.peer, role: e.detail.role, ms: e.detail.ms, remote: e.detail.remote }, 'hole punched: direct connection');
    this.punchedPeers.delete(e.detail.peer);
    this.punchedPeers.add(e.detail.peer);
    if (this.punchedPeers.size > PUNCHED_PEERS_KEPT) this.punchedPeers.delete(this.punchedPeers.values().next().value!);
    this.reachChanged();
  };
  private lastReach: ReachKind | undefined;
  private readonly punchedPeers = new Set<string>();
  private natType = 'unknown';
  private readonly onMapping = (e: CustomEvent<PunchMapping>): void => {
    if (e.detail.natType === this.natType) return;
    this.natType = e.detail.natType;
    const at = e.detail.mapping === null ? null : `${e.detail.mapping.ip}:${e.detail.mapping.port}`;
    const punchable = e.detail.natType === 'symmetric' ? 'hole punching cannot work through it' : 'hole punching can work';
    this.o.log.info({ natType: e.detail.natType, mapping: at, observers: e.detail.observations.length }, `NAT type: ${e.detail.natType} (${punchable})`);
  };
  private readonly onPunchFailure = (e: CustomEvent<PunchFailure>): void => {
    if (e.detail.final) this.o.log.info({ peer: e.detail.peer, role: e.detail.role, reason: e.detail.reason }, 'hole punch failed: staying on the relay');
  };

  private meetTimer: ReturnType<typeof setTimeout> | undefined;
  /** performance.now() until which the manager asked this node to pull (its pushes failed). */
  private pullUntil = 0;
  private adviceTimer: ReturnType<typeof setTimeout> | undefined;
  private meeting = false;
  private running = false;
  /** Relayed dials made to meet neighbours (a status figure). */
  private met = 0;

  constructor(private readonly o: NatServiceOptions) {}

  async start(): Promise<void> {
    const observers = this.o.observers.filter((a) => /^\/ip[46]\/[^/]+\/tcp\/\d+\/p2p\/\w+$/.test(multiaddr(a).toString()));
    this.o.holePunch?.setObservers(observers);
    this.o.holePunch?.addEventListener('punch:success', this.onPunch);
    this.o.holePunch?.addEventListener('punch:failure', this.onPunchFailure);
    this.o.holePunch?.addEventListener('mapping:change', this.onMapping);
    this.o.reachability.addEventListener('change', this.onChange);
    this.running = true;
    await this.apply(this.o.reachability.current());
  }

  stop(): void {
    this.running = false;
    clearTimeout(this.meetTimer);
    clearTimeout(this.adviceTimer);
    this.o.reachability.removeEventListener('change', this.onChange);
    this.o.holePunch?.removeEventListener('punch:success', this.onPunch);
    this.o.holePunch?.removeEventListener('punch:failure', this.onPunchFailure);
    this.o.holePunch?.removeEventListener('mapping:change', this.onMapping);
  }

  status(): NatStatus {
    const r = this.o.reachability.current();
    const hp = this.o.holePunch?.stats();
    const failed = hp === undefined ? 0 : Object.values(hp.failures).reduce((s, n) => s + n, 0);
    return { reachability: r.state, direct: r.direct, relays: r.relays.length, natType: hp?.natType ?? 'unknown', punched: hp?.successes ?? 0, punchFailed: failed, pull: this.pullMode(), punchedPeers: [...this.punchedPeers] };
  }

  /** Nobody can dial this node (no direct address, no relay), or the manager said its pushes fail: it pulls its tasks (src/dht/task-pull.ts). */
  pullMode(): boolean {
    const s = this.o.reachability.current().state;
    return s === 'unreachable' || (s === 'starting' && this.o.reservations === 0) || performance.now() < this.pullUntil;
  }

  /** The manager's pushes to this node failed (src/dht/push-failures.ts): pull for `ms`, then let it push again. */
  advisePull(ms: number): void {
    if (!this.running || ms <= 0) return;
    const until = performance.now() + ms;
    if (until <= this.pullUntil) return;
    this.pullUntil = until;
    this.o.log.info({ pull: true, forMs: ms }, `the manager's pushes to this node fail: pulling tasks for ${Math.round(ms / 1000)} s`);
    clearTimeout(this.adviceTimer);
    this.adviceTimer = setTimeout(() => {
      this.o.log.info({ pull: this.pullMode() }, 'pull advice over: tasks are pushed again');
      this.reachChanged();
    }, ms + 10);
    this.adviceTimer.unref?.();
    this.reachChanged();
  }

  /** How others reach this node, in the manager's words (the state report, the dashboard). */
  reach(): ReachKind {
    if (this.pullMode()) return 'pull';
    const s = this.o.reachability.current().state;
    if (s === 'relayed' && (this.o.holePunch?.stats().successes ?? 0) > 0) return 'punched';
    return s;
  }

  private reachChanged(): void {
    const r = this.reach();
    if (r === this.lastReach) return;
    this.lastReach = r;
    this.o.onReachChange?.(r);
  }

  private async apply(r: Reachability): Promise<void> {
    this.reachChanged();
    const dialable = r.state === 'public' || r.state === 'mapped';
    const mode = dialable ? 'server' : 'client';
    if (this.o.dht.getMode() !== mode) await this.o.dht.setMode(mode).catch((err: unknown) => this.o.log.warn({ err: String(err) }, 'could not switch the DHT mode'));
    this.o.log.info({ reachability: r.state, direct: r.direct, relays: r.relays, dht: mode }, `reachability: ${describe(r)}`);
    if (r.state === 'relayed' && this.meetTimer === undefined) this.scheduleMeet(10_000);
  }

  private scheduleMeet(ms: number): void {
    if (!this.running || this.o.meet === undefined) return;
    this.meetTimer = setTimeout(() => void this.meetRound().finally(() => this.scheduleMeet(this.o.meet?.everyMs ?? 60_000)), ms);
    this.meetTimer.unref?.();
  }

  /**
   * Two NATed volunteers never meet by themselves: both are DHT clients, and
   * each only connects to the peers it bootstrapped from. So, while this node
   * is reachable only through relays and its NAT lets a punch pass, it looks
   * up the crawlers announced near its coordinate — its natural neighbours, for
   * probing and for tasks it hands on — and dials a few it has no direct
   * connection to. A NATed one is reached over a relay, and being that
   * connection's inbound side it starts the hole punch; after it, probes and
   * tasks take the direct connection.
   */
  async meetRound(): Promise<number> {
    const m = this.o.meet;
    if (m === undefined || this.meeting || !this.running) return 0;
    if (this.o.reachability.current().state !== 'relayed' || this.o.holePunch?.stats().natType === 'symmetric') return 0;
    this.meeting = true;
    let dialled = 0;
    try {
      const ids = await m.nearby().catch(() => [] as string[]);
      for (const id of ids) {
        if (dialled >= (m.perRound ?? 3) || !this.running) break;
        let peer: PeerId;
        try {
          peer = peerIdFromString(id);
        } catch {
          continue;
        }
        if (m.getConnections(peer).some((c) => c.status === 'open' && c.limits === undefined)) continue;
        dialled++;
        try {
          const c = await m.dial(peer, { signal: AbortSignal.timeout(20_000) });
          this.met++;
          this.o.log.debug({ peer: id, relayed: c.limits !== undefined }, 'dialled a nearby crawler to meet it');
        } catch (err) {
          this.o.log.debug({ peer: id, err: String(err) }, 'could not dial a nearby crawler');
        }
      }
    } finally {
      this.meeting = false;
    }
    return dialled;
  }
}

/** The owner's words for a state (status line and logs). */
export function describe(r: Pick<Reachability, 'state' | 'direct' | 'relays'>): string {
  switch (r.state) {
    case 'public':
      return `public (${r.direct[0] ?? ''})`;
    case 'mapped':
      return `mapped by the router (${r.direct[0] ?? ''})`;
    case 'relayed':
      return `behind NAT, reachable via ${r.relays.length} relay${r.relays.length === 1 ? '' : 's'}`;
    case 'starting':
      return 'finding out whether others can reach this node';
    case 'unreachable':
      return 'behind NAT, no relay yet: nobody can reach this node';
  }
}

/** The join flags that shape NAT handling. */
export interface NatFlags {
  lan?: boolean;
  upnp?: boolean;
  relay?: boolean;
  relayReservations?: number;
  reportEvery?: number;
}

/** Adds join's NAT flags (--upnp, --relay) to a command. */
export function registerNatFlags(cmd: Command): Command {
  return cmd
    .option('--upnp', "ask the home router for a port mapping (UPnP / NAT-PMP); opens a port in the router's firewall while the node runs", false)
    .option('--relay-reservations <n>', 'relays to hold a reservation on while behind NAT (0: none; the node then pulls its tasks from the manager)', (v: string) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0 || n > 8) throw new InvalidArgumentError('--relay-reservations must be an integer from 0 to 8');
      return n;
    })
    .option('--report-every <ms>', "behind NAT: how often the node re-reports its state to the manager, whose answer says whether the manager's pushes reach it (if not, it pulls its tasks for a while)", (v: string) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1000 || n > 3_600_000) throw new InvalidArgumentError('--report-every must be an integer number of ms from 1000 to 3600000');
      return n;
    }, 60_000)
    .option('--relay', `offer relay service to volunteers behind NAT when this node is publicly reachable (at most ${VOLUNTEER_RELAY_LIMITS.maxReservations} reservations, ${VOLUNTEER_RELAY_LIMITS.maxReservationsPerIp} per IP address, ${VOLUNTEER_RELAY_LIMITS.dataLimitBytes / 1024} KiB and ${VOLUNTEER_RELAY_LIMITS.durationLimitMs / 60_000} min per relayed connection, ${VOLUNTEER_RELAY_LIMITS.budgetPerReservationBytes / 2 ** 20} MiB per reservation and ${VOLUNTEER_RELAY_LIMITS.budgetTotalBytes / 2 ** 20} MiB in all per ${VOLUNTEER_RELAY_LIMITS.budgetPeriodMs / 60_000} min)`, false);
}

/** The stack's NAT options for a volunteer: none on a LAN network (everyone dials everyone there); `bootstrap`: the owner's addresses, dialled even when private. */
export function volunteerNatOptions(flags: NatFlags, bootstrap: string[] = []): NatOptions | undefined {
  if (flags.lan === true) return undefined;
  // A peer's LAN addresses are not dialled (dial-guard.ts): the owner's network is never scanned on a peer's word.
  return { guardPrivateDials: { allow: bootstrap }, upnp: flags.upnp === true, ...(flags.relayReservations !== undefined ? { relayReservations: flags.relayReservations } : {}), ...(flags.relay === true ? { relayServer: VOLUNTEER_RELAY_LIMITS } : {}), holePunch: {} };
}

/** What the node service needs of a stack: kad-dht, and the NAT services when it was built with NAT options. */
export interface NatCapableLibp2p {
  services: { dht: NatServiceOptions['dht']; reachability?: ReachabilityService; holePunch?: HolePunch };
}

/** The node service for a stack built with NAT options (undefined for a LAN node). */
export function natNodeService(
  libp2p: NatCapableLibp2p,
  bootstrap: string[],
  log: Logger,
  meet?: MeetOptions,
  more: Pick<NatServiceOptions, 'reservations' | 'onReachChange'> = {},
): NatService | undefined {
  const reachability = libp2p.services.reachability;
  if (reachability === undefined) return undefined;
  return new NatService({ reachability, holePunch: libp2p.services.holePunch, dht: libp2p.services.dht, observers: bootstrap, log, ...(meet !== undefined ? { meet } : {}), ...more });
}

/** The pull fallback of a NATed volunteer (src/dht/task-pull.ts): while nobody can dial it, it asks the manager
 * for up to its free slots of orders, and runs each through its task receiver as if it had been pushed. */
export function natPuller(node: VolunteerNode, nat: NatService, manager: string, log: Logger): TaskPuller {
  return new TaskPuller({
    libp2p: node.libp2p,
    manager,
    active: () => nat.pullMode(),
    free: () => (node.paused ? 0 : node.runner.load().free),
    coord: () => node.vivaldi.coord,
    handle: (envelope) => node.receiver.handle({ envelope, hops: 0 }, manager),
    log,
  });
}

/** One short field for the status line. */
export function formatNatStatus(s: NatStatus): string {
  const punched = s.punched > 0 ? `, ${s.punched} punched` : '';
  if (s.pull) return 'pulling tasks (pushes do not reach this node)';
  switch (s.reachability) {
    case 'public':
      return `public${punched}`;
    case 'mapped':
      return `mapped ${s.direct[0] ?? ''}${punched}`;
    case 'relayed':
      return `relayed via ${s.relays}${punched}`;
    default:
      return s.reachability;
  }
}
