// The nftables rule sets that make a router namespace a home router. Which
// masquerade flags give which NAT behaviour is not taken on faith:
// test/nat/harness.test.ts proves it (mapping per destination, hole punching).
//
// - 'cone': plain `masquerade`. Linux keeps the inside source port when it is
//   free, and one inside address:port maps to the same outside port for every
//   destination (endpoint-independent mapping). Conntrack only lets in replies
//   from the exact remote address:port a packet went to (address- and
//   port-dependent filtering): a port-restricted cone, the common home router,
//   through which both sides sending at once (hole punching) works.
// - 'symmetric': `masquerade random`. The outside port is a keyed hash of the
//   whole connection tuple, destination included, so each destination sees a
//   different outside port (endpoint-dependent mapping) and the port a third
//   party observed is useless to a peer: hole punching fails.
export type NatType = 'cone' | 'symmetric';

export const NAT_TYPES: readonly NatType[] = ['cone', 'symmetric'];

const MASQUERADE: Record<NatType, string> = {
  cone: 'masquerade',
  symmetric: 'masquerade random',
};

/**
 * A home router's ruleset: masquerade out of `wan`; nothing that the inside did
 * not start gets in (forwarded or to the router itself), as on a real router,
 * which drops rather than answers (an RST would abort a peer's hole punch).
 * `extraInput` lines go into the input chain before the drop. With `upnp`, the
 * chains miniupnpd fills with its port mappings (upnpConfig) are added.
 */
export function routerRuleset(nat: NatType, wan: string, extraInput: string[] = [], upnp = false): string {
  return `${upnp ? UPNP_TABLE : ''}
table ip vcn_nat {
  chain postrouting {
    type nat hook postrouting priority srcnat; policy accept;
    oifname "${wan}" ${MASQUERADE[nat]}
  }
}
table inet vcn_filter {
  chain forward {
    type filter hook forward priority filter; policy accept;
    ct state established,related accept
    # what a port mapping (UPnP/NAT-PMP, miniupnpd) let in
    ct status dnat accept
    iifname "${wan}" drop
  }
  chain input {
    type filter hook input priority filter; policy accept;
    ct state established,related accept
    ${extraInput.join('\n    ')}
    iifname "${wan}" drop
  }
}
`;
}

/** The chains miniupnpd's nftables backend adds its rules to (named in upnpConfig). */
const UPNP_TABLE = `
table inet vcn_upnp {
  chain miniupnpd { }
  chain prerouting_miniupnpd { }
  chain postrouting_miniupnpd { }
  chain forward { type filter hook forward priority -10; policy accept; jump miniupnpd; }
  chain prerouting { type nat hook prerouting priority dstnat; policy accept; jump prerouting_miniupnpd; }
  chain postrouting { type nat hook postrouting priority srcnat; policy accept; jump postrouting_miniupnpd; }
}
`;

/** miniupnpd.conf for a router: UPnP IGD and NAT-PMP/PCP on the LAN bridge, mappings for LAN hosts' unprivileged ports only. */
export function upnpConfig(wan: string, lan: string, lanCidr: string): string {
  return [
    `ext_ifname=${wan}`,
    `listening_ip=${lan}`,
    'http_port=0',
    'enable_natpmp=yes',
    'enable_upnp=yes',
    'secure_mode=yes',
    'system_uptime=yes',
    'uuid=3d3cec3a-8cf0-11e0-98ee-001a6bd2d07b',
    'upnp_table_name=vcn_upnp',
    'upnp_nat_table_name=vcn_upnp',
    `allow 1024-65535 ${lanCidr} 1024-65535`,
    'deny 0-65535 0.0.0.0/0 0-65535',
    '',
  ].join('\n');
}
