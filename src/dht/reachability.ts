// How others can reach this peer, read from the addresses libp2p itself
// shares (docs/nat.md, "Reachability, as the volunteer sees it"): libp2p only
// shares an address once it is verified (AutoNAT v2 dialled it back, or it is
// a private one), and never says "unreachable", so the state is derived:
//
//   public     a verified public TCP address of its own listener
//   mapped     the same, but the address is a router's port mapping (UPnP/NAT-PMP)
//   relayed    only relay (/p2p-circuit) addresses besides private ones
//   starting   none of these yet, within the grace period after start
//   unreachable none of these after it: nobody can dial this peer
//
// On a LAN network (--lan, and single-host tests) private and loopback
// addresses count as public.
import { TypedEventEmitter, type ComponentLogger, type Logger, type Startable, type TypedEventTarget, type Libp2pEvents } from '@libp2p/interface';
import type { AddressManager } from '@libp2p/interface-internal';
import { isPrivateIp } from '@libp2p/utils';

export type ReachabilityState = 'public' | 'mapped' | 'relayed' | 'starting' | 'unreachable';

/** One of our addresses as libp2p's address manager describes it. */
export interface OwnAddress {
  multiaddr: string;
  verified: boolean;
  /** 'transport' | 'announce' | 'observed' | 'dns-mapping' | 'ip-mapping'. */
  type: string;
}

export interface Reachability {
  state: ReachabilityState;
  /** Verified addresses others can dial directly (public or mapped; private ones on a LAN). */
  direct: string[];
  /** Peer ids of the relays holding a reservation for us. */
  relays: string[];
}

const IP_TCP = /^\/ip[46]\/([^/]+)\/tcp\/\d+/;

/** The state from our addresses (pure); `settled`: the grace period after start is over. */
export function classifyReachability(addrs: readonly OwnAddress[], o: { lan: boolean; settled: boolean }): Reachability {
  const relays = new Set<string>();
  const direct: string[] = [];
  let mapped = false;
  for (const a of addrs) {
    if (a.multiaddr.includes('/p2p-circuit')) {
      const relay = /\/p2p\/(\w+)\/p2p-circuit/.exec(a.multiaddr)?.[1];
      if (relay !== undefined) relays.add(relay);
      continue;
    }
    const ip = IP_TCP.exec(a.multiaddr)?.[1];
    if (ip === undefined || !a.verified) continue;
    if (!o.lan && isPrivateIp(ip) === true) continue; // loopback, LAN, CGN, link-local
    direct.push(a.multiaddr);
    if (a.type === 'ip-mapping') mapped = true;
  }
  const state: ReachabilityState = direct.length > 0 ? (mapped && !o.lan ? 'mapped' : 'public') : relays.size > 0 ? 'relayed' : o.settled ? 'unreachable' : 'starting';
  return { state, direct, relays: [...relays] };
}

export interface ReachabilityInit {
  lan?: boolean;
  /** How long after start "no address yet" reads as `starting` (default 60 s: AutoNAT needs peers first). */
  graceMs?: number;
}

export interface ReachabilityComponents {
  addressManager: AddressManager;
  events: TypedEventTarget<Libp2pEvents>;
  logger: ComponentLogger;
}

export interface ReachabilityEvents {
  change: CustomEvent<Reachability>;
}

export interface ReachabilityService extends TypedEventTarget<ReachabilityEvents> {
  current(): Reachability;
}

class ReachabilityTracker extends TypedEventEmitter<ReachabilityEvents> implements ReachabilityService, Startable {
  readonly [Symbol.toStringTag] = 'volcrawl:reachability';
  private readonly log: Logger;
  private state: Reachability = { state: 'starting', direct: [], relays: [] };
  private startedAt = 0;
  private graceTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly onUpdate = (): void => this.update();

  constructor(
    private readonly components: ReachabilityComponents,
    private readonly init: ReachabilityInit,
  ) {
    super();
    this.log = components.logger.forComponent('volcrawl:reachability');
  }

  start(): void {
    this.startedAt = performance.now();
    this.components.events.addEventListener('self:peer:update', this.onUpdate);
    this.graceTimer = setTimeout(() => this.update(), this.init.graceMs ?? 60_000);
    this.graceTimer.unref?.();
  }

  afterStart(): void {
    this.update();
  }

  stop(): void {
    this.components.events.removeEventListener('self:peer:update', this.onUpdate);
    clearTimeout(this.graceTimer);
  }

  current(): Reachability {
    return this.state;
  }

  private update(): void {
    const addrs = this.components.addressManager.getAddressesWithMetadata().map((a) => ({ multiaddr: a.multiaddr.toString(), verified: a.verified, type: a.type }));
    const settled = performance.now() - this.startedAt >= (this.init.graceMs ?? 60_000);
    const next = classifyReachability(addrs, { lan: this.init.lan === true, settled });
    const same = next.state === this.state.state && next.direct.join() === this.state.direct.join() && next.relays.join() === this.state.relays.join();
    this.state = next;
    if (same) return;
    this.log('reachability %s (direct %s, relays %s)', next.state, next.direct.join(' '), next.relays.join(' '));
    this.safeDispatchEvent('change', { detail: next });
  }
}

/** The service factory (`services: { reachability: reachability() }`). */
export function reachability(init: ReachabilityInit = {}): (components: ReachabilityComponents) => ReachabilityService {
  return (components) => new ReachabilityTracker(components, init);
}
