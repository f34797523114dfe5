// A volunteer must not become a scanner of its owner's network (BRIEF: "a
// volunteer's machine is never turned against its owner's network"). libp2p
// dials every address a peer advertises, and a NATed peer advertises its own
// LAN addresses (192.168.x.y, 10.x, loopback, link-local); so, unguarded, any
// peer could make this node knock on a port of the owner's router, printer or
// NAS by advertising such an address. This guard, asked through libp2p's
// connection gater (`denyDialMultiaddr`) before every dial of a node that is
// not on a LAN network (--lan), refuses private, loopback and link-local
// addresses, except where the node itself judges the peer to be on its LAN:
//
//   - an address the owner gave (the bootstrap list);
//   - an IP address some peer is connected to us from right now (that host
//     talks to us from there: it is on our network, and already knows us).
//
// Public addresses, relay addresses (/p2p-circuit over a public relay) and DNS
// names pass; a refused dial is counted.
import type { Multiaddr } from '@multiformats/multiaddr';
import type { ConnectionManager } from '@libp2p/interface-internal';
import { isPrivateIp } from '@libp2p/utils';

type Connections = Pick<ConnectionManager, 'getConnections'>;

const IP = /^\/ip[46]\/([^/]+)/;

export class PrivateDialGuard {
  private connections: Connections | undefined;
  private readonly allowed: Set<string>;
  /** Dials refused (a status figure). */
  refused = 0;

  /** `allow`: multiaddrs (or bare IPs) the owner gave, whose IPs may be dialled even when private. */
  constructor(allow: readonly string[] = []) {
    this.allowed = new Set(allow.map((a) => IP.exec(a)?.[1] ?? a));
  }

  /** Gives the guard the node's connections (a service factory's components, once the node exists). */
  bind(connections: Connections): void {
    this.connections = connections;
  }

  /** connectionGater.denyDialMultiaddr: true refuses the dial. */
  deny(ma: Multiaddr): boolean {
    const ip = IP.exec(ma.toString())?.[1];
    if (ip === undefined || isPrivateIp(ip) !== true) return false;
    if (this.allowed.has(ip) || this.onOurLan(ip)) return false;
    this.refused++;
    return true;
  }

  private onOurLan(ip: string): boolean {
    return (this.connections?.getConnections() ?? []).some((c) => c.status === 'open' && c.limits === undefined && IP.exec(c.remoteAddr.toString())?.[1] === ip);
  }
}
