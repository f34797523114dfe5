// A plain libp2p 3 node for the NAT spike (docs/nat.md): TCP, Noise, Yamux,
// identify, ping, plus whichever NAT-traversal parts the flags ask for. It
// prints one JSON line per event, so the driver (spike/run.ts) can show what
// libp2p itself did inside the namespaces. Not volcrawl's node: src/ never
// sees this.
import { createLibp2p, type Libp2p } from 'libp2p';
import { tcp } from '@libp2p/tcp';
import { noise } from '@chainsafe/libp2p-noise';
import { yamux } from '@chainsafe/libp2p-yamux';
import { identify } from '@libp2p/identify';
import { ping } from '@libp2p/ping';
import { autoNATv2 } from '@libp2p/autonat-v2';
import { circuitRelayServer, circuitRelayTransport, type CircuitRelayService } from '@libp2p/circuit-relay-v2';
import { dcutr } from '@libp2p/dcutr';
import { uPnPNAT } from '@libp2p/upnp-nat';
import { kadDHT, passthroughMapper, type KadDHT } from '@libp2p/kad-dht';
import { multiaddr } from '@multiformats/multiaddr';
import { parseArgs } from 'node:util';
import type { Connection, Stream } from '@libp2p/interface';

const { values: v } = parseArgs({
  options: {
    listen: { type: 'string', multiple: true, default: [] },
    announce: { type: 'string', multiple: true, default: [] },
    autonat: { type: 'string', default: 'none' }, // none | v1 | v2
    'relay-server': { type: 'boolean', default: false },
    'max-reservations': { type: 'string', default: '15' },
    'relay-data-bytes': { type: 'string', default: String(1 << 17) },
    'relay-duration-ms': { type: 'string', default: '120000' },
    'relay-client': { type: 'boolean', default: false },
    dcutr: { type: 'boolean', default: false },
    upnp: { type: 'boolean', default: false },
    dht: { type: 'string', default: 'none' }, // none | auto | server | client
    dial: { type: 'string', multiple: true, default: [] },
    'dial-later': { type: 'string', multiple: true, default: [] },
    // dial the --dial-later list once AutoNAT has confirmed a public address of ours, instead of after --dial-after
    'dial-when-public': { type: 'boolean', default: false },
    'dial-after': { type: 'string', default: '0' },
    'send-bytes': { type: 'string', default: '0' },
    'ping-every': { type: 'string', default: '0' },
    'exit-after': { type: 'string', default: '0' },
    quic: { type: 'boolean', default: false },
  },
});

const t0 = Date.now();
const say = (ev: string, o: Record<string, unknown> = {}): void => void process.stdout.write(`${JSON.stringify({ t: Date.now() - t0, ev, ...o })}\n`);
const ECHO = '/spike/sink/1.0.0';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each service factory wants its own components
const services: Record<string, (components: any) => unknown> = { identify: identify(), ping: ping() };
if (v.autonat === 'v1') {
  // Not a dependency (docs/nat.md: its dial-back closes the connection the request
  // came on); `npm install --no-save @libp2p/autonat` to rerun the autonat1 scenario.
  const name = '@libp2p/autonat';
  const { autoNAT } = (await import(name)) as { autoNAT: (init: object) => (components: unknown) => unknown };
  services.autonat = autoNAT({ startupDelay: 500, refreshInterval: 10_000 });
}
if (v.autonat === 'v2') services.autonat = autoNATv2({ startupDelay: 500, refreshInterval: 10_000 });
if (v['relay-server'])
  services.relay = circuitRelayServer({
    reservations: {
      maxReservations: Number(v['max-reservations']),
      defaultDataLimit: BigInt(v['relay-data-bytes']),
      defaultDurationLimit: Number(v['relay-duration-ms']),
    },
  });
if (v.dcutr) services.dcutr = dcutr();
if (v.upnp) services.upnp = uPnPNAT({ autoConfirmAddress: false });
if (v.dht !== 'none') services.dht = kadDHT({ protocol: '/spike/kad/1.0.0', peerInfoMapper: passthroughMapper, ...(v.dht === 'auto' ? {} : { clientMode: v.dht === 'client' }) });

// QUIC is not a dependency (docs/nat.md says why); `npm install --no-save
// @chainsafe/libp2p-quic@2.1.1` to rerun the quic scenario.
let quicTransport: ((components: unknown) => unknown)[] = [];
if (v.quic) {
  const name = '@chainsafe/libp2p-quic';
  const { quic } = (await import(name)) as { quic: () => (components: unknown) => unknown };
  quicTransport = [quic()];
}

const node = (await createLibp2p({
  addresses: { listen: [...v.listen, ...(v.quic ? ['/ip4/0.0.0.0/udp/0/quic-v1'] : []), ...(v['relay-client'] ? ['/p2p-circuit'] : [])], ...(v.announce.length > 0 ? { announce: v.announce } : {}) },
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the dynamically loaded transport's factory
  transports: [tcp(), ...(quicTransport as any[]), ...(v['relay-client'] || [...v.listen, ...v.dial, ...v['dial-later']].some((a) => a.includes('/p2p-circuit')) ? [circuitRelayTransport()] : [])],
  connectionEncrypters: [noise()],
  streamMuxers: [yamux()],
  services,
})) as Libp2p<Record<string, unknown>>;

const connInfo = (c: Connection) => ({ peer: c.remotePeer.toString().slice(-8), remote: c.remoteAddr.toString(), dir: c.direction, limited: c.limits !== undefined, limits: c.limits === undefined ? undefined : { bytes: c.limits.bytes?.toString(), seconds: c.limits.seconds } });
node.addEventListener('self:peer:update', (e) => say('self', { addrs: e.detail.peer.addresses.map((a) => a.multiaddr.toString()) }));
node.addEventListener('connection:open', (e) => say('conn-open', connInfo(e.detail)));
node.addEventListener('connection:close', (e) => say('conn-close', connInfo(e.detail)));
const dht = services.dht === undefined ? undefined : (node.services.dht as KadDHT);
let dhtMode = dht?.getMode();
if (dht !== undefined) {
  say('dht-mode', { mode: dhtMode });
  setInterval(() => {
    if (dht.getMode() !== dhtMode) say('dht-mode', { mode: (dhtMode = dht.getMode()) });
  }, 200).unref();
}
if (v['relay-server']) {
  const relay = node.services.relay as CircuitRelayService;
  relay.addEventListener('relay:reservation', (e) => say('relay-reservation', { addr: e.detail.addr.toString(), reservations: relay.reservations.size, limit: { data: e.detail.limit?.data?.toString(), duration: e.detail.limit?.duration } }));
}
// A sink that counts what it receives and reports it, so a relayed transfer shows where the relay cut it.
await node.handle(
  ECHO,
  async (stream: Stream) => {
    let n = 0;
    try {
      for await (const chunk of stream) n += chunk.byteLength;
      say('sink-done', { bytes: n });
    } catch (err) {
      say('sink-reset', { bytes: n, error: (err as Error).message });
    }
  },
  { runOnLimitedConnection: true },
);

say('started', { peerId: node.peerId.toString(), listen: node.getMultiaddrs().map(String) });

async function dialAll(addrs: string[]): Promise<void> {
  for (const a of addrs) {
    try {
      const conn = await node.dial(multiaddr(a), { signal: AbortSignal.timeout(20_000) });
      say('dialed', connInfo(conn));
      const rtt = await (node.services.ping as { ping: (p: unknown, o?: unknown) => Promise<number> }).ping(conn.remotePeer, { runOnLimitedConnection: true }).catch((e: Error) => e.message);
      say('ping', { peer: conn.remotePeer.toString().slice(-8), rtt });
      const n = Number(v['send-bytes']);
      if (n > 0) {
        const s = await conn.newStream(ECHO, { runOnLimitedConnection: true });
        let sent = 0;
        try {
          const chunk = new Uint8Array(16 * 1024);
          while (sent < n) {
            const len = Math.min(chunk.length, n - sent);
            if (!s.send(chunk.subarray(0, len))) await s.onDrain({ signal: AbortSignal.timeout(10_000) });
            sent += len;
          }
          await s.close();
          say('sent', { bytes: sent });
        } catch (err) {
          say('send-failed', { sentBeforeError: sent, error: (err as Error).message });
        }
      }
      const every = Number(v['ping-every']);
      if (every > 0)
        setInterval(() => {
          const c = node.getConnections(conn.remotePeer)[0];
          void (node.services.ping as { ping: (p: unknown, o?: unknown) => Promise<number> })
            .ping(conn.remotePeer, { runOnLimitedConnection: true })
            .then((rtt) => say('ping', { peer: conn.remotePeer.toString().slice(-8), rtt, over: c?.remoteAddr.toString(), limited: c?.limits !== undefined }))
            .catch((e: Error) => say('ping-failed', { error: e.message }));
        }, every);
    } catch (err) {
      say('dial-failed', { addr: a, error: (err as Error).message });
    }
  }
}
void dialAll(v.dial);
if (v['dial-later'].length > 0 && v['dial-when-public']) {
  const isPublic = (addrs: string[]): boolean => addrs.some((a) => !a.includes('/p2p-circuit') && !/^\/ip4\/(127|10|192\.168)\./.test(a));
  const onUpdate = (e: CustomEvent<{ peer: { addresses: { multiaddr: unknown }[] } }>): void => {
    if (!isPublic(e.detail.peer.addresses.map((a) => String(a.multiaddr)))) return;
    node.removeEventListener('self:peer:update', onUpdate);
    void dialAll(v['dial-later']);
  };
  node.addEventListener('self:peer:update', onUpdate);
} else if (v['dial-later'].length > 0) setTimeout(() => void dialAll(v['dial-later']), Number(v['dial-after']));
if (Number(v['exit-after']) > 0) setTimeout(() => void Promise.resolve(node.stop()).then(() => process.exit(0)), Number(v['exit-after']));
process.on('SIGTERM', () => void Promise.resolve(node.stop()).then(() => process.exit(0)));
