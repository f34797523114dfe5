// A signed one-page task order from a manager, for the Router tests that route
// real orders to loopback crawlers (router-confirm, router-widen).
import type { PrivateKey } from '@libp2p/interface';
import type { VolcrawlLibp2p } from '../../src/dht/libp2p.js';
import { signOrder, type TaskOrder } from '../../src/dht/signing.js';
import { UPLOAD_PROTOCOL } from '../../src/dht/upload.js';

export type SignedOrder = { envelope: Awaited<ReturnType<typeof signOrder>>; order: TaskOrder };

/** Order `id` for host a.test at `hostCoord`, issued now by `manager`, valid 10 minutes. */
export async function signedTestOrder(manager: VolcrawlLibp2p, key: PrivateKey, id: string, hostCoord: { vec: number[]; height: number }): Promise<SignedOrder> {
  const now = Date.now();
  const task = { id, scope: { origin: 'http://a.test', pathPrefixes: ['/'] }, seeds: ['http://a.test/'], maxDepth: 0, deadline: now + 600_000 };
  const o: TaskOrder = {
    v: 1,
    id,
    issuer: manager.peerId.toString(),
    issuedAt: now,
    expiresAt: now + 600_000,
    host: 'a.test',
    hostCoord,
    storage: { peer: manager.peerId.toString(), protocol: UPLOAD_PROTOCOL, addrs: [] },
    task,
  };
  return { envelope: await signOrder(o, key), order: o };
}
