// The volunteer's NAT handling as a node service (docs/nat.md, phase 2): it
// follows the reachability libp2p's parts establish (AutoNAT v2, relay
// reservations, a UPnP mapping), puts kad-dht in server mode only while others
// can dial this node (client mode behind NAT: a DHT server nobody can reach
// stalls every query that picks it), points the hole punch at its observers
// (the bootstrap peers: the manager and public volunteers), and tells the
// owner: a log line on every change, and a snapshot for the status line.
import type { Logger } from 'pino';
import type { Command } from 'commander';
import { multiaddr } from '@multiformats/multiaddr';
import { VOLUNTEER_RELAY_LIMITS, type NatOptions } from '../dht/nat.js';
import type { HolePunch, PunchFailure, PunchMapping, PunchSuccess } from '../dht/holepunch/index.js';
import type { Reachability, ReachabilityService } from '../dht/reachability.js';

export interface NatServiceOptions {
  reachability: ReachabilityService;
  holePunch?: HolePunch;
  /** kad-dht's mode switch. */
  dht: { setMode(mode: 'client' | 'server'): Promise<void>; getMode(): 'client' | 'server' };
  /** Peers that report the hole punch port's public mapping: TCP multiaddrs with /p2p/ (the bootstrap peers). */
  observers: string[];
  log: Logger;
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
}

export class NatService {
  readonly name = 'nat';
  private readonly onChange = (e: CustomEvent<Reachability>): void => void this.apply(e.detail);
  private readonly onPunch = (e: CustomEvent<PunchSuccess>): void =>
    this.o.log.info({ peer: e.detail.peer, role: e.detail.role, ms: e.detail.ms, remote: e.detail.remote }, 'hole punched: direct connection');
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

  constructor(private readonly o: NatServiceOptions) {}

  async start(): Promise<void> {
    const observers = this.o.observers.filter((a) => /^\/ip[46]\/[^/]+\/tcp\/\d+\/p2p\/\w+$/.test(multiaddr(a).toString()));
    this.o.holePunch?.setObservers(observers);
    this.o.holePunch?.addEventListener('punch:success', this.onPunch);
    this.o.holePunch?.addEventListener('punch:failure', this.onPunchFailure);
    this.o.holePunch?.addEventListener('mapping:change', this.onMapping);
    this.o.reachability.addEventListener('change', this.onChange);
    await this.apply(this.o.reachability.current());
  }

  stop(): void {
    this.o.reachability.removeEventListener('change', this.onChange);
    this.o.holePunch?.removeEventListener('punch:success', this.onPunch);
    this.o.holePunch?.removeEventListener('punch:failure', this.onPunchFailure);
    this.o.holePunch?.removeEventListener('mapping:change', this.onMapping);
  }

  status(): NatStatus {
    const r = this.o.reachability.current();
    const hp = this.o.holePunch?.stats();
    const failed = hp === undefined ? 0 : Object.values(hp.failures).reduce((s, n) => s + n, 0);
    return { reachability: r.state, direct: r.direct, relays: r.relays.length, natType: hp?.natType ?? 'unknown', punched: hp?.successes ?? 0, punchFailed: failed };
  }

  private async apply(r: Reachability): Promise<void> {
    const dialable = r.state === 'public' || r.state === 'mapped';
    const mode = dialable ? 'server' : 'client';
    if (this.o.dht.getMode() !== mode) await this.o.dht.setMode(mode).catch((err: unknown) => this.o.log.warn({ err: String(err) }, 'could not switch the DHT mode'));
    this.o.log.info({ reachability: r.state, direct: r.direct, relays: r.relays, dht: mode }, `reachability: ${describe(r)}`);
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
}

/** Adds join's NAT flags (--upnp, --relay) to a command. */
export function registerNatFlags(cmd: Command): Command {
  return cmd
    .option('--upnp', "ask the home router for a port mapping (UPnP / NAT-PMP); opens a port in the router's firewall while the node runs", false)
    .option('--relay', `offer relay service to volunteers behind NAT when this node is publicly reachable (at most ${VOLUNTEER_RELAY_LIMITS.maxReservations} reservations, ${VOLUNTEER_RELAY_LIMITS.dataLimitBytes / 1024} KiB and ${VOLUNTEER_RELAY_LIMITS.durationLimitMs / 60_000} min per relayed connection)`, false);
}

/** The stack's NAT options for a volunteer: none on a LAN network (everyone dials everyone there). */
export function volunteerNatOptions(flags: NatFlags): NatOptions | undefined {
  if (flags.lan === true) return undefined;
  return { upnp: flags.upnp === true, ...(flags.relay === true ? { relayServer: VOLUNTEER_RELAY_LIMITS } : {}), holePunch: {} };
}

/** What the node service needs of a stack: kad-dht, and the NAT services when it was built with NAT options. */
export interface NatCapableLibp2p {
  services: { dht: NatServiceOptions['dht']; reachability?: ReachabilityService; holePunch?: HolePunch };
}

/** The node service for a stack built with NAT options (undefined for a LAN node). */
export function natNodeService(libp2p: NatCapableLibp2p, bootstrap: string[], log: Logger): NatService | undefined {
  const reachability = libp2p.services.reachability;
  if (reachability === undefined) return undefined;
  return new NatService({ reachability, holePunch: libp2p.services.holePunch, dht: libp2p.services.dht, observers: bootstrap, log });
}

/** One short field for the status line. */
export function formatNatStatus(s: NatStatus): string {
  const punched = s.punched > 0 ? `, ${s.punched} punched` : '';
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
