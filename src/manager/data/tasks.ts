// Task records: a task in flight lives under its active key until it ends,
// then under its finished key (so a restart scans only the tasks in flight).
import { K } from './keys.js';
import type { TaskRecord } from '../domain/records.js';
import type { BatchOp, Store } from './store.js';

export class TaskRepository {
  constructor(private readonly store: Store) {}

  active(id: string): Promise<TaskRecord | undefined> {
    return this.store.get<TaskRecord>(K.active(id));
  }

  async activeMany(ids: string[]): Promise<TaskRecord[]> {
    return (await this.store.getMany<TaskRecord>(ids.map((id) => K.active(id)))).filter((r): r is TaskRecord => r !== undefined);
  }

  finished(id: string): Promise<TaskRecord | undefined> {
    return this.store.get<TaskRecord>(K.task(id));
  }

  /** Streams the tasks in flight (startup). */
  scanActive(fn: (t: TaskRecord) => void): Promise<number> {
    return this.store.scan<TaskRecord>(K.actives(), (_id, t) => fn(t));
  }

  /** Writes the record where its state says: in flight or finished. */
  putOp(t: TaskRecord, inFlight: boolean): BatchOp {
    return { type: 'put', key: inFlight ? K.active(t.id) : K.task(t.id), value: t };
  }

  /** The task ended: its record moves from the active to the finished key. */
  finishOps(t: TaskRecord): BatchOp[] {
    return [
      { type: 'put', key: K.task(t.id), value: t },
      { type: 'del', key: K.active(t.id) },
    ];
  }
}
