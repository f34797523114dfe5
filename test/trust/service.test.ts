// The trust service wired into a real manager (LevelDB in a temp dir, the real
// ingest and task services): uploads go through IngestService exactly as the
// upload protocol delivers them; only the network is replaced by a recorder
// of the check tasks the manager sends (the real-process run is in
// integrity.test.ts).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Task } from '../../src/crawler/task.js';
import { UploadRefused } from '../../src/manager/errors.js';
import type { Manager } from '../../src/manager/manager.js';
import type { IssuedTask } from '../../src/manager/services/tasks.js';
import { Clock, openManager, resultFor, tempDir, upload, type FakePage } from '../manager/helpers.js';

const F = '12D3KooWForgerForgerForgerForgerForgerForgerForger';
const V1 = '12D3KooWVerifierOneVerifierOneVerifierOneVerifier1';
const V2 = '12D3KooWVerifierTwoVerifierTwoVerifierTwoVerifier2';
const V3 = '12D3KooWVerifierThreeVerifierThreeVerifierThree333';

const pages = (v: number): FakePage[] => Array.from({ length: 6 }, (_, i) => ({ path: `/p${i}`, body: `page ${i} version ${v} with enough words to read like a real page` }));

let dir: ReturnType<typeof tempDir>;
let clock: Clock;
let m: Manager;
let sent: { t: IssuedTask; peer: string }[];

async function open(extra: Parameters<typeof openManager>[2] = {}): Promise<Manager> {
  const mgr = await openManager(dir.dir, clock, { trust: { seed: 7, minRate: 1 }, ...extra });
  sent = [];
  mgr.trust.network = {
    candidates: () => [F, V1, V2, V3].map((id, i) => ({ id, address: `10.0.${i}.1`, coord: [i * 30, 0] })),
    dispatchTo: async (t, peer) => {
      sent.push({ t, peer });
      return { status: 'accepted', by: peer };
    },
  };
  return mgr;
}

/** A fresh manager (a new store) opened with `extra` and the site's channel. */
async function fresh(extra: Parameters<typeof openManager>[2]): Promise<void> {
  await m.close();
  dir.cleanup();
  dir = tempDir();
  m = await open(extra);
  await m.channels.add({ url: 'http://site.test/', depth: 2, group: 0 });
}

/** The manager's network from now on: only `ids` can verify (they accept every check). */
function verifiers(ids: string[]): void {
  m.trust.network = {
    candidates: () => ids.map((id, i) => ({ id, address: `10.1.${i}.1`, coord: [i * 30, 0] })),
    dispatchTo: async (t, peer) => {
      sent.push({ t, peer });
      return { status: 'accepted', by: peer };
    },
  };
}

async function until(what: string, cond: () => boolean | Promise<boolean>, tries = 500): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The task of `peer`'s crawl, as the forger would upload it: true digests, rewritten text. */
function forged(task: Task, ps: FakePage[]) {
  const r = resultFor(task, ps, { at: clock.now() });
  return { ...r, pages: r.pages.map((p) => ({ ...p, text: `SPAM buy now ${p.url}` })) };
}

async function crawl(peer: string, ps: FakePage[], forge = false): Promise<Task> {
  const [t] = await m.tasks.issueDue();
  expect(t, 'a task is due').toBeDefined();
  clock.advance(1000);
  await m.ingest.ingest(upload(t!.task, forge ? forged(t!.task, ps) : resultFor(t!.task, ps, { at: clock.now() })), peer);
  return t!.task;
}

/** Follows the trust hook the ingest service runs in the background after each task:
 * the returned function resolves once every hook started so far has finished. */
function awaitHooks(): () => Promise<void> {
  const trust = m.trust;
  const pending: Promise<void>[] = [];
  m.ingest.hooks = {
    refusal: (peer) => trust.refusal(peer),
    isCheck: (id) => trust.isCheck(id),
    ingestCheck: (r, from) => trust.ingestCheck(r, from),
    taskFinished: (f) => {
      const p = trust.taskFinished(f);
      pending.push(p);
      return p;
    },
  };
  return async () => {
    await until('the trust hook', () => pending.length > 0);
    await Promise.all(pending.splice(0));
  };
}

/** Answers the n-th check task the manager sent, as its volunteer crawls it. */
async function answer(n: number, ps: FakePage[], forge = false): Promise<void> {
  await until(`check task ${n}`, () => sent.length > n);
  const { t, peer } = sent[n]!;
  expect(t.task.known).toEqual([]);
  clock.advance(500);
  await m.ingest.ingest(upload(t.task, forge ? forged(t.task, ps) : resultFor(t.task, ps, { at: clock.now() })), peer);
}

beforeEach(async () => {
  dir = tempDir();
  clock = new Clock();
  m = await open();
  await m.channels.add({ url: 'http://site.test/', depth: 2, group: 0 });
});

afterEach(async () => {
  await m.close();
  dir.cleanup();
});

describe('trust service in a real manager', () => {
  it('a forger is outvoted by two independent crawls, quarantined, refused, and its pages replaced; the verdict survives a restart', async () => {
    await crawl(F, pages(1), true);
    await answer(0, pages(1)); // the second crawl disagrees (same digests, other text)
    await answer(1, pages(1)); // the third crawl agrees with the second: the forger is outvoted
    expect(new Set([sent[0]!.peer, sent[1]!.peer]).has(F)).toBe(false);
    expect(sent[0]!.peer).not.toBe(sent[1]!.peer);
    await until('the quarantine', () => m.trust.status(F) === 'quarantined');
    expect(m.trust.excluded().has(F)).toBe(true);
    expect(m.trust.summary(F).quarantine?.reason).toMatch(/outvoted by two crawls \(contradiction/);

    // Its current pages are unverified; the re-crawl by another volunteer replaces them.
    await answer(2, pages(1));
    expect(sent[2]!.peer).not.toBe(F);
    const ch = (await m.channels.list())[0]!;
    const current = await m.pages.latest(ch.id);
    expect(current).toHaveLength(6);
    expect(current.every((p) => !p.text.includes('SPAM') && p.crawler !== F)).toBe(true);

    // No new work and no uploads from it.
    clock.advance(3_600_000);
    const [t] = await m.tasks.issueDue();
    await expect(m.ingest.ingest(upload(t!.task, resultFor(t!.task, pages(1))), F)).rejects.toThrow(UploadRefused);

    // Reputation is persisted with the manager's database.
    const before = m.trust.summary(F);
    await m.close();
    m = await open();
    expect(m.trust.summary(F)).toEqual(before);
    expect(m.trust.status(V1)).not.toBe('quarantined');
  });

  it('checks in flight survive a manager restart: the uploads of the verifier and of the third crawl still decide', async () => {
    await crawl(F, pages(1), true);
    await until('the check leaves', () => sent.length > 0);
    const first = sent[0]!;
    // The manager stops with the check in flight, and comes back.
    await m.close();
    m = await open();
    expect(m.trust.checks.size).toBe(1);
    expect(m.trust.isCheck(first.t.task.id)).toBe(true);
    // The verifier uploads to the new manager: the comparison disagrees and a third crawl leaves…
    clock.advance(500);
    await m.ingest.ingest(upload(first.t.task, resultFor(first.t.task, pages(1), { at: clock.now() })), first.peer);
    await until('the third crawl', () => sent.length > 0);
    const third = sent[0]!;
    // …which also survives a restart, with the first verifier's crawl it compares against.
    await m.close();
    m = await open();
    expect(m.trust.isCheck(third.t.task.id)).toBe(true);
    clock.advance(500);
    await m.ingest.ingest(upload(third.t.task, resultFor(third.t.task, pages(1), { at: clock.now() })), third.peer);
    await until('the quarantine', () => m.trust.status(F) === 'quarantined');
    expect(m.trust.checks.size).toBe(0);
    expect(m.trust.counters.checksDropped).toBe(0);
    // Decided checks are gone from the store: a further restart resumes nothing.
    await m.close();
    m = await open();
    expect(m.trust.checks.size).toBe(0);
  });

  it('a check goes unforwarded to an independent verifier, tries the next when one is full, waits while all are, and is dropped only past its time', async () => {
    // The first verifier asked is full; the second is an older volunteer that forwards
    // anyway, to the subject (the nearest crawler with room); the third takes it.
    const offered: { peer: string; forward: boolean | undefined }[] = [];
    let full = false;
    m.trust.network = {
      candidates: () => [F, V1, V2, V3].map((id, i) => ({ id, address: `10.0.${i}.1`, coord: [i * 30, 0] })),
      dispatchTo: async (t, peer, opts) => {
        offered.push({ peer, forward: opts?.forward });
        if (full || offered.length === 1) return { status: 'full' as const, reason: 'no room' };
        if (offered.length === 2) return { status: 'accepted' as const, by: F };
        sent.push({ t, peer });
        return { status: 'accepted' as const, by: peer };
      },
    };
    await crawl(F, pages(1), true);
    await until('the check is taken', () => sent.length > 0);
    expect(offered).toHaveLength(3);
    expect(new Set(offered.map((o) => o.peer)).size).toBe(3);
    expect(offered.map((o) => o.peer)).not.toContain(F);
    expect(offered.every((o) => o.forward === false)).toBe(true); // a verifier may not hand a check on
    expect(m.trust.counters.spotChecks).toBe(1);
    expect(m.trust.checks.size).toBe(1);

    // Every volunteer is full when the disagreement needs its third crawl: the tie-break
    // waits (the subject's next check too), and leaves once one has room.
    full = true;
    m.trust.checks.startSweep();
    try {
      await answer(0, pages(1));
      await until('the tie-break to wait', () => m.trust.checks.waitingCount === 1);
      expect(m.trust.checks.pendingFor(F)).toBe(true);
      expect(m.trust.counters.checksDropped).toBe(0);
      const tries = offered.length;
      await until('a retry at the sweep', () => offered.length > tries);
      full = false;
      await until('the third crawl', () => sent.length > 1);
      expect([F, sent[0]!.peer]).not.toContain(sent[1]!.peer);
      // The sweep takes it off the waiting list once the crawl is sent and recorded (a store write later).
      await until('the tie-break leaves the waiting list', () => m.trust.checks.waitingCount === 0);
      expect(m.trust.counters.tieBreaks).toBe(1);
      await answer(1, pages(1));
      await until('the quarantine', () => m.trust.status(F) === 'quarantined');

      // A check that waits past a check crawl's time is dropped, and counted.
      full = true;
      await m.channels.add({ url: 'http://other.test/', depth: 2, group: 0 });
      clock.advance(3_600_000);
      const due = await m.tasks.issueDue();
      const honest = due.find((t) => t.channel.host === 'other.test')!;
      await m.ingest.ingest(upload(honest.task, resultFor(honest.task, pages(1), { at: clock.now() })), V1);
      await until('the check to wait', () => m.trust.checks.waitingCount === 1);
      clock.advance(3_600_000);
      await until('the drop', () => m.trust.counters.checksDropped === 1);
      expect(m.trust.checks.waitingCount).toBe(0);
    } finally {
      m.trust.checks.stopSweep();
    }
  });

  it('re-crawls of a quarantined volunteer\'s pages go unforwarded, wait while every volunteer is full, and follow up until no forged page is current', async () => {
    const offered: { peer: string; forward: boolean | undefined; id: string }[] = [];
    let full = false;
    // A crawl fast enough to upload before its volunteer's reply reaches the manager.
    let fast = false;
    m.trust.network = {
      candidates: () => [F, V1, V2, V3].map((id, i) => ({ id, address: `10.0.${i}.1`, coord: [i * 30, 0] })),
      dispatchTo: async (t, peer, opts) => {
        offered.push({ peer, forward: opts?.forward, id: t.task.id });
        if (full) return { status: 'full' as const, reason: 'no room' };
        sent.push({ t, peer });
        if (fast) {
          clock.advance(500);
          await m.ingest.ingest(upload(t.task, resultFor(t.task, pages(1), { at: clock.now() })), peer);
        }
        return { status: 'accepted' as const, by: peer };
      },
    };
    await crawl(F, pages(1), true);
    await answer(0, pages(1));
    // Every volunteer is full when the quarantine asks for the re-crawl.
    await until('the third crawl', () => sent.length > 1);
    full = true;
    await answer(1, pages(1));
    await until('the quarantine', () => m.trust.status(F) === 'quarantined');
    const ch = (await m.channels.list())[0]!;
    const forgedNow = async () => (await m.pages.latest(ch.id)).filter((p) => p.text.includes('SPAM')).length;
    expect(await forgedNow()).toBe(6);
    expect(m.trust.checks.recrawls.size).toBe(1);
    expect(m.trust.counters.recrawls).toBe(0);
    m.trust.checks.startSweep();
    try {
      const tries = offered.length;
      await until('an offer at the sweep', () => offered.length > tries, 3000);
      full = false;
      await until('the re-crawl', () => sent.length > 2, 3000);
      const first = sent[2]!;
      expect(first.peer).not.toBe(F);
      expect(offered.filter((o) => o.id === first.t.task.id).every((o) => o.forward === false)).toBe(true); // never handed on (to a forger)
      expect(first.t.task.known).toEqual([]);
      // Its crawl is cut by the deadline after 3 of the 6 pages: 3 forged pages stay current…
      clock.advance(500);
      await m.ingest.ingest(upload(first.t.task, resultFor(first.t.task, pages(1).slice(0, 3), { at: clock.now(), status: 'deadline' })), first.peer);
      fast = true;
      await until('the first re-crawl stored', async () => (await forgedNow()) === 3);
      // …so another re-crawl follows, and its crawl (uploaded before the reply) replaces the rest.
      await until('a second re-crawl', () => sent.length > 3, 3000);
      expect(sent[3]!.peer).not.toBe(F);
      await until('every forged page replaced', async () => (await forgedNow()) === 0 && m.trust.checks.recrawls.size === 0, 3000);
      expect(sent).toHaveLength(4);
      expect(m.trust.counters.recrawls).toBe(2);
      expect(m.trust.overhead()).toBe(2); // (1 check + 1 third crawl) ÷ 1 task: re-crawls are counted apart
    } finally {
      m.trust.checks.stopSweep();
    }
  });

  it('pages a re-crawler supplied are distrusted and re-crawled again when it is caught later', async () => {
    await crawl(F, pages(1), true);
    await answer(0, pages(1));
    await answer(1, pages(1));
    await until('the quarantine', () => m.trust.status(F) === 'quarantined');
    // The re-crawl goes to a volunteer nobody has caught yet, which forges too.
    await answer(2, pages(1), true);
    const ch = (await m.channels.list())[0]!;
    const forgedBy = async () => (await m.pages.latest(ch.id)).filter((p) => p.text.includes('SPAM')).map((p) => p.crawler);
    await until('the re-crawler\'s pages stored', async () => (await forgedBy()).length === 6);
    const recrawler = sent[2]!.peer;
    expect(new Set(await forgedBy())).toEqual(new Set([recrawler]));
    await m.trust.ban(recrawler, 'alice', 'forged elsewhere');
    await until('another re-crawl', () => sent.length > 3);
    expect([F, recrawler]).not.toContain(sent[3]!.peer);
    await answer(3, pages(1));
    await until('every forged page replaced', async () => (await forgedBy()).length === 0);
  });

  it('a check whose subject is quarantined while it waits is cancelled, not sent', async () => {
    m.trust.network = {
      candidates: () => [F, V1, V2, V3].map((id, i) => ({ id, address: `10.0.${i}.1`, coord: [i * 30, 0] })),
      dispatchTo: async () => ({ status: 'full' as const, reason: 'no room' }),
    };
    await crawl(F, pages(1), true);
    await until('the check to wait', () => m.trust.checks.waitingCount === 1);
    await m.trust.ban(F, 'alice', 'caught elsewhere');
    m.trust.checks.startSweep();
    try {
      await until('the cancellation', () => m.trust.checks.waitingCount === 0, 3000);
    } finally {
      m.trust.checks.stopSweep();
    }
    expect(m.trust.counters.checksCancelled).toBe(1);
    expect(m.trust.counters.checksDropped).toBe(0);
    expect(m.trust.counters.spotChecks).toBe(0);
  });

  it('a volunteer that acknowledges tasks and drops them is quarantined once it loses far more than the others; one lost task is nothing', async () => {
    const D = '12D3KooWDropperDropperDropperDropperDropperDropper1';
    verifiers([]); // no check crawls: the others' held crawls are their tasks alone
    // The others finish their tasks (and lose one between them).
    for (const [i, v] of [V1, V2, V3, V1, V2, V3, V1, V2].entries()) {
      clock.advance(7 * 86_400_000);
      await crawl(v, pages(i));
    }
    const lost = (id: string, n: number) => m.trust.taskLost({ id: `tl${n}`, channel: 'c0', host: 'site.test', issuedAt: clock.now(), deadline: clock.now(), round: 0, state: 'failed', holder: id, parts: 0, pagesStored: 0, livePages: 0, revisited: 0, changed: 0, newPages: 0 });
    await lost(V3, 0);
    expect(m.trust.status(V3)).not.toBe('quarantined');
    // The others lost 1 of 9 (rate 2/11 smoothed): four lost in a row are p = 0.0011, five p = 0.0002.
    for (let n = 1; n <= 4; n++) await lost(D, n);
    expect(m.trust.status(D)).toBe('new');
    await lost(D, 5);
    expect(m.trust.status(D)).toBe('quarantined');
    expect(m.trust.summary(D).quarantine?.reason).toMatch(/lost 5 of 5 tasks while the others lose 18\.2 %/);
    expect(m.trust.summary(D).tasksAtHold).toBe(5);
    expect(m.trust.status(V3)).not.toBe('quarantined');
  });

  it('the loss test counts lost crawls against crawls held, check crawls on both sides (no "lost 5 of 1")', async () => {
    const D = '12D3KooWDropperDropperDropperDropperDropperDropper2';
    for (const [i, v] of [V1, V2, V3, V1, V2, V3, V1, V2].entries()) {
      clock.advance(7 * 86_400_000);
      await crawl(v, pages(i));
    }
    // D accepted 6 check crawls (as checks.ts notes each one sent) and never uploaded 4 of them.
    for (let n = 0; n < 6; n++) await m.trust.noteChecked(V1, D);
    for (let n = 0; n < 4; n++) await m.trust.apply(D, { kind: 'lost', at: clock.now(), taskId: `ck${n}`, reason: 'accepted a check crawl and never uploaded it' });
    const lost = (n: number) => m.trust.taskLost({ id: `tl${n}`, channel: 'c0', host: 'site.test', issuedAt: clock.now(), deadline: clock.now(), round: 0, state: 'failed', holder: D, parts: 0, pagesStored: 0, livePages: 0, revisited: 0, changed: 0, newPages: 0 });
    let t = 0;
    while (m.trust.status(D) !== 'quarantined' && t < 10) await lost(++t);
    expect(m.trust.status(D)).toBe('quarantined');
    expect(m.trust.summary(D).totals.lost).toBe(4 + t);
    // Counted with every lost crawl against primary tasks alone (before session 13): "lost 5 of 1".
    expect(m.trust.summary(D).quarantine?.reason).toContain(`last: lost ${4 + t} of ${6 + t} tasks and check crawls while the others lose`);
  });

  it('a record that does not count its check crawls is tested on primary tasks alone: "lost 4 of 4", never "lost 8 of 4"', async () => {
    const D = '12D3KooWDropperDropperDropperDropperDropperDropper3';
    for (const [i, v] of [V1, V2, V3, V1, V2, V3, V1, V2].entries()) {
      clock.advance(7 * 86_400_000);
      await crawl(v, pages(i));
    }
    for (let n = 0; n < 4; n++) await m.trust.apply(D, { kind: 'lost', at: clock.now(), taskId: `ck${n}`, reason: 'accepted a check crawl and never uploaded it' });
    const lost = (n: number) => m.trust.taskLost({ id: `tl${n}`, channel: 'c0', host: 'site.test', issuedAt: clock.now(), deadline: clock.now(), round: 0, state: 'failed', holder: D, parts: 0, pagesStored: 0, livePages: 0, revisited: 0, changed: 0, newPages: 0 });
    let t = 0;
    while (m.trust.status(D) !== 'quarantined' && t < 10) await lost(++t);
    expect(m.trust.summary(D).quarantine?.reason).toContain(`last: lost ${t} of ${t} tasks while the others lose`);
    expect(t, 'the first lost task alone (old "lost 5 of 1") does not quarantine').toBeGreaterThan(1);
  });

  it.each([
    ['is settled by the stored crawl of a third volunteer in good standing: no third crawl', true],
    ['needs a third crawl when stored crawls are not used (storedCrawlMaxAgeMs 0)', false],
  ])('a crawl "completed" with no page, against a verifier that found the pages, %s', async (_, useStored) => {
    const E = '12D3KooWEmptyEmptyEmptyEmptyEmptyEmptyEmptyEmpty1';
    if (!useStored) {
      await m.close();
      m = await open({ trust: { seed: 7, minRate: 1, spotCheck: { storedCrawlMaxAgeMs: 0 } } });
    }
    // V2 crawls the channel (its own check agrees); then only V1 and V3 verify.
    await crawl(V2, pages(1));
    await answer(0, pages(1));
    await until('V2\'s check', () => m.trust.checks.size === 0);
    const v2Before = m.trust.record(V2).totals;
    verifiers([V1, V3]);
    clock.advance(2 * 3_600_000);
    await crawl(E, []);
    await answer(1, pages(1));
    if (useStored) {
      await until('the verdict', () => m.trust.record(E).totals.disagree > 0);
      expect(sent).toHaveLength(2);
      expect(m.trust.counters.tieBreaks).toBe(0);
      expect(m.trust.counters.storedTieBreaks).toBe(1);
      expect(m.trust.counters.checksDisagreed).toBe(1);
      // The verifier is not accused; the stored crawl's volunteer is neither credited nor accused.
      expect(m.trust.record(sent[1]!.peer).totals.disagree).toBe(0);
      expect(m.trust.record(V2).totals).toEqual(v2Before);
    } else {
      await until('the third crawl', () => sent.length === 3);
      expect(m.trust.counters.tieBreaks).toBe(1);
      expect(m.trust.counters.storedTieBreaks).toBe(0);
      expect(m.trust.record(E).totals.disagree).toBe(0);
    }
  });

  it('a coverage dispute with no stored crawl is settled by what an earlier check crawl of a third volunteer found (a coverage witness)', async () => {
    const E = '12D3KooWEmptyEmptyEmptyEmptyEmptyEmptyEmptyEmpty1';
    await m.close();
    m = await open({ trust: { seed: 7, minRate: 1, spotCheck: { storedCrawlMaxAgeMs: 86_400_000 } } });
    // V2's crawl gives the channel its pages; two days later it is too old to vouch for them.
    await crawl(V2, pages(1));
    await answer(0, pages(1));
    await until('V2\'s check', () => m.trust.checks.size === 0);
    verifiers([V1, V3]);
    clock.advance(2 * 86_400_000);
    await crawl(E, []);
    await answer(1, pages(1));
    // No stored crawl recent enough and no witness yet: a third crawl decides.
    await answer(2, pages(1));
    await until('the first outvote', () => m.trust.record(E).totals.disagree === 1 && m.trust.checks.size === 0);
    expect(m.trust.counters.tieBreaks).toBe(1);
    expect(m.trust.checks.witnesses.channels).toBe(1);
    // The next empty crawl: its verifier's crawl and the other volunteer's check crawl of an hour ago outvote it.
    clock.advance(3_600_000);
    await crawl(E, []);
    await answer(3, pages(1));
    await until('the second outvote', () => m.trust.record(E).totals.disagree === 2);
    expect(sent).toHaveLength(4);
    expect(m.trust.counters.tieBreaks).toBe(1);
    expect(m.trust.counters.storedTieBreaks).toBe(1);
    expect(m.trust.counters.witnessTieBreaks).toBe(1);
    for (const v of [V1, V3]) expect(m.trust.record(v).totals.disagree, v).toBe(0);
  });

  it('two tasks of one volunteer finishing together get one check between them', async () => {
    await m.channels.add({ url: 'http://other.test/', depth: 2, group: 0 });
    const ts = await m.tasks.issueDue();
    expect(ts).toHaveLength(2);
    clock.advance(1000);
    await Promise.all(ts.map((t) => m.ingest.ingest(upload(t.task, resultFor(t.task, pages(1), { at: clock.now() })), V1)));
    await until('the check', () => sent.length === 1);
    expect(m.trust.counters.spotChecks).toBe(1);
    expect(m.trust.counters.checksDeferred).toBe(1);
  });

  it('a verifier whose last check crawl was lost is not drawn again until it finishes something', async () => {
    verifiers([V1, V2]);
    m.trust.checks.startSweep();
    try {
      await crawl(F, pages(1));
      await until('the check leaves', () => sent.length === 1);
      const loser = sent[0]!.peer;
      const other = loser === V1 ? V2 : V1;
      clock.advance(3_600_000); // past the check crawl's deadline and grace
      await until('the check is lost', () => m.trust.counters.checksDropped === 1, 1000);
      for (let i = 1; i <= 4; i++) {
        clock.advance(7 * 86_400_000);
        await crawl(F, pages(1));
        await answer(i, pages(1));
        expect(sent[i]!.peer, `check ${i}`).toBe(other);
        await until(`check ${i} decided`, () => m.trust.checks.size === 0);
      }
      // With the other verifier gone, the loser is still not drawn: the check waits…
      verifiers([loser]);
      clock.advance(7 * 86_400_000);
      await crawl(F, pages(1));
      await until('the check to wait', () => m.trust.checks.waitingCount === 1);
      expect(sent).toHaveLength(5);
      // …until the loser finishes a task of its own (whose check waits: nobody else verifies).
      clock.advance(7 * 86_400_000);
      await crawl(loser, pages(1));
      await until('the waiting check goes to the loser', () => sent.length === 6, 1000);
      expect(sent[5]!.peer).toBe(loser);
    } finally {
      m.trust.checks.stopSweep();
    }
  });

  it('pages that legitimately changed between the two crawls are never held against either volunteer', async () => {
    await crawl(V1, pages(1));
    // The verifier's crawl comes an hour later: every page has a new version by then.
    clock.advance(3_600_000);
    await answer(0, pages(2));
    // And one page that changed right away (one page never accuses anybody).
    clock.advance(3_600_000);
    const one = pages(1).map((p, i) => (i === 0 ? { ...p, body: p.body + ' edited' } : p));
    await crawl(V2, one);
    await answer(1, pages(1));
    await until('both checks resolved', () => m.trust.checks.size === 0 && m.trust.counters.checksAgreed + m.trust.counters.checksInconclusive >= 2);
    expect(m.trust.counters.tieBreaks).toBe(0);
    for (const id of [V1, V2, sent[0]!.peer, sent[1]!.peer]) expect(m.trust.record(id).totals.disagree, id).toBe(0);
  });

  it('at the default rate a new volunteer\'s intro check falls on one of its first 4 crawls with text, never one with no live page, however many text-less crawls follow', async () => {
    // Session 9: a forger whose text came in its first tasks and whose intro was drawn among
    // the text-less recrawls after them went 17 tasks without a check. Several identities
    // (seeds): counted in all tasks, a draw past the text would leave some unchecked.
    for (let seed = 1; seed <= 10; seed++) {
      await fresh({ trust: { seed } });
      const hooksDone = awaitHooks();
      // Crawls that stopped before a live page: never drawn, whatever the intro says.
      for (let i = 0; i < 3; i++) {
        clock.advance(7 * 86_400_000);
        const [t] = await m.tasks.issueDue();
        clock.advance(1000);
        await m.ingest.ingest(upload(t!.task, { ...resultFor(t!.task, [], { at: clock.now() }), status: 'deadline' }), F);
      }
      expect(sent.length).toBe(0);
      let checkedAt: number | null = null;
      for (let n = 1; n <= 18; n++) {
        // Four crawls with text (the first finds every page, the next three one changed page each), then unchanged pages.
        const ps = pages(1).map((p, i) => (i === 0 && n > 1 ? { ...p, body: `${p.body} edit ${Math.min(n, 4)}` } : p));
        clock.advance(7 * 86_400_000);
        await crawl(F, ps);
        await hooksDone();
        if (checkedAt === null && sent.length > 0) {
          checkedAt = n;
          await answer(0, ps); // agrees, and matched text: the intro is over
          await until(`seed ${seed}: the check decided`, () => m.trust.checks.size === 0);
        }
      }
      expect(checkedAt, `seed ${seed}: the intro check falls on one of the first 4 crawls with text`).not.toBeNull();
      expect(checkedAt!).toBeLessThanOrEqual(4);
      expect(sent, `seed ${seed}: nothing more is drawn once a check matched its text`).toHaveLength(1);
      expect(m.trust.counters.byReason.intro).toBe(1);
      expect(m.trust.summary(F).textTasks).toBe(4);
    }
  });

  it('a check that compared digests alone leaves the intro owed: the next crawl with text is checked', async () => {
    await m.close();
    m = await open({ trust: { seed: 5, spotCheck: { introTasks: 1 } } });
    // A crawl of pages the channel already knows, with text for none of them, is a crawl with no text;
    // give the volunteer one task with text and the intro (drawn at 1) is due from it.
    await crawl(V1, pages(1));
    await until('the intro check', () => sent.length === 1);
    // The verifier's crawl comes back with the same digests but no text to compare (a crawl of known pages).
    const { t, peer } = sent[0]!;
    clock.advance(500);
    const bare = resultFor(t.task, pages(1), { at: clock.now() });
    await m.ingest.ingest(upload(t.task, { ...bare, pages: [], newDigests: [] }), peer);
    await until('the check decided', () => m.trust.checks.size === 0);
    expect(m.trust.record(V1).totals.agree, 'the digests agreed').toBe(1);
    expect(m.trust.record(V1).textAgreed ?? 0).toBe(0);
    // Still owed: its next crawl with text is checked.
    clock.advance(7 * 86_400_000);
    await crawl(V1, pages(1).map((p, i) => (i === 0 ? { ...p, body: `${p.body} edited` } : p)));
    await until('the owed intro check', () => sent.length === 2);
    expect(m.trust.counters.byReason.intro).toBe(2);
  });

  it('a newcomer that owes its intro verifies another newcomer\'s check; its intro ends only when its crawl matched the other\'s text', async () => {
    for (const [seed, forge] of [[1, false], [2, false], [3, false], [4, true], [5, true]] as const) {
      await fresh({ trust: { seed, minRate: 1 } });
      await m.channels.add({ url: 'http://other.test/', depth: 2, group: 0 });
      // V2's crawl is checked by V1 on digests alone: V2 has stored text and still owes its intro.
      verifiers([V1, V2]);
      await crawl(V2, pages(1));
      await until('V2 checked', () => sent.length === 1);
      expect(sent[0]!.peer).toBe(V1);
      clock.advance(500);
      const bare = resultFor(sent[0]!.t.task, pages(1), { at: clock.now() });
      await m.ingest.ingest(upload(sent[0]!.t.task, { ...bare, pages: [], newDigests: [] }), V1);
      await until('V2\'s check decided', () => m.trust.checks.size === 0);
      expect(m.trust.record(V2).textAgreed ?? 0, `seed ${seed}`).toBe(0);
      // V3's crawl is checked: V1 (no text stored) and V2 (owes its intro) are eligible, half owe: V2 verifies.
      clock.advance(7 * 86_400_000);
      await crawl(V3, pages(2)); // new versions: its crawl stores text
      await until('V3 checked', () => sent.length === 2);
      expect(sent[1]!.peer, `seed ${seed}: the newcomer that owes its intro verifies`).toBe(V2);
      await answer(1, pages(2), forge);
      if (!forge) {
        await until('V3\'s check decided', () => m.trust.checks.size === 0);
        // One crawl, both intros: the verifier's crawl matched V3's text.
        for (const id of [V2, V3]) expect(m.trust.record(id).textAgreed, `seed ${seed}: ${id}`).toBe(1);
        expect(m.trust.counters.spotChecks).toBe(2);
        continue;
      }
      // V2 forged its verification: no credit, a third crawl (V1, the one left) outvotes it.
      await until('the third crawl', () => sent.length === 3);
      expect(sent[2]!.peer).toBe(V1);
      await answer(2, pages(2));
      await until('the tie-break decided', () => m.trust.checks.size === 0);
      expect(m.trust.record(V2).textAgreed ?? 0, `seed ${seed}`).toBe(0);
      expect(m.trust.record(V2).totals.disagree).toBe(1);
      expect(m.trust.record(V3).textAgreed).toBe(1);
    }
  });

  it('a third crawl goes to a volunteer that stored page text, never to one that only finished crawls with no page', async () => {
    // Session 11's first run: the `empty` volunteer judged a forger's dispute, outvoted itself on coverage, and the forger went free.
    for (let seed = 1; seed <= 6; seed++) {
      await fresh({ trust: { seed, minRate: 1 } });
      // V1 finishes a crawl that stopped before any page (never checked): it has finished a task, stored no text.
      const [t] = await m.tasks.issueDue();
      clock.advance(1000);
      await m.ingest.ingest(upload(t!.task, { ...resultFor(t!.task, [], { at: clock.now() }), status: 'deadline' }), V1);
      // V3 stores text; its check goes to V2 and stays in flight (nobody vouched for V3 yet).
      verifiers([V2]);
      clock.advance(7 * 86_400_000);
      await crawl(V3, pages(1));
      await until('V3 checked', () => sent.length === 1);
      // The forger's check goes to V2 too, which disagrees: the third crawl is V1's or V3's.
      clock.advance(7 * 86_400_000);
      await crawl(F, pages(2), true);
      await until('F checked', () => sent.length === 2);
      verifiers([V1, V3]);
      await answer(1, pages(2));
      await until('the third crawl', () => sent.length === 3);
      expect(sent[2]!.peer, `seed ${seed}`).toBe(V3);
    }
  });

  it('with secondCrawlPrefersDelivered a second crawl goes to a volunteer that stored page text, not to one with no record yet; by default to either', async () => {
    // Session 11's logs: at a run's start the `drop` and `empty` volunteers, with no record, drew second
    // crawls — a lost check sent again, or a dispute only a third crawl settles. (Pairing off: an owing
    // newcomer is preferred by that rule anyway.)
    const firstCheckBy = async (seed: number, on: boolean): Promise<string> => {
      await fresh({ trust: { seed, minRate: 1, spotCheck: { introPairMinShare: 0, secondCrawlPrefersDelivered: on } } });
      // V3 stores text; its own check goes to V2 and stays in flight. V1 has done nothing yet.
      verifiers([V2]);
      await crawl(V3, pages(1));
      await until('V3 checked', () => sent.length === 1);
      verifiers([V1, V3]);
      clock.advance(7 * 86_400_000);
      await crawl(F, pages(2));
      await until('F checked', () => sent.length === 2);
      return sent[1]!.peer;
    };
    for (let seed = 1; seed <= 8; seed++) expect(await firstCheckBy(seed, true), `seed ${seed}`).toBe(V3);
    // Off (the default): the volunteer with no record is drawn too — a check crawl is how one that gets no task is probed.
    const drawn = new Set<string>();
    for (let seed = 1; seed <= 8; seed++) drawn.add(await firstCheckBy(seed, false));
    expect(drawn).toEqual(new Set([V1, V3]));
    // Nobody has delivered anything: the plain draw still finds a verifier.
    await fresh({ trust: { seed: 3, minRate: 1, spotCheck: { secondCrawlPrefersDelivered: true } } });
    verifiers([V1]);
    await crawl(F, pages(1));
    await until('F checked by the only one', () => sent.length === 1);
    expect(sent[0]!.peer).toBe(V1);
  });

  it('a forger with text on its first crawl or two and none after is checked by its 3rd task: a late intro compares its newest crawl with text', async () => {
    // Session 10: a forger that drew 2 crawls with text in 720 s never reached its intro (drawn at its 3rd or 4th).
    const late: number[] = [];
    for (let seed = 1; seed <= 8; seed++) {
      await fresh({ trust: { seed } });
      const hooksDone = awaitHooks();
      let checkedAt: number | null = null;
      for (let n = 1; n <= 3 && checkedAt === null; n++) {
        // Text on its first two crawls (new pages, then every page changed), none after (unchanged).
        clock.advance(7 * 86_400_000);
        await crawl(F, pages(Math.min(n, 2)), true);
        await hooksDone();
        if (sent.length > 0) checkedAt = n;
      }
      expect(checkedAt, `seed ${seed}: checked within its first 3 tasks`).not.toBeNull();
      if (m.trust.counters.byReason['intro-late'] === 1) late.push(seed);
      // The check crawl finds the pages as they are: same digests, other text — outvoted with a third crawl.
      const now = pages(checkedAt === 1 ? 1 : 2);
      await answer(0, now);
      await until(`seed ${seed}: the third crawl`, () => sent.length === 2);
      await answer(1, now);
      await until(`seed ${seed}: quarantined`, () => m.trust.status(F) === 'quarantined');
    }
    // Half the draws fall past its 2 crawls with text (introAt 3 or 4): those are the late intros, at its 3rd task.
    expect(late.length).toBeGreaterThan(0);
  });

  it('a new identity starts untrusted and is checked more than one that earned trust; operators ban and lift', async () => {
    for (let i = 0; i < 20; i++) {
      clock.advance(7 * 86_400_000);
      await crawl(V1, pages(1));
      await answer(i, pages(1));
    }
    await until('the checks', () => m.trust.checks.size === 0);
    const old = m.trust.summary(V1);
    expect(old.status).toBe('trusted');
    clock.advance(7 * 86_400_000);
    // An identity that neither crawled nor verified before (a verifier of V1's twenty
    // checks earns trust by verifying: which one is the draw's business).
    const N = '12D3KooWNewcomerNewcomerNewcomerNewcomerNewcomer44';
    await crawl(N, pages(1));
    const fresh = m.trust.summary(N);
    expect(fresh.status).toBe('new');
    expect(fresh.spotCheckRate).toBeGreaterThan(old.spotCheckRate);

    await m.trust.ban(N, 'alice', 'owner asked');
    expect(m.trust.status(N)).toBe('banned');
    expect(m.trust.refusal(N)).toMatch(/banned: owner asked/);
    await expect(m.trust.lift(N, 'alice')).rejects.toThrow(/not quarantined/);
    await m.trust.unban(N, 'alice');
    expect(m.trust.status(N)).toBe('suspect'); // on probation: every task checked until it shows clean work
    expect(m.trust.summary(N).spotCheckRate).toBe(1);
  });

  describe('free comparisons against stored text of the same page bodies (stored-text.ts)', () => {
    // V1's crawl of the site, and its intro check by V2, which found page 0 changed in between
    // (one page never accuses anybody): V1 and V2 are vouched for, and V2's crawl holds page 0's
    // new body, which the store does not (check crawls are never stored as versions).
    const site = pages(1).map((p, i) => (i === 0 ? { ...p, body: `${p.body} and a new paragraph` } : p));
    /** `rules`: the stored-text options (both on unless said otherwise; the manager's defaults with `{}`). */
    async function vouched(rules: { introByStoredText?: boolean; textTieBreakByStored?: boolean } = { introByStoredText: true, textTieBreakByStored: true }): Promise<void> {
      await fresh({ trust: { seed: 7, spotCheck: { introTasks: 1, ...rules } } });
      verifiers([V2]);
      await crawl(V1, pages(1));
      await answer(0, site);
      await until('V1\'s intro check decided', () => m.trust.checks.size === 0 && m.trust.record(V2).totals.agree > 0);
      expect(m.trust.record(V1).textAgreed).toBe(1);
      clock.advance(7 * 86_400_000);
    }

    it('a newcomer whose crawl matches a vouched-for volunteer\'s stored text of the same bodies ends its intro with no check crawl', async () => {
      await vouched();
      const hooksDone = awaitHooks();
      await crawl(V3, site); // its task knows page 0's old digest: it uploads the new body's text
      await hooksDone();
      expect(sent, 'no check crawl').toHaveLength(1);
      expect(m.trust.counters.storedIntroPasses).toBe(1);
      expect(m.trust.record(V3).textAgreed).toBe(1);
      expect(m.trust.record(V3).totals.agree).toBe(1);
      // Its intro is over: its next crawls face the sampled rate, not a check each.
      expect(m.trust.summary(V3).textTasks).toBe(1);
    });

    it('by default (introByStoredText off) the same newcomer gets its intro check crawl', async () => {
      await vouched({});
      await crawl(V3, site);
      await until('the intro check', () => sent.length === 2);
      expect(m.trust.counters.storedIntroPasses).toBe(0);
    });

    it.each([
      ['settled by the stored text of a third volunteer: no third crawl', true],
      ['settled by a third crawl with textTieBreakByStored off', false],
    ])('a forger whose text contradicts the stored text gets the real check and is caught, %s', async (_, stored) => {
      await vouched({ introByStoredText: true, textTieBreakByStored: stored });
      verifiers([V1, V3]); // V2, whose crawl holds the body, is not drawn: it is the third opinion
      await crawl(F, site, true);
      await until('the real check', () => sent.length === 2);
      expect(m.trust.counters.storedIntroPasses).toBe(0);
      await answer(1, site);
      if (stored) {
        await until('the quarantine', () => m.trust.status(F) === 'quarantined');
        expect(m.trust.summary(F).quarantine?.reason).toMatch(/outvoted by its verifier and stored text of 1 page bodies \(contradiction\)/);
        expect(m.trust.counters.tieBreaks).toBe(0);
        expect(m.trust.counters.textTieBreaks).toBe(1);
        // The forged page is replaced by a re-crawl (no third crawl was sent before it).
        await until('the re-crawl', () => sent.length === 3);
        expect(m.trust.counters.recrawls).toBe(1);
      } else {
        await until('the third crawl', () => sent.length === 3);
        expect(m.trust.counters.tieBreaks).toBe(1);
        await answer(2, site);
        await until('the quarantine', () => m.trust.status(F) === 'quarantined');
      }
      for (const id of [V1, V2, V3]) expect(m.trust.record(id).totals.disagree, id).toBe(0);
    });

    it('a page that changed again since the stored crawl is compared by a real check and held against nobody', async () => {
      await vouched();
      const again = site.map((p, i) => (i === 0 ? { ...p, body: `${p.body}, edited once more` } : p));
      await crawl(V3, again);
      await until('the real check', () => sent.length === 2);
      expect(m.trust.counters.storedIntroPasses).toBe(0);
      await answer(1, again);
      await until('the check decided', () => m.trust.checks.size === 0 && m.trust.record(V3).totals.agree > 0);
      for (const id of [V1, V2, V3, sent[1]!.peer]) expect(m.trust.record(id).totals.disagree, id).toBe(0);
      expect(m.trust.record(V3).textAgreed).toBe(1);
    });
  });
});
