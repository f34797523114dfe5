// Where a task goes. CoordIndex: a uniform grid over the first two coordinate
// dimensions holding the ONLINE crawlers, searched ring by ring for exact nearest
// neighbours under the predicted RTT ‖x − y‖ + h (the grid distance is a lower
// bound). HashRing: the baseline, consistent hashing of hosts onto crawlers.

export interface Router {
  add(c: number): void;
  remove(c: number): void;
  /** Writes up to k online crawlers for host h, best first, into out; returns the
   * count. Fewer than k (but at least `minimum` when that many are online) may be
   * returned when only the host's precomputed neighbourhood is searched. */
  nearest(h: number, k: number, out: Int32Array, minimum?: number): number;
}

export class CoordIndex implements Router {
  private readonly g: number;
  private readonly minX: number;
  private readonly minY: number;
  private readonly cs: number;
  private readonly cells: number[][];
  private readonly pos: Int32Array;
  private readonly cellOf: Int32Array;
  private readonly candD = new Float64Array(64);
  private readonly candC = new Int32Array(64);
  private readonly online: Uint8Array;
  private onlineCount = 0;
  private readonly listLen: number;
  private readonly lists: Int32Array;

  constructor(
    private readonly crawlerVec: Float64Array,
    private readonly crawlerHeight: Float64Array,
    private readonly hostVec: Float64Array,
    private readonly hostHeight: Float64Array,
    private readonly dims: number,
    listLen = 64,
  ) {
    const n = crawlerHeight.length;
    let minX = Infinity;
    let minY = Infinity;
    let maxX = -Infinity;
    let maxY = -Infinity;
    for (let c = 0; c < n; c++) {
      const x = crawlerVec[c * dims]!;
      const y = dims > 1 ? crawlerVec[c * dims + 1]! : 0;
      minX = Math.min(minX, x);
      maxX = Math.max(maxX, x);
      minY = Math.min(minY, y);
      maxY = Math.max(maxY, y);
    }
    this.g = Math.max(1, Math.ceil(Math.sqrt(n / 2)));
    this.minX = minX;
    this.minY = minY;
    this.cs = Math.max(maxX - minX, maxY - minY, 1e-9) / this.g + 1e-9;
    this.cells = Array.from({ length: this.g * this.g }, () => []);
    this.pos = new Int32Array(n).fill(-1);
    this.cellOf = new Int32Array(n);
    for (let c = 0; c < n; c++) {
      const x = crawlerVec[c * dims]!;
      const y = dims > 1 ? crawlerVec[c * dims + 1]! : 0;
      this.cellOf[c] = this.cy(y) * this.g + this.cx(x);
    }
    this.online = new Uint8Array(n);
    // Precompute each host's nearest crawlers with the grid holding everyone.
    this.listLen = Math.min(n, listLen);
    const hosts = hostHeight.length;
    this.lists = new Int32Array(hosts * this.listLen);
    for (let c = 0; c < n; c++) this.add(c);
    const tmp = new Int32Array(64);
    for (let h = 0; h < hosts; h++) {
      const m = this.searchGrid(h, this.listLen, tmp);
      this.lists.set(tmp.subarray(0, m), h * this.listLen);
    }
    for (let c = 0; c < n; c++) this.remove(c);
  }

  private cx(x: number): number {
    return Math.min(this.g - 1, Math.max(0, Math.floor((x - this.minX) / this.cs)));
  }
  private cy(y: number): number {
    return Math.min(this.g - 1, Math.max(0, Math.floor((y - this.minY) / this.cs)));
  }

  add(c: number): void {
    if (this.pos[c]! >= 0) return;
    this.online[c] = 1;
    this.onlineCount++;
    const cell = this.cells[this.cellOf[c]!]!;
    this.pos[c] = cell.length;
    cell.push(c);
  }

  remove(c: number): void {
    const p = this.pos[c]!;
    if (p < 0) return;
    this.online[c] = 0;
    this.onlineCount--;
    const cell = this.cells[this.cellOf[c]!]!;
    const last = cell.pop()!;
    if (last !== c) {
      cell[p] = last;
      this.pos[last] = p;
    }
    this.pos[c] = -1;
  }

  /** k nearest online crawlers to host h (k ≤ 64) by predicted RTT: the host's
   * precomputed list of its nearest crawlers (online or not) filtered by who is
   * online, falling back to the live grid when the list runs out. */
  nearest(h: number, k: number, out: Int32Array, minimum = k): number {
    const M = this.listLen;
    const base = h * M;
    const list = this.lists;
    const on = this.online;
    let m = 0;
    for (let i = 0; i < M && m < k; i++) {
      const c = list[base + i]!;
      if (on[c]) out[m++] = c;
    }
    if (m >= minimum || this.onlineCount === m) return m;
    return this.searchGrid(h, k, out);
  }

  /** Exact k nearest online crawlers by a ring search of the live grid. */
  searchGrid(h: number, k: number, out: Int32Array): number {
    const d = this.dims;
    const hv = this.hostVec;
    const cv = this.crawlerVec;
    const ch = this.crawlerHeight;
    const hb = h * d;
    const qx = hv[hb]!;
    const qy = d > 1 ? hv[hb + 1]! : 0;
    const ix = this.cx(qx);
    const iy = this.cy(qy);
    const g = this.g;
    const cd = this.candD;
    const cc = this.candC;
    let m = 0;
    for (let r = 0; r <= g; r++) {
      if (m >= k && cd[m - 1]! <= (r - 1) * this.cs) break;
      const x0 = ix - r;
      const x1 = ix + r;
      const y0 = iy - r;
      const y1 = iy + r;
      for (let y = y0; y <= y1; y++) {
        if (y < 0 || y >= g) continue;
        const edgeRow = y === y0 || y === y1;
        for (let x = x0; x <= x1; x += edgeRow ? 1 : x1 - x0 || 1) {
          if (x >= 0 && x < g) {
            const cell = this.cells[y * g + x]!;
            for (let i = 0; i < cell.length; i++) {
              const c = cell[i]!;
              const cb = c * d;
              let s = 0;
              for (let j = 0; j < d; j++) {
                const t = hv[hb + j]! - cv[cb + j]!;
                s += t * t;
              }
              const dist = Math.sqrt(s) + ch[c]!;
              // Insertion into the sorted top k: grow while it is short, else replace the worst.
              if (m < k || dist < cd[m - 1]! || (dist === cd[m - 1] && c < cc[m - 1]!)) {
                let p = m < k ? m++ : m - 1;
                while (p > 0 && (cd[p - 1]! > dist || (cd[p - 1] === dist && cc[p - 1]! > c))) {
                  cd[p] = cd[p - 1]!;
                  cc[p] = cc[p - 1]!;
                  p--;
                }
                cd[p] = dist;
                cc[p] = c;
              }
            }
          }
          if (x1 === x0) break;
        }
      }
    }
    for (let i = 0; i < m; i++) out[i] = cc[i]!;
    // The host's own height is the same for every candidate, so it does not change the order.
    return m;
  }
}

function hash32(x: number, seed: number): number {
  let z = (x ^ seed) >>> 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  z = Math.imul(z ^ (z >>> 16), 0x27d4eb2f);
  return (z ^ (z >>> 15)) >>> 0;
}

/** Consistent hashing: a host goes to the first online crawler clockwise of its hash. */
export class HashRing implements Router {
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
