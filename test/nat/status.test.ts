// What `volunteer-crawler status` says of the network (src/node/owner-status.ts):
// how others reach the node and what its coordinate rests on, from the counters
// nat-check also reads.
import { describe, expect, it } from 'vitest';
import { formatNetwork } from '../../src/node/owner-status.js';

const nat = { reachability: 'relayed' as const, direct: [], relays: 2, natType: 'cone', punched: 3, punchFailed: 0, pull: false, punchedPeers: ['a', 'b'] };

describe('the status line on reachability and coordinates', () => {
  it('names the reachability, the NAT type, pulled tasks and relayed probes refused', () => {
    expect(formatNetwork({ reach: 'punched', nat, tasksPulled: 0, coordinates: { samples: 120, relayedProbesRefused: 4, relayedSamples: 0 } })).toBe(
      'network: relayed via 2, 3 punched (NAT: cone); coordinate from 120 samples, 4 relayed probes refused',
    );
    expect(formatNetwork({ reach: 'pull', nat: { ...nat, pull: true }, tasksPulled: 7, coordinates: { samples: 3, relayedProbesRefused: 0, relayedSamples: 0 } })).toBe(
      'network: pulling tasks (pushes do not reach this node) (NAT: cone), 7 tasks pulled; coordinate from 3 samples',
    );
  });

  it('says plainly when a sample was taken over a relay, and when the node runs without NAT handling', () => {
    expect(formatNetwork({ coordinates: { samples: 10, relayedProbesRefused: 0, relayedSamples: 1 } })).toBe('network: no NAT handling (LAN); coordinate from 10 samples, 1 OVER RELAYS');
  });
});
