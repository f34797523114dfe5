// volcrawl's TCP hole punch (src/dht/holepunch) in the NAT test network: real
// namespaces, real nftables NAT, one process per peer. Two public peers serve
// as relay and observers; NATed peers reserve a slot on the relay, learn their
// punch port's mapping from both observers, and a peer that reaches another
// over the relay makes the dialled side coordinate a punch, as DCUtR does.
// Every claim is read from the peers' own connections and punch events.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NatNet } from '../../testbed/nat/network.js';
import { namespaceSupport } from '../../testbed/nat/netns.js';
import { PunchPeers, type ConnInfo } from '../../testbed/nat/holepunch/peers.js';

const unsupported = namespaceSupport();
if (unsupported !== null) console.warn(`test/nat/holepunch skipped: ${unsupported}`);

describe.skipIf(unsupported !== null)('TCP hole punching between NATed volunteers', () => {
  let net: NatNet;
  let peers: PunchPeers;
  let dir: string;
  const direct = (cs: ConnInfo[]) => cs.find((c) => c.status === 'open' && !c.limited && !c.remoteAddr.includes('/p2p-circuit'));
  const relayed = (cs: ConnInfo[]) => cs.find((c) => c.status === 'open' && c.limited);

  beforeAll(async () => {
    net = NatNet.build({
      public: ['relay', 'observer'],
      routers: [
        { name: 'home1', nat: 'cone', hosts: ['cone1'] },
        { name: 'home2', nat: 'cone', hosts: ['cone2', 'coneforce'] },
        { name: 'home3', nat: 'symmetric', hosts: ['sym', 'symforce'] },
        { name: 'cgn', nat: 'cone' },
        { name: 'home4', nat: 'cone', upstream: 'cgn', hosts: ['cgncone'] },
        { name: 'cgnsym', nat: 'symmetric' },
        { name: 'home5', nat: 'cone', upstream: 'cgnsym', hosts: ['cgnsym1'] },
      ],
    });
    dir = mkdtempSync(join(tmpdir(), 'volcrawl-holepunch-'));
    peers = new PunchPeers(net, dir);
    await Promise.all([peers.start('relay', ['--relay-server']), peers.start('observer', [])]);
    const observers = ['relay', 'observer'].flatMap((p) => ['--observer', peers.addr(p)]);
    const natted = ['cone1', 'cone2', 'sym', 'cgncone', 'cgnsym1'];
    // Two more that ignore the NAT type (measurement mode, for the last test): one attempt, a 4 s punch deadline,
    // and a full garbage collection every second (at least three in each punch window): their unanswered punch
    // ends only at that deadline, which must survive collections (Node 20's AbortSignal.any lost it to one, and
    // the punch hung with no event).
    const forced = ['symforce', 'coneforce'];
    const forceArgs = ['--punch-through-symmetric', '--max-attempts', '1', '--punch-timeout-ms', '4000', '--gc-every-ms', '1000'];
    await Promise.all([...natted, ...forced].map((h) => peers.start(h, ['--reserve', peers.addr('relay'), ...observers, '--allow-private', ...(forced.includes(h) ? forceArgs : [])])));
    await Promise.all([...natted, ...forced].map((h) => peers.ready(h)));
  }, 300_000);

  afterAll(async () => {
    await peers?.stopAll();
    await net?.destroy();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('two observers tell each NAT apart: one mapping per punch port behind cone NATs (also behind a cone CGN), one per destination behind symmetric ones', async () => {
    const cone1 = await peers.ready('cone1', 'cone');
    expect(cone1.stats.mapping).toBe(`${net.publicIpOf('cone1')}:${cone1.stats.punchPort}`);
    expect((await peers.ready('cone2', 'cone')).stats.observers).toBe(2);
    // Two levels of masquerade keep the port: the mapping is the CGN's address with the same port.
    const cgn = await peers.ready('cgncone', 'cone');
    expect(cgn.stats.mapping).toBe(`${net.publicIpOf('cgncone')}:${cgn.stats.punchPort}`);
    await peers.ready('sym', 'symmetric');
    await peers.ready('cgnsym1', 'symmetric');
  }, 150_000);

  it('cone ↔ cone: a relayed connection becomes a direct, punched one that carries streams, and the relayed one is closed', async () => {
    const before = (await peers.events('cone1')).length;
    await peers.call('cone2', 'POST', '/dial', { addr: peers.circuitAddr('cone1', 'relay') });
    const ev = await peers.nextEvent('cone1', 'cone2', before);
    expect(ev, JSON.stringify(ev)).toMatchObject({ ev: 'success', role: 'coordinator' });
    // Both ends hold the same direct TCP connection between the two routers' public addresses.
    const [a, b] = await Promise.all([
      peers.until('cone1', 'a direct connection to cone2', async () => direct(await peers.conns('cone1', 'cone2'))),
      peers.until('cone2', 'a direct connection to cone1', async () => direct(await peers.conns('cone2', 'cone1'))),
    ]);
    expect(a.remoteAddr).toMatch(new RegExp(`^/ip4/${net.publicIpOf('cone2').replaceAll('.', '\\.')}/tcp/\\d+/p2p/${peers.id('cone2')}$`));
    expect(b.remoteAddr).toMatch(new RegExp(`^/ip4/${net.publicIpOf('cone1').replaceAll('.', '\\.')}/tcp/\\d+/p2p/${peers.id('cone1')}$`));
    const echo = await peers.call<{ reply: string; limited: boolean }>('cone2', 'POST', '/echo', { peer: peers.id('cone1'), over: 'direct' });
    expect(echo).toMatchObject({ reply: `hello from ${peers.id('cone2')}`, limited: false });
    await peers.until('cone2', 'the relayed connection closed', async () => (relayed(await peers.conns('cone2', 'cone1')) === undefined ? true : undefined));
    // The responder saw its side succeed too.
    const resp = await peers.nextEvent('cone2', 'cone1');
    expect(resp).toMatchObject({ ev: 'success', role: 'responder' });
  }, 90_000);

  it('cone ↔ cone behind a carrier-grade NAT (two levels of endpoint-independent NAT) punches too', async () => {
    const before = (await peers.events('cgncone')).length;
    await peers.call('cone1', 'POST', '/dial', { addr: peers.circuitAddr('cgncone', 'relay') });
    const ev = await peers.nextEvent('cgncone', 'cone1', before);
    expect(ev, JSON.stringify(ev)).toMatchObject({ ev: 'success' });
    const c = await peers.until('cone1', 'a direct connection to cgncone', async () => direct(await peers.conns('cone1', 'cgncone')));
    expect(c.remoteAddr.startsWith(`/ip4/${net.publicIpOf('cgncone')}/tcp/`)).toBe(true);
    expect(await peers.call('cone1', 'POST', '/echo', { peer: peers.id('cgncone'), over: 'direct' })).toMatchObject({ limited: false });
  }, 90_000);

  it.each([
    { natted: 'sym', other: 'cone1', nat: 'a symmetric home NAT' },
    { natted: 'cgnsym1', other: 'cone2', nat: 'a symmetric carrier-grade NAT' },
  ])('behind $nat: no punch is tried (the reason is named on both sides) and the relay keeps carrying streams', async ({ natted, other }) => {
    const [before, otherBefore] = [(await peers.events(natted)).length, (await peers.events(other)).length];
    await peers.call(other, 'POST', '/dial', { addr: peers.circuitAddr(natted, 'relay') });
    const ev = await peers.nextEvent(natted, other, before);
    expect(ev, JSON.stringify(ev)).toMatchObject({ ev: 'failure', role: 'coordinator', reason: 'symmetric-nat', final: true });
    const theirs = await peers.nextEvent(other, natted, otherBefore);
    expect(theirs, JSON.stringify(theirs)).toMatchObject({ ev: 'failure', role: 'responder', reason: 'peer-symmetric-nat' });
    expect(direct(await peers.conns(other, natted))).toBeUndefined();
    const echo = await peers.call<{ reply: string; limited: boolean }>(other, 'POST', '/echo', { peer: peers.id(natted), over: 'relayed' });
    expect(echo).toMatchObject({ reply: `hello from ${peers.id(other)}`, limited: true });
  }, 90_000);

  it('forced through a symmetric NAT (both sides in measurement mode), the simultaneous open times out and the relayed connection survives', async () => {
    // Both ignore the NAT type: the symmetric side's SYNs leave from a port the cone side never learnt.
    await Promise.all([peers.ready('symforce', 'symmetric'), peers.ready('coneforce', 'cone')]);
    await peers.call('coneforce', 'POST', '/dial', { addr: peers.circuitAddr('symforce', 'relay') });
    const [ev, theirs] = await Promise.all([peers.nextEvent('symforce', 'coneforce'), peers.nextEvent('coneforce', 'symforce')]);
    expect(ev, JSON.stringify(ev)).toMatchObject({ ev: 'failure', role: 'coordinator', reason: 'timeout', final: true });
    expect(theirs, JSON.stringify(theirs)).toMatchObject({ ev: 'failure', role: 'responder', reason: 'timeout' });
    expect(direct(await peers.conns('coneforce', 'symforce'))).toBeUndefined();
    expect(await peers.call('coneforce', 'POST', '/echo', { peer: peers.id('symforce'), over: 'relayed' })).toMatchObject({ limited: true });
  }, 90_000);
});
