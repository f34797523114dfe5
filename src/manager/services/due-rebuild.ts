// Builds the due index and the window aggregates from the channels' scheduling
// records: once for a database written before the due index existed, and again
// when what entries are placed by changes (the rate cap or the interval floor,
// e.g. `--rate-cap` or `--time-scale` at a restart). One pass, a chunk at a time:
// memory stays bounded whatever the channel count.
import { emptyStats } from '../../recrawl/window-stats.js';
import { hostKey } from '../domain/in-flight.js';
import type { DueIndexParams } from '../domain/schedule-record.js';
import type { BatchOp } from '../data/repositories.js';
import type { ServiceCore } from './core.js';
import { placeOp, statsOp } from './schedules.js';

/** Whether the stored index was built as the scheduler would place entries now. */
export function indexCurrent(stored: DueIndexParams | undefined, want: DueIndexParams): boolean {
  return stored !== undefined && stored.version === want.version && stored.rateCap === want.rateCap && stored.minInterval === want.minInterval;
}

/** Rebuilds the due index and the aggregates; the tasks in flight must be restored first. */
export async function rebuildDueIndex(core: ServiceCore): Promise<number> {
  const { repos, sched, inflight } = core;
  await repos.due.clear();
  sched.stats = emptyStats(sched.state.groups.length);
  let n = 0;
  await repos.channels.scanScheduleChunks(async (rows) => {
    // Records from before host keys were kept: the host comes from the channel.
    const missing = rows.filter(([, r]) => r.hh === undefined).map(([id]) => id);
    const hosts = new Map<string, string | undefined>();
    if (missing.length > 0) (await repos.channels.hostsOf(missing)).forEach((h, i) => hosts.set(missing[i]!, h));
    const ops: BatchOp[] = [];
    for (const [id, r] of rows) {
      let rec = r;
      if (rec.hh === undefined) {
        const host = hosts.get(id);
        if (host === undefined) continue; // a record left by a deleted channel
        rec = { ...rec, hh: hostKey(host) };
        ops.push(repos.channels.scheduleOp(id, rec));
      }
      const fl = inflight.get(id);
      sched.adopt(rec, fl);
      if (fl === undefined) ops.push(placeOp(core, sched.entry(id, rec)));
      n++;
    }
    await repos.commit(ops);
  });
  await repos.commit([statsOp(core), repos.meta.dueIndexOp(sched.indexParams())]);
  return n;
}
