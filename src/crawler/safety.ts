// The volunteer's own safety: never connect to loopback, private, link-local,
// multicast or otherwise non-public addresses unless allowPrivate is set.
// Checked after DNS resolution (a custom `lookup` for undici's connector), so a
// hostname cannot smuggle in a private address; IP literals are checked before
// connecting because net.connect skips the lookup for them.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // TEST-NET-1
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // TEST-NET-2
  ['203.0.113.0', 24], // TEST-NET-3
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved + broadcast
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
  ['100::', 64], // discard-only
  ['2001:db8::', 32], // documentation
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

/** Expands an IPv6 address to 8 16-bit groups; null if malformed. */
function ipv6Groups(addr: string): number[] | null {
  let a = addr.toLowerCase();
  const pct = a.indexOf('%');
  if (pct >= 0) a = a.slice(0, pct);
  // A trailing dotted quad becomes two groups.
  const dq = /(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (dq?.[1]) {
    const p = dq[1].split('.').map(Number);
    a = a.slice(0, a.length - dq[1].length) + (((p[0]! << 8) | p[1]!) >>> 0).toString(16) + ':' + (((p[2]! << 8) | p[3]!) >>> 0).toString(16);
  }
  const halves = a.split('::');
  if (halves.length > 2) return null;
  const left = halves[0] ? halves[0].split(':') : [];
  const right = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const fill = halves.length === 2 ? 8 - left.length - right.length : 0;
  const groups = [...left, ...Array<string>(Math.max(0, fill)).fill('0'), ...right].map((g) => parseInt(g, 16));
  if (groups.length !== 8 || groups.some((g) => !Number.isFinite(g) || g < 0 || g > 0xffff)) return null;
  return groups;
}

/** The IPv4 address embedded in a mapped/compatible/NAT64/6to4 IPv6 address, if any. */
function embeddedIpv4(groups: number[]): string | null {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups as [number, number, number, number, number, number, number, number];
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible), ::ffff:0:a.b.c.d (translated)
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && ((g4 === 0 && (g5 === 0xffff || g5 === 0)) || (g4 === 0xffff && g5 === 0))) {
    if (g4 === 0 && g5 === 0 && g6 === 0 && g7 <= 1) return null; // :: and ::1 handled by the block list
    return v4(g6, g7);
  }
  if (g0 === 0x64 && g1 === 0xff9b) return v4(g6, g7); // NAT64 64:ff9b::/96 (and /48 local-use)
  if (g0 === 0x2002) return v4(g1, g2); // 6to4
  return null;
}

/** True if the address must not be contacted without allowPrivate. Unparseable → true. */
export function isPrivateAddress(address: string): boolean {
  const fam = isIP(address.split('%')[0] ?? '');
  if (fam === 4) return blocked.check(address, 'ipv4');
  if (fam === 6) {
    const groups = ipv6Groups(address);
    if (!groups) return true;
    const v4 = embeddedIpv4(groups);
    if (v4 !== null) return blocked.check(v4, 'ipv4');
    return blocked.check(address.split('%')[0] as string, 'ipv6');
  }
  return true;
}

export class PrivateAddressError extends Error {
  readonly code = 'EPRIVATE';
  constructor(host: string, address: string) {
    super(`refused to connect to ${host}: ${address} is a loopback/private/link-local/multicast address (use allowPrivate / --allow-private to permit)`);
  }
}

/** Strips IPv6 brackets from a URL hostname. */
export function bareHost(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

/** Checks an IP-literal host before connecting; throws PrivateAddressError. */
export function checkLiteralHost(hostname: string, allowPrivate: boolean): void {
  const h = bareHost(hostname);
  if (!allowPrivate && isIP(h) && isPrivateAddress(h)) throw new PrivateAddressError(h, h);
}

/** A dns.lookup replacement for net.connect that drops non-public addresses. */
export function safeLookup(allowPrivate: boolean): LookupFunction {
  return ((hostname: string, options: { all?: boolean; family?: number }, callback: (...args: unknown[]) => void) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err);
      const ok = allowPrivate ? addresses : addresses.filter((a) => !isPrivateAddress(a.address));
      if (ok.length === 0) return callback(new PrivateAddressError(hostname, addresses[0]?.address ?? '(none)'));
      if (options.all) callback(null, ok);
      else callback(null, ok[0]!.address, ok[0]!.family);
    });
  }) as unknown as LookupFunction;
}

/** Resolves a host once and reports whether it is usable (for an early, clear refusal). */
export async function resolveHost(hostname: string, allowPrivate: boolean): Promise<{ ok: true; addresses: string[] } | { ok: false; error: Error & { code?: string } }> {
  const h = bareHost(hostname);
  if (isIP(h)) {
    if (!allowPrivate && isPrivateAddress(h)) return { ok: false, error: new PrivateAddressError(h, h) };
    return { ok: true, addresses: [h] };
  }
  return new Promise((resolve) => {
    safeLookup(allowPrivate)(h, { all: true }, ((err: (Error & { code?: string }) | null, addrs: LookupAddress[]) => {
      if (err) resolve({ ok: false, error: err });
      else resolve({ ok: true, addresses: addrs.map((a) => a.address) });
    }) as never);
  });
}
