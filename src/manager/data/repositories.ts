// The data layer in one object: the database and a repository per kind of
// record. Services get this; only the repositories build keys (keys.ts).
import { CandidateRepository } from './candidates.js';
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

  private constructor(private readonly store: Store) {
    this.channels = new ChannelRepository(store);
    this.tasks = new TaskRepository(store);
    this.pages = new PageRepository(store);
    this.candidates = new CandidateRepository(store);
    this.hosts = new HostRepository(store);
    this.meta = new MetaRepository(store);
    this.volunteers = new VolunteerRepository(store);
  }

  /** Opens <data-dir>/db; StoreLockedError when another process holds it. */
  static async open(dataDir: string, opts: { sync?: boolean } = {}): Promise<Repositories> {
    return new Repositories(await Store.open(dataDir, opts));
  }

  /** Writes the operations of one change atomically, before the change is acknowledged. */
  commit(ops: BatchOp[]): Promise<void> {
    return this.store.batch(ops);
  }

  close(): Promise<void> {
    return this.store.close();
  }
}
