// The libp2p stack of a volcrawl peer: TCP, Noise, Yamux, identify, ping and a
// kad-dht on this network's own protocol name, with provider records that
// outlive a few minutes of churn but not a departed crawler by much.
//
// Tuned for a node that must not be noticed on a volunteer's PC (docs/node.md,
// "What an idle node costs"): every periodic exchange costs CPU on two nodes,
// so liveness is checked once a minute (libp2p's connection monitor; every 5
// minutes on a volunteer, VOLUNTEER_PING_INTERVAL_MS; yamux's own keep-alive
// is off), kad-dht queries ask 3 peers at a time on 3 disjoint
// paths (the Kademlia paper's α; libp2p's default of 10 and 10 contacts most
// of a small network per query), and provider records live 10 minutes,
// re-provided at half-life.
import { createLibp2p, type Libp2p } from 'libp2p';
import { tcp } from '@libp2p/tcp';
import { noise } from '@chainsafe/libp2p-noise';
import { yamux } from '@chainsafe/libp2p-yamux';
import { identify } from '@libp2p/identify';
import { ping, type Ping } from '@libp2p/ping';
import { kadDHT, passthroughMapper, removePrivateAddressesMapper, type KadDHT } from '@libp2p/kad-dht';
import type { Identify } from '@libp2p/identify';
import type { Metrics, PrivateKey } from '@libp2p/interface';
import { DEFAULT_PROVIDER_TTL_MS, providerTiming } from './announce.js';
import { natStackParts, type NatOptions } from './nat.js';
import type { HolePunch } from './holepunch/index.js';
import type { ReachabilityService } from './reachability.js';

export const DHT_PROTOCOL = '/volcrawl/kad/1.0.0';
// The provider record lifetime and kad-dht's schedule for it live in
// announce.ts (providerTiming), which the simulator models too.
export { DEFAULT_PROVIDER_TTL_MS } from './announce.js';
/** Connections a volunteer keeps at most: its neighbours (16) and kad-dht's
 * closest peers (20) are tagged and kept; beyond the bound the node's trimmer
 * (connection-trim.ts) closes the least valuable (untagged) ones first. A soft
 * bound: libp2p's own, which refuses inbound connections, sits above it. */
export const VOLUNTEER_MAX_CONNECTIONS = 48;
/** Gap between liveness pings on each connection, ms (libp2p's default is 10 s). */
export const DEFAULT_PING_INTERVAL_MS = 60_000;
/** A volunteer's gap: its neighbours' liveness is proven by coordinate probes
 * (a failed one drops the neighbour at once), its other connections are brief
 * DHT ones the trimmer closes, and a ping a minute on each of ~45 connections
 * was as many streams as the probes themselves. Five minutes still finds a
 * dead TCP connection (no FIN: a PC that lost power) well before any NAT
 * forgets an established mapping (RFC 5382: at least 2 h 4 min). */
export const VOLUNTEER_PING_INTERVAL_MS = 300_000;

export type VolcrawlServices = {
  identify: Identify;
  ping: Ping;
  dht: KadDHT;
  /** With `nat` (docs/nat.md): how others can reach this peer, and the hole punch. */
  reachability?: ReachabilityService;
  holePunch?: HolePunch;
};
export type VolcrawlLibp2p = Libp2p<VolcrawlServices>;

export interface Libp2pOptions {
  privateKey: PrivateKey;
  listen?: string[];
  announce?: string[];
  /** Keep loopback/private addresses in the DHT (LAN and test networks). */
  allowPrivateAddrs?: boolean;
  /** Lifetime of provider records, ms. Re-provided at half-life. */
  providerTtlMs?: number;
  /** Connection bound (default 200, the manager's; volunteers use VOLUNTEER_MAX_CONNECTIONS). */
  maxConnections?: number;
  /** Gap between liveness pings on each connection, ms. */
  pingIntervalMs?: number;
  dialTimeoutMs?: number;
  /** Inbound connections per second accepted from one IP (libp2p default 5;
   * a one-host test network needs far more). */
  inboundConnectionThreshold?: number;
  /** Multiply libp2p's dial/upgrade/negotiation timeouts (a heavily loaded
   * one-process test network needs more than the defaults). */
  timeoutScale?: number;
  /** Run the NAT-traversal parts (src/dht/nat.ts): not on a LAN network, where everyone can dial everyone. */
  nat?: NatOptions;
  /** libp2p's metrics hook (a volunteer counts its TCP bytes with it: src/dht/traffic.ts). */
  metrics?: () => Metrics;
}

export async function createVolcrawlLibp2p(opts: Libp2pOptions): Promise<VolcrawlLibp2p> {
  const ttl = opts.providerTtlMs ?? DEFAULT_PROVIDER_TTL_MS;
  const scale = opts.timeoutScale ?? 1;
  const timing = providerTiming(ttl);
  const nat = opts.nat !== undefined ? natStackParts(opts.nat) : undefined;
  return createLibp2p({
    privateKey: opts.privateKey,
    addresses: {
      listen: [...(opts.listen ?? ['/ip4/0.0.0.0/tcp/0']), ...(nat?.listen ?? [])],
      ...(opts.announce !== undefined && opts.announce.length > 0 ? { announce: opts.announce } : {}),
    },
    transports: [tcp(), ...(nat?.transports ?? [])],
    ...(opts.metrics !== undefined ? { metrics: opts.metrics } : {}),
    ...(nat?.connectionGater !== undefined ? { connectionGater: nat.connectionGater } : {}),
    connectionEncrypters: [noise()],
    streamMuxers: [yamux({ enableKeepAlive: false })],
    connectionMonitor: { pingInterval: opts.pingIntervalMs ?? DEFAULT_PING_INTERVAL_MS, pingTimeout: { minTimeout: 5_000 * scale, maxTimeout: 60_000 * scale } },
    connectionManager: {
      maxConnections: opts.maxConnections ?? 200,
      dialTimeout: opts.dialTimeoutMs ?? 10_000 * scale,
      addressDialTimeout: 6_000 * scale,
      inboundUpgradeTimeout: 10_000 * scale,
      inboundStreamProtocolNegotiationTimeout: 10_000 * scale,
      outboundStreamProtocolNegotiationTimeout: 10_000 * scale,
      ...(opts.inboundConnectionThreshold !== undefined
        ? { inboundConnectionThreshold: opts.inboundConnectionThreshold, maxIncomingPendingConnections: Math.max(10, opts.inboundConnectionThreshold) }
        : {}),
    },
    services: {
      identify: identify(),
      ping: ping(),
      dht: kadDHT({
        protocol: DHT_PROTOCOL,
        clientMode: false,
        peerInfoMapper: opts.allowPrivateAddrs === true ? passthroughMapper : removePrivateAddressesMapper,
        initialQuerySelfInterval: 100,
        alpha: 3,
        disjointPaths: 3,
        providers: { provideValidity: Math.ceil(timing.validityMs / 1000), cleanupInterval: timing.cleanupMs / 1000 },
        // The re-provide scan is local (a walk over our own records); only the
        // records past half-life cost a network query.
        reprovide: { validity: timing.validityMs, threshold: timing.thresholdMs, interval: timing.checkMs },
      }),
      ...nat?.services,
    },
  });
}

/** Stops a stack and ignores the error a second stop (or a stack that never
 * fully started) raises: stopping is the last step of every shutdown path, and
 * there is nothing left to release when it fails. */
export async function stopLibp2pQuietly(libp2p: VolcrawlLibp2p): Promise<void> {
  await Promise.resolve(libp2p.stop()).catch(() => undefined);
}

/** How to put a peer (the manager's or a volunteer's node) on a libp2p stack. */
export interface Libp2pPeerSetup<P> {
  /** Builds the peer's services on the running stack. */
  build(libp2p: VolcrawlLibp2p): P;
  /** Starts the peer's services, in order. */
  start(peer: P): Promise<void>;
  /** Undoes a failed `start` (default: stop the stack). */
  abandon?(peer: P): Promise<void>;
}

/** Creates the stack from the Libp2pOptions fields of `opts` (a node's options
 * may carry more; only these are read), builds the peer on it and starts it.
 * If a service fails to start the peer is abandoned before the error is
 * rethrown, so a half-started peer does not keep its sockets and DHT timers. */
export async function startLibp2pPeer<P>(opts: Libp2pOptions, setup: Libp2pPeerSetup<P>): Promise<P> {
  const libp2p = await createVolcrawlLibp2p(opts);
  const peer = setup.build(libp2p);
  try {
    await setup.start(peer);
  } catch (err) {
    await (setup.abandon !== undefined ? setup.abandon(peer) : stopLibp2pQuietly(libp2p));
    throw err;
  }
  return peer;
}
