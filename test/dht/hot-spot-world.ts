// The hot spot the router tests build on loopback (router-widen, router-full-walk;
// placement-widen.test.ts has the same numbers): a host at (2, 8) and two crawlers
// next to it at (12, 6) and (13, 6), 16–17 ms away, both full. Each test adds the
// crawler with room where its case needs it.
import type { Coordinate } from '../../src/coords/index.js';
import type { Load } from '../../src/dht/peers.js';

export const at = (x: number, y: number): Coordinate => ({ vec: Float64Array.from([x, y]), height: 3, error: 0.1 });
export const HOST: [number, number] = [2, 8];
export const FULL_PAIR: [number, number][] = [
  [12, 6],
  [13, 6],
];
export const full: Load = { running: 4, queued: 2, free: 0 };
export const idle: Load = { running: 0, queued: 0, free: 6 };
