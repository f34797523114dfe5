// An ip:port as the hole punch exchanges it: the public mapping of a punch port.
// On the wire it is `{ ip, port }`, validated strictly; an address that points
// into a private network is refused unless private addresses are allowed (a
// LAN or test network), so a peer cannot make a volunteer connect into its
// owner's network.
import { z } from 'zod';
import { isPrivateIp, tryGetNetConfig } from '@libp2p/utils';
import type { Multiaddr } from '@multiformats/multiaddr';

export const endpointSchema = z.strictObject({
  ip: z.union([z.ipv4(), z.ipv6()]),
  port: z.number().int().min(1).max(65_535),
});
export type Endpoint = z.infer<typeof endpointSchema>;

export function formatEndpoint(e: Endpoint): string {
  return e.ip.includes(':') ? `[${e.ip}]:${e.port}` : `${e.ip}:${e.port}`;
}

export function sameEndpoint(a: Endpoint, b: Endpoint): boolean {
  return a.ip === b.ip && a.port === b.port;
}

/** The TCP ip:port of a multiaddr (`/ip4/…/tcp/…[/p2p/…]`), or null for anything else (relay, DNS, UDP). */
export function tcpEndpointOf(ma: Multiaddr): Endpoint | null {
  if (ma.getComponents().some((c) => c.name === 'p2p-circuit')) return null;
  const cfg = tryGetNetConfig(ma);
  if (cfg === null || (cfg.type !== 'ip4' && cfg.type !== 'ip6') || cfg.protocol !== 'tcp' || cfg.port === undefined) return null;
  return { ip: cfg.host, port: cfg.port };
}

/** Whether a peer's endpoint may be dialled: public unicast, or anything when `allowPrivate`. */
export function isDialableEndpoint(e: Endpoint, allowPrivate: boolean): boolean {
  // isPrivateIp covers loopback, link-local, CGN (100.64/10), ULA and the unspecified addresses.
  return allowPrivate || (isPrivateIp(e.ip) !== true && e.ip !== '::');
}
