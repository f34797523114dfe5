// The manager's trust service: the live side of the pure rules in this folder
// (docs/trust.md). It holds one reputation per volunteer identity (persisted
// with the manager's database), decides after each finished task whether to
// check it, sends the check to an independent second volunteer, compares the
// two crawls, breaks disagreements with a third, records the outcomes, and
// quarantines: no new tasks (routing excludes the identity, its uploads are
// refused), its current pages marked unverified and re-crawled by others.
//
// Hooks, so that the services it watches change little: the ingest service
// hands it check uploads and finished tasks (IngestHooks), the task service
// tells it of tasks lost after acceptance, and the network side lends it a
// way to send a task to one chosen volunteer (TrustNetwork).
import type { TaskStatus } from '../../crawler/task.js';
import { createRng, type Rng } from '../../rng.js';
import type { UploadedResult } from '../domain/result-schema.js';
import type { TaskRecord } from '../domain/records.js';
import type { Channel } from '../domain/channel.js';
import { ValidationError, NotFoundError } from '../errors.js';
import type { ServiceCore } from '../services/core.js';
import { compareOptions, DEFAULT_COMPARE, type CompareOptions } from './compare.js';
import { reputationOptions, type ReputationOptions } from './reputation-options.js';
import { ban, liftQuarantine, mayWork, newReputation, parseReputation, recordOutcome, reputationStatus, unban, type Outcome, type ReputationRecord, type VolunteerStatus } from './reputation.js';
import { summarise, type ReputationSummary } from './reputation-summary.js';
import { decideSpotCheck, DEFAULT_SPOT_CHECK, spotCheckOptions, verificationOverhead, type SpotCheckOptions } from './spot-check.js';
import { checkRate, drawIntroAt, introLate, introPassesOver, introPhase } from './intro.js';
import { newestTextCrawl } from './late-intro.js';
import { TrustChecks, type TrustNetwork } from './checks.js';
import { lossAgainstOthers, lostTasksOf } from './loss.js';
import { storedCrawlView } from './views.js';

export type { TrustNetwork } from './checks.js';

export interface TrustServiceOptions {
  /** False: nothing is checked and nobody is quarantined (the manager as before). */
  enabled?: boolean;
  reputation?: Partial<ReputationOptions>;
  spotCheck?: Partial<SpotCheckOptions>;
  compare?: Partial<CompareOptions>;
  /** The manager's time scale (time-scale.ts): channel change rates are per compressed minute. */
  timeScale?: number;
  /** Check at least this share of every volunteer's tasks (`--spot-check-min-rate`; default 0: the reputation's rate alone). */
  minRate?: number;
  seed?: number;
}

/** Running totals (persisted; /metrics). */
export interface TrustCounters {
  primary: number;
  spotChecks: number;
  tieBreaks: number;
  recrawls: number;
  quarantines: number;
  checksAgreed: number;
  checksDisagreed: number;
  checksInconclusive: number;
  /** Checks that could not be issued (no independent volunteer) or were lost. */
  checksDropped: number;
  /** Checks not issued because one of the same volunteer's work was in flight. */
  checksDeferred: number;
  /** Checks and third crawls not sent because a side was quarantined meanwhile (moot). */
  checksCancelled: number;
  /** Third crawls that outvoted nobody ("no majority"). */
  noMajority: number;
  /** Third crawls that outvoted a crawl on coverage alone (the others disagreeing on content). */
  coverageOutvotes: number;
  /** Coverage disputes settled by a stored crawl of a third volunteer instead of a third crawl. */
  storedTieBreaks: number;
  /** ... of which settled by an earlier check crawl of the channel (a coverage witness) rather than a stored task. */
  witnessTieBreaks: number;
  /** Intro checks passed by stored text of the same page bodies, with no second crawl (stored-text.ts). */
  storedIntroPasses: number;
  /** Contradictions settled by stored text of the same page bodies, with no third crawl. */
  textTieBreaks: number;
  byReason: Record<string, number>;
}

const zero = (): TrustCounters => ({ primary: 0, spotChecks: 0, tieBreaks: 0, recrawls: 0, quarantines: 0, checksAgreed: 0, checksDisagreed: 0, checksInconclusive: 0, checksDropped: 0, checksDeferred: 0, checksCancelled: 0, noMajority: 0, coverageOutvotes: 0, storedTieBreaks: 0, witnessTieBreaks: 0, storedIntroPasses: 0, textTieBreaks: 0, byReason: {} });

/** A finished task as the ingest service reports it (after its final part is committed). */
export interface FinishedTask {
  t: TaskRecord;
  ch: Channel;
  from: string;
  r: UploadedResult;
  receivedAt: number;
}

export class TrustService {
  readonly counters: TrustCounters;
  readonly rep: ReputationOptions;
  readonly spot: SpotCheckOptions;
  readonly cmp: CompareOptions;
  readonly enabled: boolean;
  readonly minRate: number;
  readonly checks: TrustChecks;
  private readonly records = new Map<string, ReputationRecord>();
  /** Quarantined and banned identities. */
  private readonly held = new Set<string>();
  private readonly rng: Rng;
  /** Re-crawl tasks in flight (their results are stored, but they are not primary tasks). */
  private readonly recrawlIds = new Set<string>();

  private constructor(
    readonly core: ServiceCore,
    o: TrustServiceOptions,
    counters: TrustCounters,
  ) {
    this.enabled = o.enabled ?? true;
    this.minRate = o.minRate ?? 0;
    // Lost tasks are counted (API, CLI) but weigh nothing by default: in the benchmark an
    // honest volunteer on an overloaded machine missed enough deadlines to be quarantined,
    // and a task acknowledged and dropped is a liveness fault its deadline already handles
    // (one acknowledged as "completed" with nothing in it is caught as an empty crawl).
    // A volunteer that loses far more of its tasks than the others is caught by loss.ts's test.
    if (!(this.minRate >= 0 && this.minRate <= 1)) throw new RangeError(`minRate must be in [0, 1], got ${o.minRate}`);
    this.rep = reputationOptions({ lostWeight: 0, ...o.reputation });
    // In compressed time a channel of unknown rate changes that much faster too.
    const scale = o.timeScale ?? 1;
    this.spot = spotCheckOptions({ unknownRatePerMinute: DEFAULT_SPOT_CHECK.unknownRatePerMinute * scale, storedCrawlMaxAgeMs: DEFAULT_SPOT_CHECK.storedCrawlMaxAgeMs / scale, ...o.spotCheck });
    this.cmp = compareOptions({ unknownRatePerMinute: DEFAULT_COMPARE.unknownRatePerMinute * scale, ...o.compare });
    this.counters = counters;
    this.rng = createRng(o.seed ?? Date.now() % 2 ** 32);
    this.checks = new TrustChecks(this, this.rng, o.timeScale ?? 1);
  }

  /** Loads every stored reputation (a damaged record is logged and starts again as new). */
  static async open(core: ServiceCore, o: TrustServiceOptions = {}): Promise<TrustService> {
    const c = (await core.repos.volunteers.counters()) as Partial<TrustCounters> | undefined;
    const s = new TrustService(core, o, { ...zero(), ...(c ?? {}) });
    for (const { id, value } of await core.repos.volunteers.all()) {
      try {
        const r = parseReputation(value);
        s.records.set(id, r);
        if (!mayWork(r)) s.held.add(id);
      } catch (err) {
        core.log.warn({ volunteer: id, err: String(err) }, 'damaged reputation record ignored');
      }
    }
    await s.checks.restore();
    return s;
  }

  set network(n: TrustNetwork | null) {
    this.checks.network = n;
  }

  // ---------------------------------------------------------------- reputations

  record(id: string): ReputationRecord {
    return this.records.get(id) ?? newReputation(id, this.core.clock());
  }

  status(id: string): VolunteerStatus {
    const r = this.records.get(id);
    return r === undefined ? 'new' : reputationStatus(r, this.rep);
  }

  /** Identities that get no task: quarantined and banned (kept up to date by `save`: every routed task asks). */
  excluded(): Set<string> {
    return this.enabled ? new Set(this.held) : new Set();
  }

  /** Why an upload from `peer` is refused (quarantined or banned), or null. */
  refusal(peer: string): string | null {
    const r = this.records.get(peer);
    if (!this.enabled || r === undefined || mayWork(r)) return null;
    return r.ban !== null ? `this identity is banned: ${r.ban.reason}` : `this identity is quarantined: ${r.quarantine?.reason ?? ''}`;
  }

  summaries(): ReputationSummary[] {
    return [...this.records.values()].map((r) => summarise(r, this.rep)).sort((a, b) => a.id.localeCompare(b.id));
  }

  summary(id: string): ReputationSummary {
    const r = this.records.get(id);
    if (r === undefined) throw new NotFoundError(`no volunteer ${id}`);
    return summarise(r, this.rep);
  }

  statusCounts(): Record<VolunteerStatus, number> {
    const out: Record<VolunteerStatus, number> = { new: 0, trusted: 0, suspect: 0, quarantined: 0, banned: 0 };
    for (const r of this.records.values()) out[reputationStatus(r, this.rep)]++;
    return out;
  }

  overhead(): number {
    return verificationOverhead({ primary: this.counters.primary, spotChecks: this.counters.spotChecks, tieBreaks: this.counters.tieBreaks, recrawls: this.counters.recrawls });
  }

  private async save(r: ReputationRecord): Promise<void> {
    this.records.set(r.id, r);
    if (mayWork(r)) this.held.delete(r.id);
    else this.held.add(r.id);
    const { repos } = this.core;
    await this.core.commit.run(() => repos.commit([repos.volunteers.putOp(r.id, r), repos.volunteers.countersOp(this.counters)]));
  }

  /** Persists the counters alone. */
  async saveCounters(): Promise<void> {
    const { repos } = this.core;
    await this.core.commit.run(() => repos.commit([repos.volunteers.countersOp(this.counters)]));
  }

  /** Applies one outcome to a volunteer; quarantines it when the rule says so. */
  async apply(volunteer: string, outcome: Outcome): Promise<void> {
    const res = recordOutcome(this.record(volunteer), outcome, this.rep);
    await this.save(res.record);
    if (res.before !== res.after) this.core.log.info({ volunteer, from: res.before, to: res.after, outcome: outcome.kind, reason: outcome.reason }, 'volunteer status changed');
    if (res.quarantined) await this.quarantined(res.record);
  }

  // ---------------------------------------------------------------- operators

  async lift(id: string, by: string): Promise<ReputationSummary> {
    const r = this.records.get(id);
    if (r === undefined) throw new NotFoundError(`no volunteer ${id}`);
    if (r.quarantine === null) throw new ValidationError(`volunteer ${id} is not quarantined`);
    await this.save(liftQuarantine(r, this.core.clock(), by, this.rep));
    this.core.log.warn({ volunteer: id, by }, 'quarantine lifted by an operator');
    return this.summary(id);
  }

  async ban(id: string, by: string, reason: string): Promise<ReputationSummary> {
    if (reason.length === 0 || reason.length > 500) throw new ValidationError('a ban needs a reason of 1 to 500 characters');
    const first = !this.records.has(id);
    const r = ban(this.record(id), this.core.clock(), by, reason);
    await this.save(r);
    this.core.log.warn({ volunteer: id, by, reason, first }, 'volunteer banned by an operator');
    await this.quarantined(r);
    return this.summary(id);
  }

  async unban(id: string, by: string): Promise<ReputationSummary> {
    const r = this.records.get(id);
    if (r === undefined) throw new NotFoundError(`no volunteer ${id}`);
    if (r.ban === null) throw new ValidationError(`volunteer ${id} is not banned`);
    await this.save(unban(r, this.core.clock(), by, this.rep));
    this.core.log.warn({ volunteer: id, by }, 'ban lifted by an operator');
    return this.summary(id);
  }

  // ---------------------------------------------------------------- hooks

  /** IngestHooks: true when `taskId` is a check crawl (its upload goes to `ingestCheck`). */
  isCheck(taskId: string): boolean {
    return this.checks.has(taskId);
  }

  ingestCheck(r: UploadedResult, from: string): Promise<'applied' | 'duplicate'> {
    return this.checks.ingest(r, from);
  }

  /** IngestHooks: a task's final part was committed. Decides whether it is checked. */
  async taskFinished(f: FinishedTask): Promise<void> {
    if (!this.enabled) return;
    const { t, ch, from, r } = f;
    this.checks.finished(from);
    if (this.recrawlIds.delete(t.id)) {
      // Its pages are current now: listed among the re-crawler's work, so that they are
      // distrusted too if it is caught later (seed 2 of session 6: an undetected forger
      // re-crawled a channel, and its 8 forged pages outlived its quarantine).
      if (t.pagesStored > 0) await this.core.commit.run(() => this.core.repos.commit([this.core.repos.volunteers.workOp(from, ch.id, { taskId: t.id, at: f.receivedAt })]));
      await this.checks.recrawls.landed(t.id);
      return;
    }
    const first = !this.records.has(from);
    const rec = { ...this.record(from) };
    rec.tasks = (rec.tasks ?? 0) + 1;
    if (rec.introAt === undefined) {
      const at = drawIntroAt(this.rng, this.spot);
      if (at !== undefined) rec.introAt = at;
    }
    const { repos } = this.core;
    this.counters.primary++;
    const success = r.status === 'completed' || r.status === 'page-cap' || r.status === 'deadline';
    // Tasks with text are what the intro check counts (spot-check.ts's introPhase).
    if (success && t.pagesStored > 0) rec.textTasks = (rec.textTasks ?? 0) + 1;
    const ops = [repos.volunteers.countersOp(this.counters), repos.volunteers.putOp(from, rec)];
    if (success && t.pagesStored > 0) ops.push(repos.volunteers.workOp(from, ch.id, { taskId: t.id, at: f.receivedAt }));
    // What it extracted from each page body it uploaded: a free comparison for others' crawls later (text-refs.ts).
    if (success) this.checks.textRefs.add(ch.id, { volunteer: from, taskId: t.id, receivedAt: f.receivedAt, pages: r.pages });
    this.records.set(from, rec);
    await this.core.commit.run(() => repos.commit(ops));
    if (first) this.core.log.info({ volunteer: from }, 'new volunteer identity');
    const scale = this.checks.timeScale;
    const ratePerMinute = ch.changeRate === null ? null : ch.changeRate * scale;
    const decision = decideSpotCheck(
      {
        taskId: t.id,
        volunteer: from,
        status: r.status as TaskStatus,
        issuedAt: t.issuedAt,
        receivedAt: f.receivedAt,
        livePages: t.livePages,
        knownPages: Math.max(0, ch.expectedPages === 0 ? 0 : t.revisited + (t.livePages === 0 ? ch.expectedPages : 0)),
        revisited: t.revisited,
        changedOfRevisited: t.changed,
        sinceLastCrawlMinutes: null,
        ratePerMinute,
      },
      mayWork(rec) ? Math.max(this.minRate, checkRate(rec, this.rep, this.spot)) : 0,
      this.rng,
      this.spot,
    );
    if (!decision.check || !success) return;
    // A crawl that stopped (deadline, page cap) before it saw a live page leaves
    // nothing to compare: its check could only end inconclusive (in the benchmark
    // under load, a forger's three intro checks did, and it went unchecked for 38 tasks).
    if (t.livePages === 0 && decision.reason !== 'anomaly-empty') return;
    const reason = decision.reason === 'sampled' && introPhase(rec, this.spot) === 'due' ? 'intro' : decision.reason;
    // One check of a volunteer's work at a time: while one is in flight its verdict is
    // still to come, and a volunteer on probation or caught in an anomaly (every task
    // checked) would otherwise get a check for each task it finishes meanwhile — most
    // of the benchmark's overhead, for evidence the pending check is about to give.
    // Claimed before the first await: two tasks finishing together both got a check
    // before (session 8: two intro checks of one forger, two anomaly checks of the
    // `empty` volunteer issued in the same second).
    if (!this.checks.claim(from)) {
      this.counters.checksDeferred++;
      return;
    }
    try {
      const subject = await storedCrawlView(repos, ch.id, { id: t.id, issuedAt: t.issuedAt, holder: from, status: r.status as TaskStatus, receivedAt: f.receivedAt, interSiteUrls: r.interSiteUrls });
      // Judged on what the check would compare: the pages with text the store holds of this task.
      if (reason === 'intro' && introPassesOver(rec, subject.pages.length, this.spot)) {
        const late = introLate(rec, this.spot) ? await newestTextCrawl(repos, from) : null;
        if (late !== null) return await this.checks.start(late.ch, late.subject, 'intro-late', late.ch.changeRate === null ? null : late.ch.changeRate * scale, this.mayPassFree());
        if (!(this.rng.next() < this.minRate)) return;
        return await this.checks.start(ch, subject, reason, ratePerMinute); // the operator's minimum rate drew it
      }
      await this.checks.start(ch, subject, reason, ratePerMinute, reason === 'intro' && this.mayPassFree());
    } finally {
      this.checks.release(from);
    }
  }

  /** Whether a due intro may pass by stored text (stored-text.ts): only with the rule on, and
   * not when the operator's minimum rate (`minRate`) draws the task for a real crawl anyway
   * (no draw with the rule off: the random stream stays as before it existed). */
  private mayPassFree(): boolean {
    if (!this.spot.introByStoredText) return false;
    return this.minRate === 0 || !(this.rng.next() < this.minRate);
  }

  /** TaskService hook: a task a volunteer accepted was lost (deadline passed without its upload). */
  async taskLost(t: TaskRecord): Promise<void> {
    if (!this.enabled || t.holder === undefined || t.holder === 'unknown') return;
    this.checks.lost(t.holder);
    // A task it held counts among its tasks (detection is measured in them).
    const rec = this.record(t.holder);
    this.records.set(t.holder, { ...rec, tasks: (rec.tasks ?? 0) + 1, lostTasks: lostTasksOf(rec) + 1 });
    await this.apply(t.holder, { kind: 'lost', at: this.core.clock(), taskId: t.id, reason: 'accepted a task and never uploaded it' });
    // One lost task weighs nothing (churn, a slow machine); losing them while the others do not is a fault.
    const held = this.record(t.holder);
    const test = lossAgainstOthers(held, this.records.values());
    if (test.standsOut && mayWork(held)) await this.apply(t.holder, { kind: 'disagree', at: this.core.clock(), weight: 2, taskId: t.id, reason: test.reason });
  }

  // ---------------------------------------------------------------- quarantine

  /** A volunteer was quarantined or banned: every page it supplied that is still
   * current is marked unverified and its channels are re-crawled by others. */
  private async quarantined(held: ReputationRecord): Promise<void> {
    this.counters.quarantines++;
    const r = { ...held, tasksAtHold: held.tasks ?? 0 };
    await this.save(r);
    const works = await this.core.repos.volunteers.works(r.id);
    let unverified = 0;
    for (const { channel, work } of works) {
      const n = await this.checks.distrust(channel, r.id, r.lastVerified?.at ?? null);
      unverified += n;
      if (n > 0) await this.recrawl(channel, `pages of ${r.id} (last task ${work.taskId})`);
    }
    await this.saveCounters();
    this.core.log.warn({ volunteer: r.id, reason: r.ban?.reason ?? r.quarantine?.reason, channels: works.length, unverifiedPages: unverified, lastVerified: r.lastVerified }, r.ban !== null ? 'volunteer banned' : 'volunteer quarantined');
  }

  /** Re-crawls a channel by an independent volunteer until the new pages have replaced the unverified ones (recrawls.ts). */
  async recrawl(channel: string, why: string): Promise<void> {
    await this.checks.recrawls.request(channel, why);
  }

  /** A re-crawl was accepted. */
  countRecrawl(): void {
    this.counters.recrawls++;
  }

  /** One more extra crawl spent on checking `volunteer`'s work. */
  async noteChecked(volunteer: string, crawler: string): Promise<void> {
    await this.save({ ...this.record(volunteer), checked: (this.record(volunteer).checked ?? 0) + 1 });
    // The crawler holds one more crawl: the loss test counts lost check crawls among held ones (loss.ts).
    await this.save({ ...this.record(crawler), checkCrawls: (this.record(crawler).checkCrawls ?? 0) + 1 });
  }

  /** A re-crawl task is about to leave: its upload is not a primary task. */
  noteRecrawl(id: string): void {
    this.recrawlIds.add(id);
  }
}
