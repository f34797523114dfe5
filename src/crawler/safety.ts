// The volunteer's own safety: never connect to loopback, private, link-local,
// multicast or otherwise non-public addresses unless allowPrivate is set, and
// never to what the owner's block list names (host names, domains and their
// subdomains, address ranges), allowPrivate or not. Checked after DNS
// resolution (a custom `lookup` for undici's connector, so every connection —
// the first, a reconnect, one after a redirect — passes it), so a hostname
// cannot smuggle in a refused address; IP literals are checked before
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

/** The IPv4 address inside an IPv6 one (mapped, NAT64, 6to4), or null. */
function embeddedIn(address: string): string | null {
  const groups = ipv6Groups(address);
  return groups ? embeddedIpv4(groups) : null;
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

/** The owner's block list as written in the preferences (see src/node/prefs.ts, [never_fetch]). */
export interface OwnerBlockRules {
  /** Exact host names (lower-case ASCII, no trailing dot). */
  domains: string[];
  /** A domain and every name under it. */
  domainSuffixes: string[];
  /** CIDR ranges "addr/prefix", IPv4 or IPv6. */
  addressRanges: string[];
}

/**
 * The owner's block list, as the connect path checks it. One object is shared
 * by all task threads; update() swaps the rules in place, so a reloaded
 * preference file applies to the next connection of every running task.
 */
export class OwnerBlockList {
  private names = new Set<string>();
  private suffixes: string[] = [];
  private ranges = new BlockList();
  private rangeList: string[] = [];

  constructor(rules?: OwnerBlockRules) {
    if (rules) this.update(rules);
  }

  update(rules: OwnerBlockRules): void {
    const ranges = new BlockList();
    for (const r of rules.addressRanges) {
      const [addr, prefix] = r.split('/') as [string, string | undefined];
      const family = isIP(addr);
      if (family === 0) throw new RangeError(`not an address range: ${r}`);
      ranges.addSubnet(addr, Number(prefix ?? (family === 4 ? 32 : 128)), family === 4 ? 'ipv4' : 'ipv6');
    }
    this.names = new Set(rules.domains.map(canonicalHost));
    this.suffixes = rules.domainSuffixes.map(canonicalHost);
    this.ranges = ranges;
    this.rangeList = [...rules.addressRanges];
  }

  get size(): number {
    return this.names.size + this.suffixes.length + this.rangeList.length;
  }

  /** Why the owner blocks this host name, or null. */
  hostReason(hostname: string): string | null {
    const h = canonicalHost(hostname);
    if (this.names.has(h)) return `host ${h} is in never_fetch.domains`;
    for (const s of this.suffixes) if (h === s || h.endsWith(`.${s}`)) return `host ${h} is under ${s} in never_fetch.domain_suffixes`;
    return null;
  }

  /** Why the owner blocks this address, or null (an IPv4 address inside an IPv6 one is checked too). */
  addressReason(address: string): string | null {
    const a = address.split('%')[0] ?? '';
    const family = isIP(a);
    if (family === 0 || this.rangeList.length === 0) return null;
    const hit = (x: string, f: 'ipv4' | 'ipv6') => this.ranges.check(x, f);
    let blocked = hit(a, family === 4 ? 'ipv4' : 'ipv6');
    if (!blocked && family === 6) {
      const v4 = embeddedIn(a);
      if (v4 !== null) blocked = hit(v4, 'ipv4');
    }
    return blocked ? `address ${a} is in never_fetch.address_ranges` : null;
  }
}

/** A host name as compared: lower case, no brackets, no trailing dot. */
function canonicalHost(h: string): string {
  const b = bareHost(h.toLowerCase());
  return b.endsWith('.') ? b.slice(0, -1) : b;
}

/** Refused because the volunteer's owner never fetches this host. */
export class OwnerBlockedError extends Error {
  readonly code = 'EBLOCKED';
  constructor(
    readonly host: string,
    readonly why: string,
  ) {
    super(`blocked by this computer's owner: ${why} (never fetched; the task goes back to the manager for another volunteer)`);
  }
}

/** Strips IPv6 brackets from a URL hostname. */
export function bareHost(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

/**
 * Checks a host before connecting: its name against the owner's block list,
 * and an IP literal (which skips the lookup) against the block list and the
 * private ranges. Throws OwnerBlockedError or PrivateAddressError.
 */
export function checkLiteralHost(hostname: string, allowPrivate: boolean, blockList?: OwnerBlockList): void {
  const h = bareHost(hostname);
  const why = blockList?.hostReason(h) ?? (isIP(h) ? (blockList?.addressReason(h) ?? null) : null);
  if (why !== null) throw new OwnerBlockedError(h, why);
  if (!allowPrivate && isIP(h) && isPrivateAddress(h)) throw new PrivateAddressError(h, h);
}

type Resolver = (hostname: string, options: { all: true; family?: number }, callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

/**
 * A dns.lookup replacement for net.connect: refuses a host the owner blocks
 * by name or by any of its addresses, and drops non-public addresses unless
 * allowPrivate. `resolve` is injectable (tests: a name whose addresses change).
 */
export function safeLookup(allowPrivate: boolean, blockList?: OwnerBlockList, resolve: Resolver = dnsLookup as unknown as Resolver): LookupFunction {
  return ((hostname: string, options: { all?: boolean; family?: number }, callback: (...args: unknown[]) => void) => {
    const byName = blockList?.hostReason(hostname) ?? null;
    if (byName !== null) return callback(new OwnerBlockedError(hostname, byName));
    resolve(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err);
      for (const a of addresses) {
        const why = blockList?.addressReason(a.address) ?? null;
        if (why !== null) return callback(new OwnerBlockedError(hostname, why));
      }
      const ok = allowPrivate ? addresses : addresses.filter((a) => !isPrivateAddress(a.address));
      if (ok.length === 0) return callback(new PrivateAddressError(hostname, addresses[0]?.address ?? '(none)'));
      if (options.all) callback(null, ok);
      else callback(null, ok[0]!.address, ok[0]!.family);
    });
  }) as unknown as LookupFunction;
}

/** Resolves a host once and reports whether it is usable (for an early, clear refusal). */
export async function resolveHost(hostname: string, allowPrivate: boolean, blockList?: OwnerBlockList): Promise<{ ok: true; addresses: string[] } | { ok: false; error: Error & { code?: string } }> {
  const h = bareHost(hostname);
  if (isIP(h)) {
    try {
      checkLiteralHost(h, allowPrivate, blockList);
    } catch (err) {
      return { ok: false, error: err as Error & { code?: string } };
    }
    return { ok: true, addresses: [h] };
  }
  return new Promise((resolve) => {
    safeLookup(allowPrivate, blockList)(h, { all: true }, ((err: (Error & { code?: string }) | null, addrs: LookupAddress[]) => {
      if (err) resolve({ ok: false, error: err });
      else resolve({ ok: true, addresses: addrs.map((a) => a.address) });
    }) as never);
  });
}
