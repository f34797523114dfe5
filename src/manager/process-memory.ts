// How much memory V8 may hold beyond what the manager's process keeps alive. Set by
// `dht-manager serve` for its own process (no flag for the operator to pass) and by
// `npm run bench:manager`, which measures what serve runs.
//
// V8 lets the old generation grow to a multiple of the live heap before a full
// collection, up to 4× when the program allocates fast. The manager allocates fast and
// briefly (a scheduling pass's tasks and batch, an upload's pages) on a small live heap
// (≈ 40 MB with 100 000 tasks in flight), so under load most of its heap was garbage
// waiting: 190–240 MB of heap at the benchmark's peaks against ≈ 40 MB live. A growing
// factor of 2 halves that slack (heap at the issue phase's peak 155 against 235 MB); a
// factor of 1.3 cut it further but cost ≈ 30 % of the scheduling rate in full
// collections (docs/manager.md, "Memory").
import { setFlagsFromString } from 'node:v8';

/** The old generation grows to at most this percentage above the live heap. */
export const HEAP_GROWING_PERCENT = 100;

/** Applies the growing factor to this process (read by V8 at every full collection). */
export function limitHeapSlack(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
