// The NAT test network itself (testbed/nat): that it is the network it claims
// to be. Real namespaces, real nftables NAT, real sockets; each claim is read
// from what a server on the other side saw.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasUpnp, NatNet } from '../../testbed/nat/network.js';
import { ip, listNamespaces, namespaceSupport, NS_PREFIX, sweepOrphans } from '../../testbed/nat/netns.js';
import { lastJson, linesUntilExit, waitForLine } from '../../testbed/nat/lines.js';
import { spawnNode } from '../../testbed/processes.js';

const unsupported = namespaceSupport();
if (unsupported !== null) console.warn(`test/nat skipped: ${unsupported}`);

// The compiled echo tool (the global setup keeps dist/ fresh): about 25 short
// processes, each of which would otherwise start tsx and compile echo.ts first.
const ECHO = 'dist/testbed/nat/echo.js';
const PORT = '7000';

describe.skipIf(unsupported !== null)('NAT test network (Linux namespaces, nftables)', () => {
  let net: NatNet;
  const echo = async (host: string, args: string[]) => lastJson<Record<string, unknown>>(await linesUntilExit(net.spawnIn(host, ECHO, args)));
  const at = (host: string) => `${net.host(host).ip}:${PORT}`;

  beforeAll(async () => {
    net = NatNet.build();
    // Echo servers on two public hosts and inside two homes (for the "no way in" and port-mapping tests).
    const servers = ['manager', 'web', 'nat1', 'nat4'].map((h) => net.spawnIn(h, ECHO, ['serve', '--port', PORT]));
    await Promise.all(servers.map((s) => waitForLine(s, /"ready"/)));
  });

  afterAll(async () => {
    await net?.destroy();
    expect(net.liveNamespaces()).toEqual([]);
  });

  it('NATed hosts reach the public segment and appear there from their (outermost) router', async () => {
    for (const host of ['nat1', 'nat2', 'nat3']) {
      for (const proto of ['udp', 'tcp']) {
        const { seen } = (await echo(host, ['probe', '--proto', proto, '--local-port', '40000', '--to', at('web')])) as { seen: string[] };
        expect(seen[0]!.split(':')[0], `${host} ${proto}`).toBe(net.publicIpOf(host));
      }
    }
    expect(net.publicIpOf('nat3')).toBe(net.routers.get('cgn')!.wanIp); // two levels: the CGN's address
    expect(net.publicIpOf('nat3')).not.toBe(net.routers.get('home3')!.wanIp);
  });

  it('the public segment cannot open a connection into a home, which its own LAN can', async () => {
    const router = net.routers.get('home1')!;
    const viaRouter = await echo('pub1', ['connect', '--to', `${router.wanIp}:${PORT}`, '--timeout', '3000']);
    const direct = await echo('pub1', ['connect', '--to', at('nat1'), '--timeout', '3000']);
    const fromLan = await echo('home1', ['connect', '--to', at('nat1'), '--timeout', '10000']);
    expect(viaRouter.connected).toBe(false);
    expect(direct.connected).toBe(false);
    expect(fromLan).toEqual({ connected: true });
  });

  it.skipIf(!hasUpnp())('a router with miniupnpd maps a port on request (NAT-PMP), and the public segment gets in through it', async () => {
    const router = net.routers.get('home4')!;
    await net.upnpReady('home4');
    const before = await echo('pub1', ['connect', '--to', `${router.wanIp}:${PORT}`, '--timeout', '3000']);
    expect(before.connected).toBe(false);
    const mapping = (await echo('nat4', ['natpmp', '--gateway', router.lanIp, '--port', PORT])) as { publicIp: string; externalPort: number };
    expect(mapping.publicIp).toBe(router.wanIp);
    const after = await echo('pub1', ['connect', '--to', `${router.wanIp}:${mapping.externalPort}`, '--timeout', '10000']);
    expect(after).toEqual({ connected: true });
  });

  it('the cone NAT keeps one outside port for every destination; the symmetric one does not', async () => {
    const to = ['--to', at('manager'), '--to', at('web')];
    for (const proto of ['udp', 'tcp']) {
      const ports = async (host: string) => ((await echo(host, ['probe', '--proto', proto, '--local-port', '40001', ...to])) as { seen: string[] }).seen.map((s) => s.split(':')[1]);
      expect(await ports('nat1'), `cone ${proto}`).toEqual(['40001', '40001']);
      expect(await ports('nat3'), `cone behind a CGN ${proto}`).toEqual(['40001', '40001']);
      const sym = await ports('nat2');
      // A keyed hash of the whole tuple: two destinations collide with odds ~1/64k.
      expect(sym[0], `symmetric ${proto}: ${sym.join(' ')}`).not.toBe(sym[1]);
    }
  });

  it('hole punching (UDP, and TCP simultaneous open) works between cone NATs and fails against the symmetric one', async () => {
    const punch = async (proto: string, a: string, b: string, port: string) => {
      const args = (me: string, peer: string) => ['punch', '--proto', proto, '--local-port', port, '--rendezvous', at('web'), '--me', `${me}@${port}`, '--peer', `${peer}@${port}`, '--deadline', '6000'];
      const [ra, rb] = await Promise.all([echo(a, args(a, b)), echo(b, args(b, a))]);
      return { a: ra, b: rb };
    };
    const results = await Promise.all([
      punch('udp', 'nat1', 'nat3', '41001'),
      punch('tcp', 'nat1', 'nat3', '41002'),
      punch('udp', 'nat1', 'nat2', '41003'),
      punch('tcp', 'nat1', 'nat2', '41004'),
    ]);
    // Each side learnt the other's mapping from the rendezvous (the symmetric side's is for the rendezvous only).
    for (const r of results) expect(r!.a.peerMapped, JSON.stringify(r)).toBe(r!.b.mapped);
    const [udpCone, tcpCone, udpSym, tcpSym] = results;
    for (const r of [udpCone!, tcpCone!]) {
      expect(r.a.connected, JSON.stringify(r)).toBe(true);
      expect(r.b.connected, JSON.stringify(r)).toBe(true);
    }
    for (const r of [udpSym!, tcpSym!]) {
      expect(r.a.connected, JSON.stringify(r)).toBe(false);
      expect(r.b.connected, JSON.stringify(r)).toBe(false);
    }
  }, 120_000);
});

describe.skipIf(unsupported !== null)('NAT test network teardown', () => {
  const prefixOf = async (h: ReturnType<typeof spawnNode>) => (await waitForLine(h, /^prefix (\S+)/))[1]!;
  const left = (prefix: string) => listNamespaces().filter((n) => n.startsWith(`${prefix}-`));
  const fixture = (mode: string) => spawnNode(`build-and-end ${mode}`, ['bin/run-ts.js', 'test/nat/fixtures/build-and-end.ts', mode]);

  it('an uncaught exception or SIGTERM leaves nothing; a SIGKILLed owner is swept', async () => {
    const crashed = fixture('throw');
    const crashedPrefix = await prefixOf(crashed);
    await crashed.exited;
    expect(crashed.proc.exitCode).not.toBe(0);
    expect(left(crashedPrefix)).toEqual([]);

    const stopped = fixture('wait');
    const stoppedPrefix = await prefixOf(stopped);
    expect(left(stoppedPrefix).length).toBeGreaterThan(0);
    await stopped.kill('SIGTERM');
    expect(stopped.exitStatus).toBe('signal SIGTERM');
    expect(left(stoppedPrefix)).toEqual([]);

    const killed = fixture('wait');
    const killedPrefix = await prefixOf(killed);
    await killed.kill('SIGKILL');
    const orphans = left(killedPrefix);
    expect(orphans.length).toBeGreaterThan(0);
    expect(ip('netns', 'pids', `${killedPrefix}-b`).trim(), 'the echo server still runs in the orphaned namespace').not.toBe('');
    expect(sweepOrphans()).toEqual(expect.arrayContaining(orphans));
    expect(left(killedPrefix)).toEqual([]);
    expect(listNamespaces().filter((n) => n.startsWith(NS_PREFIX) && n.includes(`${process.pid}x`))).toEqual([]);
  }, 120_000);
});
