// Re-crawls that replace a distrusted volunteer's pages, followed until they
// land. A quarantined (or outvoted) volunteer's current pages are marked
// unverified (distrust.ts) and stay current until a crawl by someone else
// brings them again. One re-crawl sent once was not enough: in the benchmark
// 4 forged pages were still current 120 s after the last quarantine, because a
// re-crawl was refused by a full volunteer or handed on (and nothing retried
// it), cut by its deadline before every page, or never uploaded — and the
// channel's next scheduled crawl can be hours away. So a channel stays listed
// here until no unverified page is left on it: a re-crawl goes unforwardable
// (a full volunteer could otherwise hand it to the nearest crawler with room,
// which may be another forger) to a volunteer in good standing, the next one
// is asked when it is full, one that never uploads is given up at its
// deadline, and a crawl that left pages unverified is followed by another, up
// to MAX_ATTEMPTS (then the scheduled crawls take over: a page gone from the
// site is never brought back).
//
// In memory: a manager restart forgets the list (the pages stay unverified and
// out of the known list, so the next scheduled crawl brings them back).
import type { Channel } from '../domain/channel.js';
import type { TaskRecord } from '../domain/records.js';
import type { ServiceCore } from '../services/core.js';

/** A task that left (what TrustChecks' send returns). */
export interface SentTask {
  id: string;
  /** The peer that holds it (an older volunteer may forward a task regardless). */
  by: string;
  issuedAt: number;
  deadline: number;
}

/** What the re-crawls need of TrustChecks and the trust service. */
export interface RecrawlHost {
  readonly core: ServiceCore;
  excluded(): Set<string>;
  /** A volunteer in good standing, not among `exclude` (verifier.ts's choice), or null. */
  pick(subject: string, others: string[], exclude: readonly string[]): string | null;
  /** Sends a crawl of `ch` from scratch to `peer` (see TrustChecks.send). */
  send(ch: Channel, peer: string, register: (m: SentTask) => Promise<void>, unregister: (id: string) => Promise<void>, forward: boolean): Promise<SentTask | null>;
  /** A re-crawl is about to leave: its upload is not a primary task. */
  noteRecrawl(id: string): void;
  /** A re-crawl was accepted (counted apart from verification: the cost of an attack). */
  countRecrawl(): void;
}

/** Re-crawls of one channel before the scheduled crawls are left to it. */
export const MAX_ATTEMPTS = 5;
/** Volunteers asked at each try. */
const TRIES = 3;

interface Pending {
  channel: string;
  why: string;
  attempts: number;
  /** The re-crawl out now (set before it leaves: a fast crawl may upload before the reply). */
  inFlight: SentTask | null;
  /** An attempt is under way (the sweep and a new distrust must not send a second one). */
  sending: boolean;
}

export class Recrawls {
  private readonly pending = new Map<string, Pending>();
  private trying = false;

  constructor(
    private readonly h: RecrawlHost,
    private readonly graceMs: () => number,
  ) {}

  /** Channels with a re-crawl to come or in flight. */
  get size(): number {
    return this.pending.size;
  }

  /** Lists `channel` for a re-crawl (once: a second reason joins the first) and tries it now. Whether one left. */
  async request(channel: string, why: string): Promise<boolean> {
    const p = this.pending.get(channel);
    if (p !== undefined) {
      if (!p.why.includes(why)) p.why = `${p.why}; ${why}`.slice(0, 500);
      // A crawl already in flight brings every page; a new distrust after it left
      // (more pages marked) is seen when it lands.
      return p.inFlight === null && !p.sending ? this.attempt(p) : false;
    }
    const fresh: Pending = { channel, why, attempts: 0, inFlight: null, sending: false };
    this.pending.set(channel, fresh);
    return this.attempt(fresh);
  }

  /** A re-crawl's final part was stored: done when no unverified page is left, else another one later. */
  async landed(taskId: string): Promise<void> {
    const p = [...this.pending.values()].find((x) => x.inFlight?.id === taskId);
    if (p === undefined) return;
    p.inFlight = null;
    const left = await this.unverified(p.channel);
    if (left === 0) {
      this.pending.delete(p.channel);
      this.h.core.log.info({ channel: p.channel, task: taskId, attempts: p.attempts }, 're-crawl replaced every unverified page');
    } else this.h.core.log.info({ channel: p.channel, task: taskId, unverifiedLeft: left }, 're-crawl left pages unverified: another follows');
  }

  /** At each sweep: gives up re-crawls past their deadline, tries the channels waiting for one. */
  async sweep(now: number): Promise<void> {
    if (this.trying) return;
    this.trying = true;
    try {
      for (const p of [...this.pending.values()]) {
        if (p.inFlight !== null && now > p.inFlight.deadline + this.graceMs()) {
          this.h.core.log.info({ channel: p.channel, task: p.inFlight.id, by: p.inFlight.by }, 're-crawl not uploaded by its deadline');
          await this.record(p.inFlight, p.channel, 'failed', 'not uploaded by its deadline');
          p.inFlight = null;
        }
        if (p.inFlight !== null || p.sending) continue;
        if (p.attempts >= MAX_ATTEMPTS) {
          this.pending.delete(p.channel);
          this.h.core.log.warn({ channel: p.channel, attempts: p.attempts, why: p.why }, 're-crawls gave up: the scheduled crawls bring the unverified pages back');
          continue;
        }
        if ((await this.unverified(p.channel)) === 0) {
          this.pending.delete(p.channel); // an ordinary crawl replaced them meanwhile
          continue;
        }
        await this.attempt(p);
      }
    } finally {
      this.trying = false;
    }
  }

  private async unverified(channel: string): Promise<number> {
    return (await this.h.core.repos.pages.latest(channel)).filter((x) => x.latest.version > 0 && x.latest.unverified === true).length;
  }

  /** An ordinary task record outside the schedule (under its finished key): the ingest
   * service stores its pages like any upload's and leaves the schedule alone. */
  private async record(m: SentTask, channel: string, state: TaskRecord['state'], reason?: string): Promise<void> {
    const ch = await this.h.core.repos.channels.get(channel);
    if (ch === undefined) return;
    const { repos, commit } = this.h.core;
    const t: TaskRecord = { id: m.id, channel, host: ch.host, issuedAt: m.issuedAt, deadline: m.deadline, round: 0, state, holder: m.by, parts: 0, pagesStored: 0, livePages: 0, revisited: 0, changed: 0, newPages: 0 };
    if (reason !== undefined) t.reason = reason;
    await commit.run(() => repos.commit([repos.tasks.putOp(t, false)]));
  }

  /** Sends one re-crawl of the channel to a volunteer in good standing; whether one left. */
  private async attempt(p: Pending): Promise<boolean> {
    p.sending = true;
    try {
      return await this.attemptOnce(p);
    } finally {
      p.sending = false;
    }
  }

  private async attemptOnce(p: Pending): Promise<boolean> {
    const ch = await this.h.core.repos.channels.get(p.channel);
    if (ch === undefined) {
      this.pending.delete(p.channel);
      return false;
    }
    const excluded = [...this.h.excluded()];
    const tried: string[] = [];
    for (let i = 0; i < TRIES; i++) {
      const peer = this.h.pick(excluded[0] ?? '', excluded.slice(1), tried);
      if (peer === null) break;
      tried.push(peer);
      let meta: SentTask | undefined;
      const sent = await this.h.send(
        ch,
        peer,
        async (m) => {
          meta = m;
          p.inFlight = m;
          this.h.noteRecrawl(m.id);
          await this.record(m, p.channel, 'running');
        },
        async () => {
          p.inFlight = null;
          if (meta !== undefined) await this.record(meta, p.channel, 'failed', 'not accepted');
        },
        false,
      );
      if (sent === null) continue;
      if (sent.by !== peer) await this.record(sent, p.channel, 'running');
      p.attempts++;
      this.h.countRecrawl();
      this.h.core.log.info({ channel: p.channel, task: sent.id, by: sent.by, attempt: p.attempts, why: p.why }, 're-crawl issued');
      return true;
    }
    if (p.attempts === 0) this.h.core.log.info({ channel: p.channel, why: p.why }, 're-crawl waits: no volunteer in good standing has room now');
    return false;
  }
}
