// The scheduling side of a change to one channel, as batch operations: its
// record, its place in the due index, the window aggregates, and — when a task
// ends — the channels parked behind its host. The rules are domain/scheduler.ts's
// and domain/due-order.ts's; this file only turns their results into writes.
import type { BatchOp } from '../data/repositories.js';
import { streamOf, timedAt } from '../domain/due-order.js';
import type { DueEntry, InFlight, SchedRecord, WindowStats } from '../domain/schedule-record.js';
import type { ServiceCore } from './core.js';

/** Puts a due-index entry where it belongs now. */
export function placeOp(core: ServiceCore, e: DueEntry): BatchOp {
  return core.repos.due.putOp(e, streamOf(core.sched, e), timedAt(core.sched, e));
}

/** Removes a channel's entry from wherever it is (its record as it was when placed). */
export function unplaceOps(core: ServiceCore, id: string, rec: SchedRecord): BatchOp[] {
  const e = core.sched.entry(id, rec);
  return core.repos.due.delAnywhereOps(e, timedAt(core.sched, e));
}

/** A channel without a task in flight changed from `before` to `after`: its record and
 * its index entry (moved out of a parked place too: the next pass parks it again if
 * its host is still busy). */
export function rescheduleOps(core: ServiceCore, id: string, before: SchedRecord | undefined, after: SchedRecord): BatchOp[] {
  const ops = before !== undefined ? unplaceOps(core, id, before) : [];
  ops.push(core.repos.channels.scheduleOp(id, after), placeOp(core, core.sched.entry(id, after)));
  return ops;
}

/** A task ended: the channel's new record goes back into the index, and the channels
 * parked behind its host return to their streams (the host is free again). The caller
 * has taken it out of the in-flight set. */
export async function endOps(core: ServiceCore, id: string, after: SchedRecord | undefined, fl: InFlight): Promise<BatchOp[]> {
  const ops: BatchOp[] = [];
  if (after !== undefined) ops.push(core.repos.channels.scheduleOp(id, after), placeOp(core, core.sched.entry(id, after)));
  ops.push(...(await releaseOps(core, fl.hh)));
  return ops;
}

/** The host is free: its parked channels return to their streams. */
export async function releaseOps(core: ServiceCore, hh: number): Promise<BatchOp[]> {
  if (core.inflight.busy(hh)) return [];
  const ops: BatchOp[] = [];
  for (const e of await core.repos.due.parked(hh)) ops.push(core.repos.due.unparkOp(e), placeOp(core, e));
  return ops;
}

/** The channel now has an optional record (scheduler.ts DATA_*): its record says so, and
 * its due-index entry, or — while a task is in flight — the record written when it ends. */
export function dataOps(core: ServiceCore, id: string, rec: SchedRecord, bit: number): BatchOp[] {
  const after = core.sched.withData(rec, bit);
  if (after === null) return [];
  if (core.inflight.get(id) === undefined) return rescheduleOps(core, id, rec, after);
  core.inflight.addData(id, bit);
  return [core.repos.channels.scheduleOp(id, after)];
}

/** The window aggregates before a change (for `commitScheduled`). */
export function snapshot(core: ServiceCore): WindowStats {
  return structuredClone(core.sched.stats);
}

/** Writes a change whose scheduling side was already applied in memory: if the write
 * fails, the aggregates go back to `saved` and `undo` puts back the rest (a task in
 * flight), so memory stays as the database is. */
export async function commitScheduled(core: ServiceCore, ops: BatchOp[], saved: WindowStats, undo?: () => void): Promise<void> {
  try {
    await core.repos.commit(ops);
  } catch (err) {
    core.sched.stats = saved;
    undo?.();
    throw err;
  }
}

/** The window aggregates as they are now (written with every change to them). */
export function statsOp(core: ServiceCore): BatchOp {
  return core.repos.meta.windowOp(core.sched.stats);
}
