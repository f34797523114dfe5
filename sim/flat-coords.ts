// Coordinates of many points stored flat in typed arrays (the simulator keeps
// hundreds of thousands; an object per point costs ~10× per access on random
// access). Its own module so the world, the overlay and the routing indexes
// can share it without importing each other.
import type { Coordinate } from '../src/coords/index.js';

/** Coordinates stored flat: point i's d-vector at vec[i·d ..], its height at height[i]. */
export interface FlatCoords {
  vec: Float64Array;
  height: Float64Array;
  dims: number;
}

/** Point i of `p` as a Coordinate (a view; for the code shared with the live
 * system that takes Coordinates — not for hot loops). */
export function coordOf(p: FlatCoords, i: number): Coordinate {
  return { vec: p.vec.subarray(i * p.dims, (i + 1) * p.dims), height: p.height[i]!, error: 0 };
}
