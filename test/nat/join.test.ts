// `volunteer-crawler join` behind real NATs (no --lan: the NAT stack runs):
// the manager and a public volunteer on the public segment, volunteers behind
// two cone home routers and a symmetric one. Each volunteer finds out how it
// can be reached (AutoNAT v2, relay reservations), sets its DHT mode from it,
// and learns from its observers whether its NAT allows hole punching (the
// punch itself: test/nat/holepunch.test.ts). Read from the processes' own JSON
// log lines.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { namespaceSupport } from '../../testbed/nat/netns.js';
import { waitForLine } from '../../testbed/nat/lines.js';
import { JoinNet, type NatLogLine } from '../../testbed/nat/volunteers.js';

const unsupported = namespaceSupport();
if (unsupported !== null) console.warn(`test/nat/join skipped: ${unsupported}`);

describe.skipIf(unsupported !== null)('volunteer-crawler join behind NAT', () => {
  let jn: JoinNet;
  const line = async (host: string, re: RegExp, timeoutMs = 120_000): Promise<NatLogLine> => JSON.parse((await waitForLine(jn.volunteers.get(host)!, re, timeoutMs)).input) as NatLogLine;

  beforeAll(async () => {
    jn = await JoinNet.start(
      {
        public: ['manager', 'pub1'],
        routers: [
          { name: 'home1', nat: 'cone', hosts: ['nat1'] },
          { name: 'home2', nat: 'cone', hosts: ['nat2'] },
          { name: 'home3', nat: 'symmetric', hosts: ['nat3'] },
        ],
      },
      { publicVolunteers: ['pub1'] },
    );
  }, 240_000);

  afterAll(async () => {
    await jn?.stop();
  });

  it('the public volunteer is confirmed public by AutoNAT and serves the DHT', async () => {
    const l = await line('pub1', /"reachability":"public"/);
    expect(l.dht).toBe('server');
    expect(l.direct).toContain(`/ip4/${jn.net.host('pub1').ip}/tcp/4001`);
  }, 150_000);

  it('each NATed volunteer holds relay reservations, advertises no public address of its own and is a DHT client', async () => {
    for (const h of ['nat1', 'nat2', 'nat3']) {
      const l = await line(h, /"reachability":"relayed"/);
      expect(l.dht, h).toBe('client');
      expect(l.direct, h).toEqual([]);
      expect(l.relays!.length, h).toBeGreaterThan(0);
      expect(jn.natLines(h).filter((x) => x.reachability === 'public')).toEqual([]);
    }
  }, 300_000);

  it('each NATed volunteer learns its NAT type from two observers: cone behind the cone routers, symmetric behind the symmetric one', async () => {
    for (const [h, type] of [['nat1', 'cone'], ['nat2', 'cone'], ['nat3', 'symmetric']] as const) {
      const l = await line(h, new RegExp(`"natType":"${type}"`));
      expect(l.mapping, h).toMatch(new RegExp(`^${jn.net.publicIpOf(h).replaceAll('.', '\\.')}:\\d+$`));
    }
  }, 300_000);
});
