// URLseen (paper §2.2): the set of URLs already discovered in this crawl, as
// compact 64-bit hashes in an open-addressing table (two Uint32Arrays, linear
// probing). Sized from the task's expected page count; grows if exceeded.
import { sha1_64 } from './hash.js';

export class UrlSeen {
  private hi: Uint32Array;
  private lo: Uint32Array;
  private mask: number;
  private count = 0;

  constructor(expected: number) {
    let cap = 1024;
    const want = Math.max(16, Math.ceil(expected * 2.5));
    while (cap < want && cap < 1 << 30) cap *= 2;
    this.hi = new Uint32Array(cap);
    this.lo = new Uint32Array(cap);
    this.mask = cap - 1;
  }

  get size(): number {
    return this.count;
  }

  /** Memory held by the table, bytes. */
  get bytes(): number {
    return this.hi.byteLength + this.lo.byteLength;
  }

  /** Adds the URL; returns true if it was new. */
  add(url: string): boolean {
    const [h, l0] = sha1_64(url);
    const l = h === 0 && l0 === 0 ? 1 : l0; // (0, 0) marks an empty slot
    return this.insert(h, l);
  }

  has(url: string): boolean {
    const [h, l0] = sha1_64(url);
    const l = h === 0 && l0 === 0 ? 1 : l0; // (0, 0) marks an empty slot
    let i = l & this.mask;
    for (;;) {
      const hh = this.hi[i] as number;
      const ll = this.lo[i] as number;
      if (hh === 0 && ll === 0) return false;
      if (hh === h && ll === l) return true;
      i = (i + 1) & this.mask;
    }
  }

  private insert(h: number, l: number): boolean {
    let i = l & this.mask;
    for (;;) {
      const hh = this.hi[i] as number;
      const ll = this.lo[i] as number;
      if (hh === 0 && ll === 0) break;
      if (hh === h && ll === l) return false;
      i = (i + 1) & this.mask;
    }
    this.hi[i] = h;
    this.lo[i] = l;
    this.count++;
    if (this.count * 2 > this.hi.length) this.grow();
    return true;
  }

  private grow(): void {
    const oh = this.hi;
    const ol = this.lo;
    this.hi = new Uint32Array(oh.length * 2);
    this.lo = new Uint32Array(oh.length * 2);
    this.mask = this.hi.length - 1;
    this.count = 0;
    for (let j = 0; j < oh.length; j++) {
      const h = oh[j] as number;
      const l = ol[j] as number;
      if (h !== 0 || l !== 0) this.insert(h, l);
    }
  }
}
