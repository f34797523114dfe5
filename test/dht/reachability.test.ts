// Reachability from the addresses libp2p shares (pure): what a volunteer shows its owner.
import { describe, expect, it } from 'vitest';
import { classifyReachability, type OwnAddress } from '../../src/dht/reachability.js';

const RELAY = '12D3KooWJv48V9sjgiwhADeYeuphSxjqBHhCb4zfANLmCL4MM5in';
const SELF = '12D3KooWLAwdDAvqLdhoxcg4gi4isW6orPym5N3JtZ2kPGsGzt4x';
const a = (multiaddr: string, verified = true, type = 'transport'): OwnAddress => ({ multiaddr, verified, type });
const lo = a('/ip4/127.0.0.1/tcp/4001');
const lan = a('/ip4/192.168.1.2/tcp/4001');
const circuit = a(`/ip4/11.0.0.2/tcp/4001/p2p/${RELAY}/p2p-circuit/p2p/${SELF}`);
const settled = { lan: false, settled: true };

describe('reachability', () => {
  it('public: a verified public TCP address; an unverified one does not count', () => {
    expect(classifyReachability([lo, lan, a('/ip4/51.0.0.2/tcp/4001')], settled)).toEqual({ state: 'public', direct: ['/ip4/51.0.0.2/tcp/4001'], relays: [] });
    expect(classifyReachability([lo, lan, a('/ip4/51.0.0.2/tcp/4001', false, 'observed')], settled).state).toBe('unreachable');
  });

  it('mapped: the public address is a router port mapping (UPnP / NAT-PMP) that AutoNAT confirmed', () => {
    expect(classifyReachability([lan, a('/ip4/81.0.0.2/tcp/4001', true, 'ip-mapping'), circuit], settled).state).toBe('mapped');
  });

  it('relayed: only private and relay addresses, with the relays named', () => {
    expect(classifyReachability([lo, lan, circuit], settled)).toEqual({ state: 'relayed', direct: [], relays: [RELAY] });
  });

  it('starting within the grace period, unreachable after it; a CGN address (100.64/10) is not public', () => {
    expect(classifyReachability([lo, lan], { lan: false, settled: false }).state).toBe('starting');
    expect(classifyReachability([lo, lan, a('/ip4/100.64.3.2/tcp/4001')], settled).state).toBe('unreachable');
  });

  it('on a LAN network (and a single-host test network) private and loopback addresses are direct', () => {
    expect(classifyReachability([lo, lan], { lan: true, settled: true })).toEqual({ state: 'public', direct: [lo.multiaddr, lan.multiaddr], relays: [] });
    expect(classifyReachability([a('/ip4/127.0.0.1/tcp/4001', false, 'observed')], { lan: true, settled: true }).state).toBe('unreachable');
  });
});
