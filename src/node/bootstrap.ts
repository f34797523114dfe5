// Bootstrap addresses: parsing what the user gave (a clear BootstrapError for
// a bad one) and the first dial that joins the overlay. Apart from node.ts
// because the join command and the owner's service parse addresses without a
// node, and the dial's race is a rule of its own.
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr';
import { peerIdFromString } from '@libp2p/peer-id';
import type { VolcrawlLibp2p } from '../dht/libp2p.js';

export class BootstrapError extends Error {
  override name = 'BootstrapError';
}

/** Parses bootstrap addresses; each must be a multiaddr ending in /p2p/<peer id>. */
export function parseBootstrap(addrs: string[]): Multiaddr[] {
  return addrs.map((s) => {
    let ma: Multiaddr;
    try {
      ma = multiaddr(s);
    } catch (err) {
      throw new BootstrapError(`malformed bootstrap address ${JSON.stringify(s)}: ${(err as Error).message}`);
    }
    const p2p = ma.getComponents().find((c) => c.name === 'p2p');
    if (p2p?.value === undefined) throw new BootstrapError(`bootstrap address ${s} lacks /p2p/<peer id>`);
    try {
      peerIdFromString(p2p.value);
    } catch {
      throw new BootstrapError(`bootstrap address ${s} has an invalid peer id`);
    }
    return ma;
  });
}

/** Dials every bootstrap peer at once and goes on as soon as one answers
 * (the others keep dialling in the background): waiting for all of them
 * held a join for the slowest — on a loaded machine, tens of seconds. */
export async function dialBootstrap(libp2p: VolcrawlLibp2p, boot: Multiaddr[], timeoutMs = 15_000): Promise<void> {
  const errors: string[] = [];
  const dials = boot.map((ma) =>
    libp2p.dial(ma, { signal: AbortSignal.timeout(timeoutMs) }).then(
      () => undefined,
      (err: unknown) => {
        errors.push(`${ma.toString()}: ${(err as Error).message}`);
        throw err;
      },
    ),
  );
  try {
    await Promise.any(dials);
  } catch {
    throw new BootstrapError(`could not reach any bootstrap peer (${errors.join('; ')})`);
  }
  // kad-dht's own self-query then fills the routing table around our id.
}
