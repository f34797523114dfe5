// Digests used by the crawler: 32-bit SHA-1 digests (paper §2.1: Pageseen and
// inter-site URL digests) and 64-bit URL hashes for URLseen.
import * as nodeCrypto from 'node:crypto';

// crypto.hash (one-shot, faster for short inputs) exists from Node 20.12; older 20.x fall back.
export const sha1 = (data: string | Uint8Array): Buffer =>
  typeof nodeCrypto.hash === 'function' ? nodeCrypto.hash('sha1', data, 'buffer') : nodeCrypto.createHash('sha1').update(data).digest();

/** First 32 bits of SHA-1, as an unsigned integer. */
export function sha1_32(data: string | Uint8Array): number {
  return sha1(data).readUInt32BE(0);
}

/** First 64 bits of SHA-1, as two unsigned 32-bit halves. */
export function sha1_64(data: string): [number, number] {
  const d = sha1(data);
  return [d.readUInt32BE(0), d.readUInt32BE(4)];
}

/** A sorted set of uint32 digests with binary search (Pageseen, known inter-site URLs). */
export class DigestSet {
  private readonly sorted: Uint32Array;
  constructor(digests: Iterable<number>) {
    this.sorted = Uint32Array.from(digests).sort();
  }
  get size(): number {
    return this.sorted.length;
  }
  has(d: number): boolean {
    const a = this.sorted;
    let lo = 0;
    let hi = a.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const v = a[mid] as number;
      if (v === d) return true;
      if (v < d) lo = mid + 1;
      else hi = mid - 1;
    }
    return false;
  }
}
