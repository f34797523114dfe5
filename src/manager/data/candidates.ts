// Candidate channels: sites crawled pages link to that no channel covers.
import { K } from './keys.js';
import type { Candidate } from '../domain/records.js';
import type { BatchOp, Store } from './store.js';

export class CandidateRepository {
  constructor(private readonly store: Store) {}

  get(origin: string): Promise<Candidate | undefined> {
    return this.store.get<Candidate>(K.candidate(origin));
  }

  getMany(origins: string[]): Promise<(Candidate | undefined)[]> {
    return this.store.getMany<Candidate>(origins.map((o) => K.candidate(o)));
  }

  async list(limit: number): Promise<Candidate[]> {
    return (await this.store.range<Candidate>(K.candidates(), { limit })).map((r) => r.value);
  }

  putOp(c: Candidate): BatchOp {
    return { type: 'put', key: K.candidate(c.origin), value: c };
  }
}
