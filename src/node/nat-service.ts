// The volunteer's NAT handling as a node service (docs/nat.md, phase 2): it
// follows the reachability libp2p's parts establish (AutoNAT v2, relay
// reservations, a UPnP mapping), puts kad-dht in server mode only while others
// can dial this node (client mode behind NAT: a DHT server nobody can reach
// stalls every query that picks it), points the hole punch at its observers
// (the bootstrap peers: the manager and public volunteers), and tells the
// owner: a log line on every change, and a snapshot for the status line.
import type { Logger } from 'pino';
import { multiaddr } from '@multiformats/multiaddr';
import type { HolePunch, PunchFailure, PunchSuccess } from '../dht/holepunch/index.js';
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
  private readonly onPunchFailure = (e: CustomEvent<PunchFailure>): void => {
    if (e.detail.final) this.o.log.info({ peer: e.detail.peer, role: e.detail.role, reason: e.detail.reason }, 'hole punch failed: staying on the relay');
  };

  constructor(private readonly o: NatServiceOptions) {}

  async start(): Promise<void> {
    const observers = this.o.observers.filter((a) => /^\/ip[46]\/[^/]+\/tcp\/\d+\/p2p\/\w+$/.test(multiaddr(a).toString()));
    this.o.holePunch?.setObservers(observers);
    this.o.holePunch?.addEventListener('punch:success', this.onPunch);
    this.o.holePunch?.addEventListener('punch:failure', this.onPunchFailure);
    this.o.reachability.addEventListener('change', this.onChange);
    await this.apply(this.o.reachability.current());
  }

  stop(): void {
    this.o.reachability.removeEventListener('change', this.onChange);
    this.o.holePunch?.removeEventListener('punch:success', this.onPunch);
    this.o.holePunch?.removeEventListener('punch:failure', this.onPunchFailure);
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
