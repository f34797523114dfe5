// Record digests as archival crawlers write them (Heritrix, wget, warcprox,
// Common Crawl): SHA-1 in base32, "sha1:" + 32 characters. Payload digests
// that agree with other archives of the same page let replay tools and
// deduplication match captures across crawls and crawlers.
import { createHash } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32, without padding (a SHA-1 digest is exactly 32 characters). */
export function base32(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (let i = 0; i < bytes.length; i++) {
    value = (value << 8) | (bytes[i] as number);
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

/** "sha1:<base32>" of a raw SHA-1 digest. */
export function sha1Label(digest: Uint8Array): string {
  return 'sha1:' + base32(digest);
}

/** "sha1:<base32>" of the concatenation of the parts. */
export function sha1Digest(parts: readonly Uint8Array[]): string {
  const h = createHash('sha1');
  for (const p of parts) h.update(p);
  return sha1Label(h.digest());
}
