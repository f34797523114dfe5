// The libp2p stack's own bytes in the owner's ledger (src/dht/traffic.ts):
// two real stacks over TCP exchange a 200 KB message, pings and the DHT's own
// chatter; each side counts its sockets through libp2p's metrics hook. What
// one side wrote is exactly what the other read (the sockets' own counts, both
// ends), the payload is in it with little framing, and the bytes, fed to the
// owner's policy, pause the node at a cap that libp2p traffic alone reached.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPair } from '@libp2p/crypto/keys';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { createVolcrawlLibp2p, stopLibp2pQuietly, type VolcrawlLibp2p } from '../../src/dht/libp2p.js';
import { Libp2pTraffic } from '../../src/dht/traffic.js';
import { jsonChannel } from '../../src/dht/wire.js';
import type { VolunteerNode } from '../../src/node/node.js';
import { CpuMonitor } from '../../src/node/os-probe.js';
import { OwnerControl } from '../../src/node/owner-service.js';
import { loadPrefsFile, prefsPath, setPrefInFile } from '../../src/node/prefs.js';

const PROTO = '/volcrawl-test/blob/1.0.0';
const PAYLOAD = 200_000;
const stacks: VolcrawlLibp2p[] = [];
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(stacks.map((s) => stopLibp2pQuietly(s)));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function until(cond: () => boolean, what: string): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > 20_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** One ping from a to b. libp2p's own pings (the connection monitor's, kad-dht's
 * checks of new contacts) use the same protocol, which allows one outbound
 * stream per connection: when one of them holds it, wait and ping again (a CI
 * run once met TooManyOutboundProtocolStreamsError here). */
async function pingSharingTheStream(a: VolcrawlLibp2p, b: VolcrawlLibp2p): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await a.services.ping.ping(b.peerId);
      return;
    } catch (err) {
      if ((err as Error).name !== 'TooManyOutboundProtocolStreamsError' || attempt >= 50) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

describe("libp2p's TCP bytes count against the owner's caps", () => {
  it('each side counts what its sockets moved: A wrote exactly what B read, the payload included; at a cap libp2p alone reached, the node pauses', async () => {
    const ta = new Libp2pTraffic();
    const tb = new Libp2pTraffic();
    const opts = { listen: ['/ip4/127.0.0.1/tcp/0'], allowPrivateAddrs: true };
    const a = await createVolcrawlLibp2p({ ...opts, privateKey: await generateKeyPair('Ed25519'), metrics: ta.metrics });
    const b = await createVolcrawlLibp2p({ ...opts, privateKey: await generateKeyPair('Ed25519'), metrics: tb.metrics });
    stacks.push(a, b);
    await b.handle(PROTO, async (stream) => {
      const ch = jsonChannel(stream, 1 << 20, 10_000);
      const m = (await ch.read()) as { blob: string };
      await ch.write({ got: m.blob.length });
      await ch.close();
    });

    // The owner's control of A, with a daily cap of 100 KB and nothing else fetched: only libp2p's bytes reach it.
    const dir = mkdtempSync(join(tmpdir(), 'vc-traffic-'));
    dirs.push(dir);
    loadPrefsFile(prefsPath(dir));
    setPrefInFile(prefsPath(dir), 'transfer.daily_cap', '"100k"');
    const calls: boolean[] = [];
    const node = { peerId: a.peerId.toString(), runner: { load: () => ({ running: 0, queued: 0, free: 4 }) }, takeTasks: async (on: boolean) => (calls.push(on), { migrated: [], lost: [] }) } as unknown as VolunteerNode;
    const owner = new OwnerControl({
      dataDir: dir,
      overrides: {},
      log: pino({ level: 'silent' }),
      tickMs: 100,
      traffic: ta,
      probes: (windowMs) => ({ cpu: new CpuMonitor({ windowMs, read: () => ({ known: true, value: { total: 1000, busy: 0, self: 0 } }) }), power: () => ({ known: true, value: 'ac' }) }),
    });
    const svc = owner.service(node);
    await svc.start();
    try {
      expect(owner.paused).toBe(false);

      const stream = await a.dialProtocol(b.getMultiaddrs()[0]!, PROTO);
      const ch = jsonChannel(stream, 1 << 20, 10_000);
      await ch.write({ blob: 'x'.repeat(PAYLOAD) });
      expect(await ch.read()).toEqual({ got: PAYLOAD });
      await ch.close();
      for (let i = 0; i < 5; i++) await pingSharingTheStream(a, b);

      // The policy tick took A's bytes into the ledger: over the cap, paused for it.
      await until(() => calls.includes(false), 'A to pause at the cap');
      expect(owner.status().reasons).toEqual(['cap']);

      // Close every connection: the sockets' final counts, both ends (a closed socket's count is in `total`).
      await a.hangUp(b.peerId);
      await until(() => ta.connections === 0 && tb.connections === 0, 'both sockets to close');
      expect(ta.total.written).toBe(tb.total.read);
      expect(ta.total.read).toBe(tb.total.written);
      // The payload (JSON-framed) plus Noise, yamux, identify and ping: a few per cent and a few KB, no more.
      expect(ta.total.written).toBeGreaterThan(PAYLOAD);
      expect(ta.total.written).toBeLessThan(PAYLOAD * 1.03 + 20_000);
      // All of it is in A's ledger (the last bytes at the next tick).
      await until(() => {
        const u = owner.status().today;
        return u.down + u.up === ta.total.read + ta.total.written;
      }, "A's ledger to hold every byte its sockets moved");
    } finally {
      await svc.stop?.();
    }
  }, 60_000);
});
