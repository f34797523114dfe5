// The harness API with the real executables: `dht-manager serve` on the public
// segment and `volunteer-crawler join` on the public segment and behind a home
// router, each inside its namespace; the test reads their output and the
// manager's HTTP API (through a Unix-socket bridge into the manager's namespace).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, fetch } from 'undici';
import { NatNet } from '../../testbed/nat/network.js';
import { namespaceSupport } from '../../testbed/nat/netns.js';
import { waitFor } from '../../testbed/net/harness.js';
import { startManagerProcess, startVolunteerProcess, type ManagerProcess, type VolunteerProcess } from '../../testbed/processes.js';

const unsupported = namespaceSupport();
if (unsupported !== null) console.warn(`test/nat skipped: ${unsupported}`);

describe.skipIf(unsupported !== null)('volcrawl processes in the NAT test network', () => {
  let net: NatNet;
  let dir: string;
  let mgr: ManagerProcess;
  let agent: Agent;
  const volunteers: VolunteerProcess[] = [];
  const api = async <T>(path: string): Promise<T> => (await (await fetch(`http://127.0.0.1:8787${path}`, { dispatcher: agent })).json()) as T;

  beforeAll(async () => {
    net = NatNet.build({ public: ['manager', 'pub1'], routers: [{ name: 'home1', nat: 'cone', hosts: ['nat1'] }] });
    dir = mkdtempSync(join(tmpdir(), 'volcrawl-nat-'));
    // Announced: without AutoNAT the manager's public address is unconfirmed and libp2p would print only loopback (docs/nat.md).
    const announce = `/ip4/${net.host('manager').ip}/tcp/4101`;
    mgr = await startManagerProcess(join(dir, 'manager'), ['--listen', '/ip4/0.0.0.0/tcp/4101', '--announce', announce, '--http-port', '8787'], net.io('manager'));
    agent = new Agent({ connect: { socketPath: await net.bridge('manager', 8787) } });
    for (const host of ['pub1', 'nat1']) {
      volunteers.push(await startVolunteerProcess(host, mgr, join(dir, host), ['--listen', '/ip4/0.0.0.0/tcp/4001', '--threads', '1'], net.io(host)));
    }
  }, 180_000);

  afterAll(async () => {
    await agent?.close();
    await net?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a public and a NATed volunteer join the manager on the public segment', async () => {
    expect(mgr.addrs).toEqual([`/ip4/${net.host('manager').ip}/tcp/4101/p2p/${mgr.peerId}`]);
    const online = async () => (await api<{ crawlers: { id: string }[] }>('/api/crawlers')).crawlers.map((c) => c.id).sort();
    await waitFor(async () => (await online()).length === 2, 90_000, 'the manager to see both volunteers');
    expect(await online()).toEqual(volunteers.map((v) => v.peerId).sort());
  }, 120_000);
});
