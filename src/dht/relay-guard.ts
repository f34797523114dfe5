// A relay's share rule (docs/nat.md, "Relay service"): libp2p's relay server
// limits reservations per peer id and in total, and bytes and time per
// relayed connection, but one host with many peer ids could take every slot.
// This guard, asked through libp2p's connection gater before each
// reservation, refuses a peer whose IP address already holds `maxPerIp`
// live reservations (a refresh by a peer that holds one is always allowed).
// A reservation counts as live until its TTL passes or its peer has no
// connection to us left.
//
// It also holds the relay's byte budget per period (libp2p's relay limits
// bytes per relayed *connection* only, so a peer could open connection after
// connection): each circuit the relay opens, asked through the gater's
// denyOutboundRelayedConnection, is charged the most it can carry (the
// relay's per-connection data limit, after which libp2p cuts it) against the
// reservation it goes to and against the relay's total; a circuit that would
// pass either budget in the current period is refused. Charging the cap, not
// the bytes carried, makes the budget a hard bound (libp2p does not expose the
// bytes a circuit carried) at the price of counting a small circuit as a big one.
import type { PeerId } from '@libp2p/interface';
import type { ConnectionManager } from '@libp2p/interface-internal';
import { tcpEndpointOf } from './holepunch/endpoint.js';

export interface RelayGuardOptions {
  /** Live reservations one IP address may hold. */
  maxPerIp: number;
  /** How long a granted reservation lasts unless refreshed, ms (the relay's reservationTtl). */
  reservationTtlMs: number;
  /** Peers remembered at most (the relay's maxReservations is far below). */
  maxTracked?: number;
  /** The byte budget (absent: none beyond libp2p's per-connection limit). */
  budget?: RelayBudget;
}

export interface RelayBudget {
  /** What one relayed connection may carry (the relay's data limit): each circuit is charged this. */
  perCircuitBytes: number;
  /** Bytes relayed to one reservation's holder per period. */
  perReservationBytes: number;
  /** Bytes the relay carries in all per period (its owner's upload lent to relaying). */
  totalBytes: number;
  periodMs: number;
}

type Connections = Pick<ConnectionManager, 'getConnections'>;

export class RelayGuard {
  private connections: Connections | undefined;
  /** Granted reservations: peer id → the IP it reserved from and when. */
  private readonly granted = new Map<string, { ip: string; at: number }>();
  refused = 0;
  /** Circuits refused because a budget was spent. */
  circuitsRefused = 0;
  /** Bytes charged in the current period: per reservation holder, and in all. */
  private charged = new Map<string, number>();
  private chargedTotal = 0;
  private periodStart: number | undefined;

  constructor(
    private readonly o: RelayGuardOptions,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Gives the guard the node's connections (a service factory's components, once the node exists). */
  bind(connections: Connections): void {
    this.connections = connections;
  }

  /** connectionGater.denyInboundRelayReservation: true refuses the reservation. */
  deny(peer: PeerId): boolean {
    const ip = this.ipOf(peer);
    if (ip === null) return false; // a reservation over a relayed connection is refused by the relay server itself
    const id = peer.toString();
    const t = this.now();
    if (!this.granted.has(id)) {
      let held = 0;
      for (const [other, g] of this.granted) {
        if (!this.live(other, g.at, t)) this.granted.delete(other);
        else if (g.ip === ip) held++;
      }
      if (held >= this.o.maxPerIp) {
        this.refused++;
        return true;
      }
      if (this.granted.size >= (this.o.maxTracked ?? 4096)) this.granted.delete(this.granted.keys().next().value!);
    }
    this.granted.set(id, { ip, at: t });
    return false;
  }

  /** connectionGater.denyOutboundRelayedConnection (asked by the relay server before it opens a circuit from `src` to the reservation holder `dst`): true refuses it. */
  denyCircuit(_src: PeerId, dst: PeerId): boolean {
    const b = this.o.budget;
    if (b === undefined) return false;
    const t = this.now();
    if (this.periodStart === undefined || t - this.periodStart >= b.periodMs) {
      this.periodStart = t;
      this.charged = new Map();
      this.chargedTotal = 0;
    }
    const id = dst.toString();
    const mine = this.charged.get(id) ?? 0;
    if (mine + b.perCircuitBytes > b.perReservationBytes || this.chargedTotal + b.perCircuitBytes > b.totalBytes) {
      this.circuitsRefused++;
      return true;
    }
    if (!this.charged.has(id) && this.charged.size >= (this.o.maxTracked ?? 4096)) return (this.circuitsRefused++, true);
    this.charged.set(id, mine + b.perCircuitBytes);
    this.chargedTotal += b.perCircuitBytes;
    return false;
  }

  /** Bytes charged in the current period to `peer`'s reservation, and in all. */
  budgetUsed(peer?: string): number {
    return peer === undefined ? this.chargedTotal : (this.charged.get(peer) ?? 0);
  }

  /** Live reservations per IP (for tests and logs). */
  heldBy(ip: string): number {
    const t = this.now();
    return [...this.granted].filter(([id, g]) => g.ip === ip && this.live(id, g.at, t)).length;
  }

  private live(id: string, at: number, t: number): boolean {
    if (t - at >= this.o.reservationTtlMs) return false;
    return this.connections === undefined || this.connections.getConnections().some((c) => c.remotePeer.toString() === id && c.status === 'open');
  }

  private ipOf(peer: PeerId): string | null {
    for (const c of this.connections?.getConnections(peer) ?? []) {
      if (c.status !== 'open' || c.limits !== undefined) continue;
      const e = tcpEndpointOf(c.remoteAddr);
      if (e !== null) return e.ip;
    }
    return null;
  }
}
