// Spatial helpers of the simulator: the crawlers each crawler knows (its
// nearest ones, where a full crawler forwards), and HashRing, the baseline:
// consistent hashing of hosts onto crawlers.
import { predictRttAt } from '../src/coords/index.js';
import type { Rng } from '../src/rng.js';
import type { FlatCoords } from './flat-coords.js';
import { hash32 } from '../src/rng.js';

/**
 * Each point's k nearest other points by predicted RTT (predictRtt), nearest
 * first, ties to the lower index: row i of the result is out[i·k .. i·k + k),
 * −1 where fewer exist. A uniform grid over the first two coordinate axes is
 * searched ring by ring (the grid distance is a lower bound of the RTT).
 */
export function nearestNeighbours(points: FlatCoords, k: number): Int32Array {
  const n = points.height.length;
  const dims = points.dims;
  const vec = points.vec;
  const ht = points.height;
  const out = new Int32Array(n * k).fill(-1);
  if (n < 2 || k < 1) return out;
  const at = (v: Float64Array, i: number, a: number): number => (dims > a ? v[i * dims + a]! : 0);
  let minX = Infinity;
  let minY = Infinity;
  let maxX = -Infinity;
  let maxY = -Infinity;
  for (let i = 0; i < n; i++) {
    minX = Math.min(minX, at(vec, i, 0));
    maxX = Math.max(maxX, at(vec, i, 0));
    minY = Math.min(minY, at(vec, i, 1));
    maxY = Math.max(maxY, at(vec, i, 1));
  }
  const g = Math.max(1, Math.ceil(Math.sqrt(n / 2)));
  const cs = Math.max(maxX - minX, maxY - minY, 1e-9) / g + 1e-9;
  const cx = (x: number) => Math.min(g - 1, Math.max(0, Math.floor((x - minX) / cs)));
  const cy = (y: number) => Math.min(g - 1, Math.max(0, Math.floor((y - minY) / cs)));
  const cells: number[][] = Array.from({ length: g * g }, () => []);
  for (let i = 0; i < n; i++) cells[cy(at(vec, i, 1)) * g + cx(at(vec, i, 0))]!.push(i);
  const cd = new Float64Array(k);
  const cc = new Int32Array(k);
  for (let q = 0; q < n; q++) {
    const ix = cx(at(vec, q, 0));
    const iy = cy(at(vec, q, 1));
    let m = 0;
    for (let r = 0; r <= g; r++) {
      if (m >= k && cd[m - 1]! <= (r - 1) * cs) break;
      for (let y = iy - r; y <= iy + r; y++) {
        if (y < 0 || y >= g) continue;
        const edgeRow = y === iy - r || y === iy + r;
        for (let x = ix - r; x <= ix + r; x += edgeRow || r === 0 ? 1 : 2 * r) {
          if (x < 0 || x >= g) continue;
          for (const i of cells[y * g + x]!) {
            if (i === q) continue;
            const d = predictRttAt(vec, q * dims, ht[q]!, vec, i * dims, ht[i]!, dims);
            // Insertion into the sorted top k: grow while it is short, else replace the worst.
            if (m < k || d < cd[m - 1]! || (d === cd[m - 1] && i < cc[m - 1]!)) {
              let p = m < k ? m++ : m - 1;
              while (p > 0 && (cd[p - 1]! > d || (cd[p - 1] === d && cc[p - 1]! > i))) {
                cd[p] = cd[p - 1]!;
                cc[p] = cc[p - 1]!;
                p--;
              }
              cd[p] = d;
              cc[p] = i;
            }
          }
        }
      }
    }
    out.set(cc.subarray(0, m), q * k);
  }
  return out;
}

/**
 * The crawlers each crawler knows, as a live crawler's peer table holds them:
 * its `near` nearest (coordinate probing favours near peers) and `random`
 * others drawn uniformly (probing also picks random peers, to keep the global
 * geometry right). Row i is out[i·(near + random) ..], −1 where fewer exist.
 */
export function knownPeers(points: FlatCoords, near: number, random: number, rng: Rng): Int32Array {
  const n = points.height.length;
  const k = near + random;
  const nearest = nearestNeighbours(points, near);
  const out = new Int32Array(n * k).fill(-1);
  for (let i = 0; i < n; i++) {
    out.set(nearest.subarray(i * near, (i + 1) * near), i * k);
    const row = out.subarray(i * k, (i + 1) * k);
    let m = near;
    for (let tries = 0; m < k && tries < 4 * random; tries++) {
      const p = Math.floor(rng.next() * n);
      if (p !== i && !row.includes(p)) row[m++] = p;
    }
  }
  return out;
}

/** Offers x to top, the m least values so far in ascending order (at most k);
 * returns the new count. */
export function keepLeast(top: Float64Array, m: number, k: number, x: number): number {
  if (m === k && x >= top[k - 1]!) return m;
  let p = m < k ? m++ : k - 1;
  while (p > 0 && top[p - 1]! > x) {
    top[p] = top[p - 1]!;
    p--;
  }
  top[p] = x;
  return m;
}

/** The k-th least of a[0 .. n), Infinity if n < k (`scratch` holds at least k). */
export function kthSmallest(a: Float64Array, n: number, k: number, scratch: Float64Array): number {
  if (n < k || k < 1) return n < k ? Infinity : -Infinity;
  let m = 0;
  for (let i = 0; i < n; i++) m = keepLeast(scratch, m, k, a[i]!);
  return scratch[k - 1]!;
}

/** A 32-bit integer hash (src/rng.ts; the cell search's provider sample uses it too). */
export { hash32 };

/** Consistent hashing: a host goes to the first online crawler clockwise of its hash. */
export class HashRing {
  private readonly ring: Int32Array;
  private readonly keys: Float64Array;
  private readonly online: Uint8Array;
  private readonly hostKey: Float64Array;

  constructor(crawlers: number, hosts: number, seed: number) {
    const ids = Array.from({ length: crawlers }, (_, c) => c);
    const key = ids.map((c) => hash32(c, seed ^ 0x5bd1e995));
    ids.sort((a, b) => key[a]! - key[b]! || a - b);
    this.ring = Int32Array.from(ids);
    this.keys = Float64Array.from(ids.map((c) => key[c]!));
    this.online = new Uint8Array(crawlers);
    this.hostKey = new Float64Array(hosts);
    for (let h = 0; h < hosts; h++) this.hostKey[h] = hash32(h + 0x9e3779b9, seed);
  }

  add(c: number): void {
    this.online[c] = 1;
  }
  remove(c: number): void {
    this.online[c] = 0;
  }

  /** Writes up to k online crawlers for host h, in ring order, into out; returns the count. */
  nearest(h: number, k: number, out: Int32Array): number {
    const key = this.hostKey[h]!;
    const keys = this.keys;
    let lo = 0;
    let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (keys[mid]! < key) lo = mid + 1;
      else hi = mid;
    }
    const n = this.ring.length;
    let m = 0;
    for (let i = 0; i < n && m < k; i++) {
      const c = this.ring[(lo + i) % n]!;
      if (this.online[c]) out[m++] = c;
    }
    return m;
  }
}
