// Check crawls in flight: a second crawl of a finished task by an independent
// volunteer, a third when the two disagree, and re-crawls that replace a
// distrusted volunteer's pages. A check is an ordinary signed task with a fresh
// id and no known pages (every page comes back with its text), sent straight
// to the chosen volunteer, which may not forward it (it runs it or says it is
// full, and the next independent volunteer is asked): the crawler cannot tell
// it from any other task. A check no independent volunteer has room for waits
// and is offered again at each sweep, up to a check crawl's time. Its
// upload is compared, never stored. A check in flight is persisted (what it
// compares against: the subject's crawl and, for a third crawl, the first
// verifier's) when it leaves and deleted when it is decided, so a manager
// restart resumes it: the verifier's upload still lands. Its upload parts are
// not persisted: a resumed check whose first part after the restart is not
// part 0 lost parts in the restart and is dropped (counted).
import type { Rng } from '../../rng.js';
import type { WireCoord } from '../../dht/signing.js';
import type { UploadedResult } from '../domain/result-schema.js';
import type { Channel } from '../domain/channel.js';
import { MINUTE } from '../domain/scheduler.js';
import { buildTask, taskId } from '../domain/task-builder.js';
import { UploadRefused } from '../errors.js';
import type { DispatchResult, IssuedTask } from '../services/tasks.js';
import { compareCrawls, type CrawlView } from './compare.js';
import { owesIntro } from './intro.js';
import { resolvePair } from './tie-break.js';
import { judgeThird, party, settleFromStore } from './verdicts.js';
import { VerifierPool } from './verifier-pool.js';
import { CheckCrawl } from './views.js';
import { loadStoredChecks, type Check, type Waiting } from './check-record.js';
import { distrustPages } from './distrust.js';
import { Recrawls, type SentTask as Sent } from './recrawls.js';
import { CoverageWitnesses } from './witnesses.js';
import { TextReferences } from './text-refs.js';
import { introByStoredText, settleByStoredText } from './stored-text.js';

import type { TrustHost, TrustNetwork } from './check-host.js';
export type { TrustHost, TrustNetwork };

/** Task ids of checks and re-crawls: a sequence far from the task service's (ids also carry the time). */
const SEQ_BASE = 36 ** 6;
const SWEEP_MS = 1000;
/** Volunteers a check crawl is offered to before it is dropped. */
const CHECK_TRIES = 3;


export class TrustChecks {
  network: TrustNetwork | null = null;
  private readonly inFlight = new Map<string, Check>();
  /** Checks waiting for an independent volunteer with room (in memory: a restart drops them, counted). */
  private waiting: Waiting[] = [];
  /** Volunteers whose check is being set up (claim / release). */
  private readonly claimed = new Set<string>();
  private seq = SEQ_BASE;
  private timer: ReturnType<typeof setInterval> | undefined;
  private sweeping = false;
  /** Re-crawls of distrusted pages, followed until they land. */
  readonly recrawls: Recrawls;
  /** Who may verify: drawn independent of the parties, not one whose last check was lost. */
  private readonly verifiers: VerifierPool;
  /** What check crawls found, per channel: third opinions on coverage (witnesses.ts). */
  readonly witnesses = new CoverageWitnesses();
  /** What crawls extracted from each page body, per channel: free text comparisons (text-refs.ts);
   * kept only while a rule that reads them is on (both are off by default). */
  readonly textRefs: TextReferences;

  constructor(
    private readonly s: TrustHost,
    private readonly rng: Rng,
    readonly timeScale: number,
  ) {
    this.textRefs = new TextReferences(s.spot.introByStoredText || s.spot.textTieBreakByStored);
    this.verifiers = new VerifierPool(s, rng, () => this.network, () => [...this.inFlight.values()].map((ck) => ck.peer));
    this.recrawls = new Recrawls(
      {
        core: s.core,
        excluded: () => s.excluded(),
        pick: (subject, others, exclude) => this.pick(subject, others, exclude),
        send: (ch, peer, register, unregister, forward) => this.send(ch, peer, register, unregister, forward),
        noteRecrawl: (id) => s.noteRecrawl(id),
        countRecrawl: () => s.countRecrawl(),
      },
      () => this.graceMs,
    );
  }

  /** Whether `id` may no longer work (quarantined or banned): checks of its work are moot. */
  private held(id: string): boolean {
    const st = this.s.status(id);
    return st === 'quarantined' || st === 'banned';
  }

  has(id: string): boolean {
    return this.inFlight.has(id);
  }

  get size(): number {
    return this.inFlight.size;
  }

  /** Takes the one check slot of `volunteer`'s work while its check is being set up
   * (synchronously: false when a check of its work is pending or being set up). */
  claim(volunteer: string): boolean {
    if (this.claimed.has(volunteer) || this.pendingFor(volunteer)) return false;
    this.claimed.add(volunteer);
    return true;
  }

  release(volunteer: string): void {
    this.claimed.delete(volunteer);
  }

  /** Whether a check of `volunteer`'s work is in flight or waiting for a verifier. */
  pendingFor(volunteer: string): boolean {
    for (const ck of this.inFlight.values()) if (ck.subject.volunteer === volunteer) return true;
    return this.waiting.some((w) => (w.stage === 'verify' ? w.subject : w.ck.subject).volunteer === volunteer);
  }

  /** Checks waiting for an independent volunteer with room. */
  get waitingCount(): number {
    return this.waiting.length;
  }

  /** Loads the checks that were in flight when the manager stopped. */
  async restore(): Promise<number> {
    for (const ck of await loadStoredChecks(this.s.core)) this.inFlight.set(ck.id, { ...ck, crawl: new CheckCrawl(), resumed: true });
    if (this.inFlight.size > 0) this.s.core.log.info({ checks: this.inFlight.size }, 'checks in flight resumed');
    return this.inFlight.size;
  }

  /** Stores a check in flight, or (null) deletes it. */
  private async persist(id: string, ck: Check | null): Promise<void> {
    const { repos, commit } = this.s.core;
    const op = ck === null ? repos.volunteers.checkDelOp(id) : repos.volunteers.checkOp(id, (({ crawl: _crawl, resumed: _resumed, ...rest }) => rest)(ck));
    await commit.run(() => repos.commit([op]));
  }

  /** Forgets a check in memory and in the store. */
  private async forget(id: string): Promise<void> {
    this.inFlight.delete(id);
    await this.persist(id, null);
  }

  /** Starts the sweep of checks whose crawler never answered. */
  startSweep(): void {
    this.timer ??= setInterval(() => {
      if (this.sweeping) return;
      this.sweeping = true;
      void this.sweep()
        .catch((err: unknown) => this.s.core.log.error({ err: String(err) }, 'check sweep failed'))
        .finally(() => (this.sweeping = false));
    }, SWEEP_MS);
    this.timer.unref();
  }

  stopSweep(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** A check crawl's deadline: as long as an ordinary task's shortest (10 min), at least 30 s in compressed time. */
  private get timeoutMs(): number {
    return Math.max(30_000, (10 * MINUTE) / this.timeScale);
  }

  private get graceMs(): number {
    return Math.max(4000, (5 * MINUTE) / this.timeScale);
  }

  /** `volunteer` finished a task or a check crawl: it may verify again. */
  finished(volunteer: string): void {
    this.verifiers.finished(volunteer);
  }

  /** `volunteer` accepted a task and never uploaded it: not drawn as a verifier until it finishes something. */
  lost(volunteer: string): void {
    this.verifiers.lost(volunteer);
  }

  private pick(subject: string, others: string[], exclude: readonly string[] = []): string | null {
    return this.verifiers.pick(subject, others, exclude);
  }

  /**
   * Sends a check crawl of `ch` to a volunteer independent of `parties` (the
   * subject first). The order may not be forwarded (a full verifier would hand
   * it to the nearest crawler with room, which can be the subject itself): the
   * chosen volunteer runs it or says 'full', and then the next one is tried, up
   * to CHECK_TRIES. A check is most often due right after a round of tasks went
   * out, when a small network's volunteers are momentarily full; the caller
   * keeps it waiting rather than dropping it. The peer holding it, or null.
   */
  private async sendIndependent(ch: Channel, parties: readonly string[], register: (m: Sent) => Promise<void>): Promise<Sent | null> {
    const tried: string[] = [];
    for (let i = 0; i < CHECK_TRIES; i++) {
      const peer = this.pick(parties[0]!, parties.slice(1), tried);
      if (peer === null) return null;
      tried.push(peer);
      const sent = await this.send(ch, peer, register, (id) => this.forget(id), false);
      if (sent === null) continue;
      if (!parties.includes(sent.by)) return sent;
      await this.forget(sent.id); // an older volunteer that forwards regardless
      this.s.core.log.info({ check: sent.id, peer, by: sent.by }, 'check crawl handed on to a party of the check: trying another volunteer');
    }
    return null;
  }

  /** Builds a task for `ch` with no known pages, registers it (`register`, before
   * it leaves: a fast crawl may upload before the reply), and sends it to `peer`.
   * The peer that holds it, or null (then `unregister` ran). */
  private async send(ch: Channel, peer: string, register: (m: Sent) => Promise<void> | void, unregister: (id: string) => Promise<void> | void, forward = true): Promise<Sent | null> {
    if (this.network === null) return null;
    const now = this.s.core.clock();
    const id = taskId(ch.id, now, this.seq++);
    const deadline = Math.round(now + this.timeoutMs);
    const task = buildTask(ch, id, deadline, [], [], []);
    const [hc] = await this.s.core.repos.hosts.coords([ch.host]);
    const issued: IssuedTask = hc !== undefined ? { task, channel: ch, hostCoord: hc as WireCoord } : { task, channel: ch };
    const m: Sent = { id, by: peer, issuedAt: now, deadline };
    await register(m);
    let r: DispatchResult;
    try {
      r = await this.network.dispatchTo(issued, peer, { forward });
    } catch (err) {
      r = { status: 'no-crawler', reason: String(err) };
    }
    if (r.status !== 'accepted') {
      this.s.core.log.info({ task: id, peer, status: r.status, reason: r.reason }, 'check crawl not accepted');
      await unregister(id);
      return null;
    }
    m.by = r.by ?? peer;
    return m;
  }

  /** Sends a check of the subject's crawl of `ch` to an independent volunteer, or
   * keeps it waiting for one with room (up to a check crawl's timeout); an intro
   * (`mayPassByStoredText`) may pass by stored text instead. */
  async start(ch: Channel, subject: CrawlView, reason: string, ratePerMinute: number | null, mayPassByStoredText = false): Promise<void> {
    if (this.held(subject.volunteer)) return;
    // An intro whose every page with text matches stored text of the same bodies needs no crawl (stored-text.ts).
    if (mayPassByStoredText && (await introByStoredText(this.s, this.network, this.textRefs, ch.id, subject))) return;
    this.textRefs.add(ch.id, subject);
    if (await this.tryVerify(ch, subject, reason, ratePerMinute)) return;
    this.waiting.push({ stage: 'verify', ch, subject, reason, ratePerMinute, until: this.s.core.clock() + this.timeoutMs });
    this.s.core.log.info({ task: subject.taskId, volunteer: subject.volunteer }, 'no independent volunteer has room for the check now: it waits');
  }

  private async tryVerify(ch: Channel, subject: CrawlView, reason: string, ratePerMinute: number | null): Promise<boolean> {
    const c = this.s.counters;
    const register = async (m: Sent): Promise<void> => {
      const ck: Check = { id: m.id, stage: 'verify', channel: ch.id, ratePerMinute, subject, peer: m.by, issuedAt: m.issuedAt, deadline: m.deadline, crawl: new CheckCrawl() };
      this.inFlight.set(m.id, ck);
      await this.persist(m.id, ck);
    };
    const sent = await this.sendIndependent(ch, [subject.volunteer], register);
    if (sent === null) return false;
    await this.rehome(sent);
    c.spotChecks++;
    c.byReason[reason] = (c.byReason[reason] ?? 0) + 1;
    await this.s.noteChecked(subject.volunteer, sent.by);
    // verifierOwesIntro: the pairing rule's doing, or the plain draw's (intro.ts); read by bench/integrity-log.ts.
    const owes = owesIntro(this.s.record(sent.by), this.s.rep, this.s.spot);
    this.s.core.log.info({ task: subject.taskId, volunteer: subject.volunteer, check: sent.id, verifier: sent.by, verifierOwesIntro: owes, reason, status: subject.status, pages: subject.pages.length, live: subject.validators.length }, 'spot check issued');
    return true;
  }

  /** The check went to the peer that accepted it (a full receiver forwards): stored again if that changed. */
  private async rehome(sent: Sent): Promise<void> {
    const ck = this.inFlight.get(sent.id);
    if (ck === undefined || ck.peer === sent.by) return;
    ck.peer = sent.by;
    await this.persist(ck.id, ck);
  }

  /** One upload part of a check crawl. */
  async ingest(r: UploadedResult, from: string): Promise<'applied' | 'duplicate'> {
    const ck = this.inFlight.get(r.taskId);
    if (ck === undefined) throw new UploadRefused(`unknown task ${r.taskId}`);
    if (from !== ck.peer) throw new UploadRefused('upload from a peer that does not hold this task');
    if (ck.resumed === true && ck.crawl.empty && r.part !== 0) {
      // Parts before this one came in before the restart and are gone: the crawl cannot be compared.
      await this.forget(ck.id);
      this.s.counters.checksDropped++;
      this.s.core.log.info({ check: ck.id, part: r.part }, 'resumed check dropped: parts were lost in the restart');
      return 'applied';
    }
    if (!ck.crawl.add(r)) return 'duplicate';
    if (!r.final) return 'applied';
    await this.forget(ck.id);
    this.finished(ck.peer);
    const view = ck.crawl.view(ck.peer, ck.id, ck.issuedAt, this.s.core.clock());
    this.witnesses.add(ck.channel, view);
    this.textRefs.add(ck.channel, view);
    if (ck.stage === 'verify') await this.resolveFirst(ck, view);
    else if (await judgeThird(this.s, ck, view)) await this.outvoted(ck.channel, ck.subject);
    await this.s.saveCounters();
    return 'applied';
  }

  private async resolveFirst(ck: Check, view: CrawlView): Promise<void> {
    const now = this.s.core.clock();
    const ab = compareCrawls(ck.subject, view, { ratePerMinute: ck.ratePerMinute }, this.s.cmp);
    const pair = resolvePair(ab, party(ck.subject), party(view), now, this.s.spot);
    for (const o of pair.outcomes) await this.s.apply(o.volunteer, o.outcome);
    this.s.core.log.info({ task: ck.subject.taskId, volunteer: ck.subject.volunteer, verifier: view.volunteer, verdict: ab.verdict, sizes: [ck.subject.status, ck.subject.validators.length, view.status, view.validators.length], reasons: ab.disagreements.map((d) => `${d.reason}: ${d.detail}`), note: ab.note }, 'spot check compared');
    if (ab.verdict === 'agree') this.s.counters.checksAgreed++;
    if (ab.verdict === 'inconclusive') this.s.counters.checksInconclusive++;
    if (!pair.needsTieBreak) return;
    if (await this.moot(ck.subject.volunteer, view.volunteer, ck.subject.taskId)) return;
    if (await settleFromStore(this.s, ck, view, ab, this.witnesses)) {
      await this.outvoted(ck.channel, ck.subject);
      return;
    }
    if (await settleByStoredText(this.s, this.network, this.textRefs, ck, view, ab)) return await this.outvoted(ck.channel, ck.subject);
    if (await this.tryThird(ck, view, ab)) return;
    this.waiting.push({ stage: 'tiebreak', ck, view, ab, until: now + this.timeoutMs });
    this.s.core.log.info({ task: ck.subject.taskId, volunteer: ck.subject.volunteer, verifier: view.volunteer }, 'no third volunteer has room now: the tie-break waits');
  }

  /** The subject's crawl was outvoted: its versions stop being current once re-crawled. */
  private async outvoted(channel: string, a: CrawlView): Promise<void> {
    const n = await this.distrust(channel, a.volunteer, null, a.taskId);
    if (n > 0) await this.s.recrawl(channel, `outvoted task ${a.taskId}`);
  }

  /** A disagreement with a side already quarantined or banned needs no third crawl:
   * the subject's pages are re-crawled anyway, or the verifier's crawl proves
   * nothing (the subject's next check decides). Counted as cancelled. */
  private async moot(subject: string, verifier: string, taskId: string): Promise<boolean> {
    const who = this.held(subject) ? subject : this.held(verifier) ? verifier : null;
    if (who === null) return false;
    this.s.counters.checksCancelled = (this.s.counters.checksCancelled ?? 0) + 1;
    if (who === verifier) await this.s.apply(subject, { kind: 'inconclusive', at: this.s.core.clock(), taskId, reason: 'its verifier was quarantined' });
    this.s.core.log.info({ task: taskId, volunteer: subject, verifier, held: who }, 'disagreement with a quarantined volunteer: no third crawl');
    return true;
  }

  private async tryThird(ck: Check, view: CrawlView, ab: NonNullable<Check['ab']>): Promise<boolean> {
    const ch = await this.s.core.repos.channels.get(ck.channel);
    const register = async (m: Sent): Promise<void> => {
      const third: Check = { ...ck, id: m.id, stage: 'tiebreak', first: view, ab, peer: m.by, issuedAt: m.issuedAt, deadline: m.deadline, crawl: new CheckCrawl() };
      delete third.resumed;
      this.inFlight.set(m.id, third);
      await this.persist(m.id, third);
    };
    const sent = ch === undefined ? null : await this.sendIndependent(ch, [ck.subject.volunteer, view.volunteer], register);
    if (sent === null) return false;
    await this.rehome(sent);
    this.s.counters.tieBreaks++;
    await this.s.noteChecked(ck.subject.volunteer, sent.by);
    this.s.core.log.info({ task: ck.subject.taskId, volunteer: ck.subject.volunteer, verifier: view.volunteer, third: sent.by, check: sent.id }, 'disagreement: third crawl issued');
    return true;
  }

  /** Marks `peer`'s current pages of `channel` unverified (distrust.ts). */
  distrust(channel: string, peer: string, since: number | null, onlyTask?: string): Promise<number> {
    return distrustPages(this.s.core, channel, peer, since, onlyTask);
  }

  /** Checks whose crawler did not upload in time: a lost task for it, and the check is dropped.
   * Waiting checks are offered again; past their time they are dropped (counted). */
  private async sweep(): Promise<void> {
    const now = this.s.core.clock();
    // Each stays listed while it is offered (pendingFor must see it), and leaves once placed or dropped.
    for (const w of [...this.waiting]) {
      const subject = w.stage === 'verify' ? w.subject : w.ck.subject;
      if (this.held(subject.volunteer) || (w.stage === 'tiebreak' && this.held(w.view.volunteer))) {
        // Its subject (or the verifier it disagreed with) was quarantined while it waited.
        this.waiting = this.waiting.filter((x) => x !== w);
        this.s.counters.checksCancelled = (this.s.counters.checksCancelled ?? 0) + 1;
        continue;
      }
      const placed = w.stage === 'verify' ? await this.tryVerify(w.ch, w.subject, w.reason, w.ratePerMinute) : await this.tryThird(w.ck, w.view, w.ab);
      if (!placed && this.s.core.clock() <= w.until) continue;
      this.waiting = this.waiting.filter((x) => x !== w);
      if (placed) continue;
      this.s.counters.checksDropped++;
      this.s.core.log.warn({ task: subject.taskId, volunteer: subject.volunteer, stage: w.stage }, w.stage === 'verify' ? 'no independent volunteer took the check in time: dropped' : 'a disagreement could not be broken in time: no third volunteer');
    }
    for (const ck of [...this.inFlight.values()]) {
      if (now <= ck.deadline + this.graceMs) continue;
      await this.forget(ck.id);
      this.s.counters.checksDropped++;
      // A resumed check's upload may have failed while the manager was down: not held against the verifier.
      if (ck.resumed !== true) {
        this.lost(ck.peer);
        await this.s.apply(ck.peer, { kind: 'lost', at: now, taskId: ck.id, reason: 'accepted a check crawl and never uploaded it' });
      }
    }
    await this.recrawls.sweep(now);
  }
}
