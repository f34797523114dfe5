// The data layer in one object: the database and a repository per kind of
// record. Services get this; only the repositories build keys (keys.ts).
import { CandidateRepository } from './candidates.js';
import { DueIndexRepository } from './due-index.js';
import { ChannelRepository } from './channels.js';
import { HostRepository } from './hosts.js';
import { MetaRepository } from './meta.js';
import { PageRepository } from './pages.js';
import { Store, type BatchOp } from './store.js';
import { TaskRepository } from './tasks.js';
import { VolunteerRepository } from './volunteers.js';

export type { BatchOp } from './store.js';

export class Repositories {
  readonly channels: ChannelRepository;
  readonly tasks: TaskRepository;
  readonly pages: PageRepository;
  readonly candidates: CandidateRepository;
  readonly hosts: HostRepository;
  readonly meta: MetaRepository;
  readonly volunteers: VolunteerRepository;
  readonly due: DueIndexRepository;

  private constructor(
    private readonly store: Store,
    groups: number,
  ) {
    this.channels = new ChannelRepository(store);
    this.tasks = new TaskRepository(store);
    this.pages = new PageRepository(store);
    this.candidates = new CandidateRepository(store);
    this.hosts = new HostRepository(store);
    this.meta = new MetaRepository(store);
    this.volunteers = new VolunteerRepository(store);
    this.due = new DueIndexRepository(store, groups);
  }

  /** Opens <data-dir>/db; StoreLockedError when another process holds it. */
  static async open(dataDir: string, opts: { sync?: boolean; groups?: number } = {}): Promise<Repositories> {
    return new Repositories(await Store.open(dataDir, opts), opts.groups ?? 5);
  }

  private written = 0;

  /** Writes the operations of one change atomically, before the change is acknowledged. */
  commit(ops: BatchOp[]): Promise<void> {
    if (ops.length > 0) this.written++;
    return this.store.batch(ops);
  }

  /** How many batches were written since the database was opened (reports use it to see
   * whether anything changed). */
  get writes(): number {
    return this.written;
  }

  close(): Promise<void> {
    return this.store.close();
  }
}
