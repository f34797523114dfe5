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
 * `extraInput` lines go into the input chain before the drop (e.g. UPnP on the LAN).
 */
export function routerRuleset(nat: NatType, wan: string, extraInput: string[] = []): string {
  return `
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
