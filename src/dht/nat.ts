// The NAT-traversal parts of a volcrawl peer's libp2p stack (docs/nat.md,
// "Design for phase 2"): AutoNAT v2 (client and server) to confirm public
// addresses, Circuit Relay v2 (a client that holds reservations, and a server
// with limits on public peers), DCUtR's connection reversal, UPnP/NAT-PMP port
// mapping (AutoNAT confirms the mapping; never on a LAN network), volcrawl's
// own TCP hole punch, and the reachability service that reads what they found.
// libp2p.ts merges these into the stack; nothing here starts on its own.
import { autoNATv2 } from '@libp2p/autonat-v2';
import { circuitRelayServer, circuitRelayTransport } from '@libp2p/circuit-relay-v2';
import { dcutr } from '@libp2p/dcutr';
import { uPnPNAT } from '@libp2p/upnp-nat';
import { holePunch, type HolePunchInit } from './holepunch/index.js';
import { reachability } from './reachability.js';
import { RelayGuard } from './relay-guard.js';
import { PrivateDialGuard } from './dial-guard.js';
import type { Multiaddr } from '@multiformats/multiaddr';
import type { PeerId } from '@libp2p/interface';
import type { ConnectionManager } from '@libp2p/interface-internal';

/** Relay service limits (per reservation / relayed connection; docs/nat.md, "Relay service"). */
export interface RelayServerLimits {
  /** Reservations held at once (one per peer id). */
  maxReservations: number;
  /** How long a reservation lasts unless refreshed, ms. */
  reservationTtlMs: number;
  /** Bytes one relayed connection may carry (both ways) before the relay cuts it. */
  dataLimitBytes: number;
  /** How long one relayed connection may last, ms. */
  durationLimitMs: number;
  /** Live reservations one IP address may hold (relay-guard.ts; many peer ids on one host cannot take every slot). */
  maxReservationsPerIp: number;
  /** Bytes relayed to one reservation's holder per budget period (relay-guard.ts: each circuit is charged its data limit). */
  budgetPerReservationBytes: number;
  /** Bytes the relay carries in all per budget period. */
  budgetTotalBytes: number;
  budgetPeriodMs: number;
}

/** Sized for what crosses a relay: tasks and acknowledgements (a few KiB), never pages. */
// Per IP: a carrier-grade NAT puts many homes behind one address, so the manager allows more.
// Budgets: 64 MiB an hour per reservation is 256 circuits at the cap — a NATed volunteer's
// neighbours meet it over the relay (≤ 3 dials a minute each way) and hand it tasks; a
// volunteer relay lends at most 1 GiB an hour of its owner's upload, the manager 16 GiB.
export const VOLUNTEER_RELAY_LIMITS: RelayServerLimits = {
  maxReservations: 32,
  reservationTtlMs: 30 * 60_000,
  dataLimitBytes: 256 * 1024,
  durationLimitMs: 10 * 60_000,
  maxReservationsPerIp: 4,
  budgetPerReservationBytes: 64 * 1024 * 1024,
  budgetTotalBytes: 1024 * 1024 * 1024,
  budgetPeriodMs: 60 * 60_000,
};
export const MANAGER_RELAY_LIMITS: RelayServerLimits = { ...VOLUNTEER_RELAY_LIMITS, maxReservations: 256, maxReservationsPerIp: 16, budgetTotalBytes: 16 * 1024 * 1024 * 1024 };

export interface NatOptions {
  /** Offer relay service with these limits (the manager; volunteers that know they are public). */
  relayServer?: RelayServerLimits;
  /** Relays to hold reservations on when not publicly reachable (discovered among connected peers; default 2, 0 for none). */
  relayReservations?: number;
  /** Ask the router for a port mapping (UPnP IGD / NAT-PMP). Default false: it opens a port in the owner's router. */
  upnp?: boolean;
  /** volcrawl's TCP hole punch (observers are set later by the node, from its bootstrap peers). */
  holePunch?: HolePunchInit | false;
  /** A LAN network: every (private) address counts as reachable. */
  lan?: boolean;
  /** Refuse to dial private, loopback and link-local addresses peers advertise, but for these
   * (the owner's bootstrap addresses) and hosts connected to us from our LAN (dial-guard.ts). Never on a LAN network. */
  guardPrivateDials?: { allow: string[] };
}

/** The connection gater's relay hooks (relay-guard.ts). */
type RelayGater = {
  denyInboundRelayReservation?: (peer: PeerId) => boolean;
  denyOutboundRelayedConnection?: (src: PeerId, dst: PeerId) => boolean;
  denyDialMultiaddr?: (ma: Multiaddr) => boolean;
};

/** The transports, services, extra listen addresses and connection gater the NAT parts add to a stack. */
export function natStackParts(o: NatOptions): {
  transports: ReturnType<typeof circuitRelayTransport>[];
  services: Record<string, unknown>;
  listen: string[];
  connectionGater?: RelayGater;
} {
  const reservations = o.relayReservations ?? 2;
  const services: Record<string, unknown> = {
    autonat: autoNATv2(),
    dcutr: dcutr(),
    reachability: reachability({ lan: o.lan === true }),
  };
  if (o.holePunch !== false) services.holePunch = holePunch({ ...(o.holePunch ?? {}), allowPrivateAddrs: o.lan === true || o.holePunch?.allowPrivateAddrs === true });
  if (o.upnp === true && o.lan !== true) services.upnp = uPnPNAT({ autoConfirmAddress: false, portMappingDescription: 'volcrawl volunteer' });
  let connectionGater: RelayGater | undefined;
  if (o.guardPrivateDials !== undefined && o.lan !== true) {
    const dials = new PrivateDialGuard(o.guardPrivateDials.allow);
    services.dialGuard = (components: { connectionManager: ConnectionManager }) => (dials.bind(components.connectionManager), dials);
    connectionGater = { denyDialMultiaddr: (ma) => dials.deny(ma) };
  }
  if (o.relayServer !== undefined) {
    const l = o.relayServer;
    const guard = new RelayGuard({
      maxPerIp: l.maxReservationsPerIp,
      reservationTtlMs: l.reservationTtlMs,
      budget: { perCircuitBytes: l.dataLimitBytes, perReservationBytes: l.budgetPerReservationBytes, totalBytes: l.budgetTotalBytes, periodMs: l.budgetPeriodMs },
    });
    services.relayGuard = (components: { connectionManager: ConnectionManager }) => (guard.bind(components.connectionManager), guard);
    connectionGater = { ...connectionGater, denyInboundRelayReservation: (peer) => guard.deny(peer), denyOutboundRelayedConnection: (src, dst) => guard.denyCircuit(src, dst) };
    services.relay = circuitRelayServer({
      reservations: { maxReservations: l.maxReservations, reservationTtl: l.reservationTtlMs, defaultDataLimit: BigInt(l.dataLimitBytes), defaultDurationLimit: l.durationLimitMs, applyDefaultLimit: true },
    });
  }
  return {
    transports: [circuitRelayTransport({ reservationCompletionTimeout: 20_000 })],
    services,
    // Discovery mode: a relay among the connected peers, never fatal at start (a configured relay that refuses is).
    listen: Array.from({ length: reservations }, () => '/p2p-circuit'),
    ...(connectionGater !== undefined ? { connectionGater } : {}),
  };
}

/** The manager's NAT parts: public by its operator's --announce, it relays for
 * NATed volunteers, observes their punch ports and confirms their addresses
 * (AutoNAT server); it never reserves on a relay nor punches. */
export const MANAGER_NAT: NatOptions = { relayServer: MANAGER_RELAY_LIMITS, relayReservations: 0, holePunch: { auto: false } };
