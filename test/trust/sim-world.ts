// A model of the trust decision loop (not the benchmark: no processes, no
// network, no crawler — volunteers are plain functions that produce the
// CrawlView a real upload would give). Channels of pages change on per-page
// Poisson schedules (heterogeneous within a channel; the manager only knows a
// noisy channel-wide estimate), some pages carry a view counter that changes
// on every fetch, and honest crawls lose a page now and then. Malicious
// volunteers forge in the ways issue #13 names. The loop is the one phase 2
// wires into the manager: upload → decideSpotCheck → chooseVerifier →
// compareCrawls → resolvePair / third crawl → resolveTieBreak → recordOutcome,
// with quarantined volunteers' current versions re-crawled by others.
import { sha1_32 } from '../../src/crawler/hash.js';
import { checkCoordinateClaim, predictRtt, type Coordinate } from '../../src/coords/index.js';
import { createRng, deriveSeed, exponential, normal, randomInt, uniform, type Rng } from '../../src/rng.js';
import {
  chooseVerifier,
  compareCrawls,
  decideSpotCheck,
  mayWork,
  newReputation,
  recordOutcome,
  reputationOptions,
  reputationStatus,
  resolvePair,
  resolveTieBreak,
  spotCheckRate,
  verificationOverhead,
  type CheckParty,
  type CrawlView,
  type OverheadCounts,
  type PageView,
  type PartyOutcome,
  type ReputationOptions,
  type ReputationRecord,
  type VolunteerInfo,
} from '../../src/manager/trust/index.js';

const MIN = 60_000;

export type Behaviour =
  | 'honest'
  | 'forger' // rewrites every page it uploads into spam, with digests to match
  | 'subtle-forger' // rewrites the text of pages that really changed, keeping their true digest
  | 'empty' // uploads changed pages with empty text
  | 'dropper' // acknowledges, reports "completed" with nothing
  | 'echo' // never fetches: reports the digests it was given as unchanged
  | 'sometimes' // forges like 'forger' on 30 % of its tasks
  | 'coord-liar'; // crawls honestly but claims a coordinate in a region it is not in

export interface SimOptions {
  seed: number;
  honest: number;
  malicious: Behaviour[];
  channels: number;
  primaryTasks: number;
  /** Time between primary task issues, ms. */
  stepMs: number;
  /** Per-page change rates: log-uniform between these, changes per minute. */
  minRatePerMinute: number;
  maxRatePerMinute: number;
  /** Spread of page rates around their channel's (sd of the log factor). */
  pageRateSpread: number;
  /** Noise of the manager's channel rate estimate (sd of the log factor). */
  estimateNoise: number;
  /** Systematic error of the estimate (the estimate is the true rate × this). */
  estimateBias: number;
  /** Time between an upload and its check's start, ms. */
  checkDelayMs: number;
  /** Fraction of pages with a view counter in their text. */
  volatileFraction: number;
  /** Probability that an honest fetch of a page fails. */
  fetchFailure: number;
  /** Every this many primary tasks of a volunteer, peers probe it and its coordinate claim is checked. */
  coordCheckEvery: number;
  /** How many times each malicious volunteer comes back under a new key after its quarantine. */
  rejoins: number;
  reputation?: Partial<ReputationOptions>;
}

export const DEFAULT_SIM: Omit<SimOptions, 'seed'> = {
  honest: 20,
  malicious: ['forger', 'subtle-forger', 'empty', 'dropper', 'echo', 'sometimes', 'coord-liar'],
  channels: 80,
  primaryTasks: 4000,
  stepMs: 15_000,
  minRatePerMinute: 1 / (3 * 24 * 60),
  maxRatePerMinute: 1 / 60,
  pageRateSpread: 0.5,
  estimateNoise: 0.3,
  estimateBias: 1,
  checkDelayMs: 0,
  volatileFraction: 0.1,
  fetchFailure: 0.003,
  coordCheckEvery: 5,
  rejoins: 0,
};

interface Page {
  url: string;
  ratePerMinute: number;
  volatile: boolean;
  rng: Rng;
  changes: number[];
}

interface Stored {
  digest: number;
  forged: boolean;
  supplier: string;
}

interface Channel {
  id: number;
  pages: Page[];
  estRatePerMinute: number;
  stored: Map<string, Stored>;
  lastCrawl: number | null;
}

interface Volunteer {
  id: string;
  behaviour: Behaviour;
  address: string;
  rep: ReputationRecord;
  primaryDone: number;
  detectedAfter: number | null;
  rng: Rng;
  /** True position in a 2-D latency space (ms) and the coordinate it claims. */
  truth: Coordinate;
  claim: Coordinate;
}

export interface SimResult {
  honest: number;
  malicious: number;
  detected: number;
  falselyQuarantined: number;
  forgedCurrentAtEnd: number;
  /** Primary tasks each malicious volunteer completed before its quarantine (null: never). */
  tasksToDetect: Record<string, number | null>;
  /** Primary tasks completed by the malicious volunteers never quarantined. */
  undetectedTasks: Record<string, number>;
  tasksToDetectMedian: number;
  verificationOverhead: number;
  counts: OverheadCounts;
  /** Disagreement outcomes recorded against honest volunteers. */
  honestDisagreements: number;
  /** Checks of honest subjects by honest verifiers, and how many disagreed before a third crawl. */
  honestPairs: number;
  honestPairDisagreements: number;
  /** Checks by reason (sampled, anomaly-empty, anomaly-changes, failure-claim). */
  checkReasons: Record<string, number>;
  /** Coordinate checks that found a volunteer's claim inconsistent, by volunteer. */
  coordinateFlags: Record<string, number>;
}

function versionAt(p: Page, t: number, epoch: number): number {
  while (p.changes.length === 0 || p.changes[p.changes.length - 1]! <= t) {
    const prev = p.changes.length === 0 ? epoch : p.changes[p.changes.length - 1]!;
    p.changes.push(prev + Math.max(1, exponential(p.rng, MIN / p.ratePerMinute)));
  }
  let n = 0;
  for (const c of p.changes) if (c <= t) n++;
  return n;
}

function content(p: Page, t: number, epoch: number): { text: string; title: string; digest: number } {
  const v = versionAt(p, t, epoch);
  let text = `${p.url} is at version ${v}: lorem ipsum dolor sit amet, consectetur adipiscing elit ${v * 7919}`;
  if (p.volatile) text += ` seen ${Math.floor(t / 1000)} times`;
  return { text, title: `Page ${p.url}`, digest: sha1_32(`<html>${text}</html>`) };
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : 0.5 * (s[m - 1]! + s[m]!);
}

export function runSimulation(partial: Partial<SimOptions> & { seed: number }): SimResult {
  const o: SimOptions = { ...DEFAULT_SIM, ...partial };
  const epoch = Date.UTC(2026, 0, 1);
  const world = createRng(deriveSeed(o.seed, 'world'));
  const draws = createRng(deriveSeed(o.seed, 'policy'));
  const repOpts = reputationOptions(o.reputation ?? {});

  const channels: Channel[] = [];
  for (let c = 0; c < o.channels; c++) {
    const logRate = Math.log(o.minRatePerMinute) + world.next() * (Math.log(o.maxRatePerMinute) - Math.log(o.minRatePerMinute));
    const rate = Math.exp(logRate);
    const n = 5 + randomInt(world, 26);
    const pages: Page[] = [];
    for (let i = 0; i < n; i++) {
      const url = `http://site${c}.test/p${i}`;
      pages.push({ url, ratePerMinute: rate * Math.exp(normal(world, 0, o.pageRateSpread)), volatile: world.next() < o.volatileFraction, rng: createRng(deriveSeed(o.seed, url)), changes: [] });
    }
    channels.push({ id: c, pages, estRatePerMinute: o.estimateBias * rate * Math.exp(normal(world, 0, o.estimateNoise)), stored: new Map(), lastCrawl: null });
  }

  const volunteers: Volunteer[] = [];
  const byId = new Map<string, Volunteer>();
  const coordOf = (vec: number[], height: number): Coordinate => ({ vec: Float64Array.from(vec), height, error: 0.2 });
  const add = (behaviour: Behaviour, i: number, generation = 0): void => {
    const id = `${behaviour}-${i}${generation > 0 ? `-rejoin${generation}` : ''}`;
    // Honest volunteers on their own /24s; the malicious ones on two blocks (a Sybil operator).
    const address = behaviour === 'honest' ? `10.${i}.${i % 7}.5` : `203.0.${113 + (i % 2)}.${10 + i + 16 * generation}`;
    const rng = createRng(deriveSeed(o.seed, id));
    // A position in a disc of radius 150 ms; an honest claim errs by Vivaldi's
    // ~8 ms per axis. A liar claims to sit beside an honest volunteer at least
    // 100 ms from it, to take the tasks of that region (claiming an empty
    // region is the harder case docs/trust.md measures on PlanetLab).
    let x: number;
    let y: number;
    do {
      x = uniform(rng, -150, 150);
      y = uniform(rng, -150, 150);
    } while (Math.hypot(x, y) > 150);
    const h = uniform(rng, 2, 10);
    const truth = coordOf([x, y], h);
    let claim = coordOf([x + normal(rng, 0, 8), y + normal(rng, 0, 8)], h + normal(rng, 0, 1) ** 2);
    if (behaviour === 'coord-liar') {
      const far = volunteers.filter((p) => p.behaviour === 'honest' && predictRtt(p.truth, truth) >= 100);
      const target = far[randomInt(rng, far.length)]!;
      claim = coordOf([target.claim.vec[0]! + normal(rng, 0, 5), target.claim.vec[1]! + normal(rng, 0, 5)], 2);
    }
    const v: Volunteer = { id, behaviour, address, rep: newReputation(id, epoch), primaryDone: 0, detectedAfter: null, rng, truth, claim };
    volunteers.push(v);
    byId.set(id, v);
  };
  for (let i = 0; i < o.honest; i++) add('honest', i);
  o.malicious.forEach((b, i) => add(b, i));
  const generations = new Map<string, number>();

  /** Peers probe v (raw RTTs, inflated by queueing only) and its claim is checked against them:
   * the four whose claims are nearest v's claim (the nodes of the cells it announces) and four at random. */
  const coordinateCheck = (v: Volunteer, at: number): void => {
    const peers = volunteers.filter((p) => p !== v && mayWork(p.rep));
    const near = [...peers].sort((p, q) => predictRtt(p.claim, v.claim) - predictRtt(q.claim, v.claim)).slice(0, 4);
    const chosen = new Set(near);
    for (let k = 0; k < 4 && chosen.size < peers.length; k++) chosen.add(peers[randomInt(draws, peers.length)]!);
    const obs = [...chosen].map((p) => ({ measurer: p.id, coord: p.claim, rttMs: predictRtt(v.truth, p.truth) * uniform(draws, 1, 1.15) }));
    const r = checkCoordinateClaim(v.claim, obs);
    if (r.verdict === 'inconsistent') apply([{ volunteer: v.id, outcome: { kind: 'coordinate', at, reason: r.reasons.join(', ') } }]);
    else if (r.verdict === 'consistent') apply([{ volunteer: v.id, outcome: { kind: 'coordinate-ok', at } }]);
  };

  const counts: OverheadCounts = { primary: 0, spotChecks: 0, tieBreaks: 0, recrawls: 0 };
  let honestDisagreements = 0;
  let honestPairs = 0;
  let honestPairDisagreements = 0;
  let taskSeq = 0;
  const reasons: Record<string, number> = {};

  /** A volunteer crawls channel ch, issued at `issuedAt`, knowing `known`. */
  const crawl = (v: Volunteer, ch: Channel, issuedAt: number, known: ReadonlyMap<string, number>): { view: CrawlView; forged: Set<string> } => {
    const taskId = `t${++taskSeq}`;
    const forged = new Set<string>();
    const base = { volunteer: v.id, taskId, status: 'completed' as const, issuedAt, interSiteUrls: [] as string[] };
    if (v.behaviour === 'dropper') return { view: { ...base, receivedAt: issuedAt + 2000, pages: [], validators: [] }, forged };
    if (v.behaviour === 'echo') {
      const validators = [...known].map(([url, digest]) => ({ url, digest }));
      return { view: { ...base, receivedAt: issuedAt + 2000, pages: [], validators }, forged };
    }
    const forgeAll = v.behaviour === 'forger' || (v.behaviour === 'sometimes' && v.rng.next() < 0.3);
    let t = issuedAt + Math.floor(v.rng.next() * 10_000);
    const pages: PageView[] = [];
    const validators: { url: string; digest: number }[] = [];
    for (const p of ch.pages) {
      t += 1000;
      if (v.rng.next() < o.fetchFailure) continue;
      const c = content(p, t, epoch);
      let page: PageView | null = known.get(p.url) === c.digest ? null : { url: p.url, digest: c.digest, text: c.text, title: c.title, bytes: c.text.length + 13, fetchedAt: t };
      let digest = c.digest;
      if (forgeAll) {
        const text = `BUY CHEAP PILLS at http://spam.test/ ${p.url}`;
        digest = sha1_32(text);
        page = { url: p.url, digest, text, title: c.title, bytes: text.length, fetchedAt: t };
        forged.add(p.url);
      } else if (page !== null && v.behaviour === 'subtle-forger') {
        page = { ...page, text: `${c.text} visit http://spam.test/ for cheap pills` };
        forged.add(p.url);
      } else if (page !== null && v.behaviour === 'empty') {
        page = { ...page, text: '' };
        forged.add(p.url);
      }
      validators.push({ url: p.url, digest });
      if (page !== null) pages.push(page);
    }
    return { view: { ...base, receivedAt: t + 1000, pages, validators }, forged };
  };

  const store = (ch: Channel, view: CrawlView, forged: Set<string>): void => {
    for (const p of view.pages) ch.stored.set(p.url, { digest: p.digest, forged: forged.has(p.url), supplier: view.volunteer });
    ch.lastCrawl = view.receivedAt;
  };

  const info = (v: Volunteer): VolunteerInfo => ({ id: v.id, status: reputationStatus(v.rep, repOpts), address: v.address, coord: null });
  const active = (): Volunteer[] => volunteers.filter((v) => mayWork(v.rep));

  const apply = (outcomes: PartyOutcome[]): void => {
    for (const { volunteer, outcome } of outcomes) {
      const v = byId.get(volunteer)!;
      if (outcome.kind === 'disagree' && v.behaviour === 'honest') honestDisagreements++;
      const r = recordOutcome(v.rep, outcome, repOpts);
      v.rep = r.record;
      if (r.quarantined) {
        v.detectedAfter = v.primaryDone;
        if (v.behaviour !== 'honest') {
          const [behaviour, index] = v.id.split('-rejoin')[0]!.split(/-(?=\d+$)/) as [Behaviour, string];
          const g = (generations.get(v.id.split('-rejoin')[0]!) ?? 0) + 1;
          if (g <= o.rejoins) {
            generations.set(v.id.split('-rejoin')[0]!, g);
            add(behaviour, Number(index), g);
          }
        }
        // Its current versions are re-crawled by others and replaced.
        for (const ch of channels) {
          if (![...ch.stored.values()].some((s) => s.supplier === v.id)) continue;
          const pick = chooseVerifier(info(v), active().map(info), draws);
          if (pick === null) continue;
          counts.recrawls++;
          const res = crawl(byId.get(pick.id)!, ch, outcome.at, new Map());
          for (const [url, s] of ch.stored) if (s.supplier === v.id) ch.stored.delete(url);
          store(ch, res.view, res.forged);
        }
      }
    }
  };

  interface Event {
    at: number;
    run: () => void;
  }
  const events: Event[] = [];
  const runEventsUntil = (t: number): void => {
    events.sort((a, b) => a.at - b.at);
    while (events.length > 0 && events[0]!.at <= t) events.shift()!.run();
  };

  const party = (v: CrawlView): CheckParty => ({ volunteer: v.volunteer, taskId: v.taskId, receivedAt: v.receivedAt });

  const check = (subject: Volunteer, ch: Channel, first: CrawlView, firstForged: Set<string>): void => {
    const change = { ratePerMinute: ch.estRatePerMinute };
    const pickB = chooseVerifier(info(subject), active().map(info), draws);
    if (pickB === null) return;
    const b = byId.get(pickB.id)!;
    counts.spotChecks++;
    const second = crawl(b, ch, first.receivedAt + o.checkDelayMs, new Map());
    const ab = compareCrawls(first, second.view, change);
    if (subject.behaviour === 'honest' && b.behaviour === 'honest') {
      honestPairs++;
      if (ab.verdict === 'disagree') honestPairDisagreements++;
    }
    const pair = resolvePair(ab, party(first), party(second.view), second.view.receivedAt);
    if (!pair.needsTieBreak) {
      events.push({ at: second.view.receivedAt, run: () => apply(pair.outcomes) });
      return;
    }
    const pickC = chooseVerifier(info(subject), active().map(info), draws, [info(b)]);
    if (pickC === null) return;
    counts.tieBreaks++;
    const third = crawl(byId.get(pickC.id)!, ch, second.view.receivedAt, new Map());
    const ac = compareCrawls(first, third.view, change);
    const bc = compareCrawls(second.view, third.view, change);
    const tb = resolveTieBreak(ab, ac, bc, { a: party(first), b: party(second.view), c: party(third.view) }, third.view.receivedAt);
    events.push({
      at: third.view.receivedAt,
      run: () => {
        apply(tb.outcomes);
        // An outvoted subject's upload is replaced by the check's crawl.
        if (tb.odd === 'a') {
          for (const [url, s] of ch.stored) if (s.supplier === subject.id && firstForged.has(url)) ch.stored.delete(url);
          store(ch, third.view, third.forged);
        }
      },
    });
  };

  for (let step = 0; step < o.primaryTasks; step++) {
    const now = epoch + step * o.stepMs;
    runEventsUntil(now);
    const workers = active();
    if (workers.length === 0) break;
    const v = workers[randomInt(draws, workers.length)]!;
    const ch = channels[randomInt(draws, channels.length)]!;
    const known = new Map([...ch.stored].map(([url, s]) => [url, s.digest]));
    const { view, forged } = crawl(v, ch, now, known);
    counts.primary++;
    v.primaryDone++;
    // When it starts (it announces its cells) and every coordCheckEvery tasks after.
    if (v.primaryDone === 1 || v.primaryDone % o.coordCheckEvery === 0) coordinateCheck(v, now);
    let revisited = 0;
    let changedOfRevisited = 0;
    const since = ch.lastCrawl === null ? null : (view.receivedAt - ch.lastCrawl) / MIN;
    // The manager's per-page history: a page that changes on every visit is
    // known as such; the others get the channel's (noisy) estimate.
    const revisits: { pChange: number; changed: boolean }[] = [];
    for (const val of view.validators) {
      const k = known.get(val.url);
      if (k === undefined) continue;
      revisited++;
      if (k !== val.digest) changedOfRevisited++;
      const page = ch.pages.find((p) => p.url === val.url)!;
      const pChange = page.volatile ? 1 : 1 - Math.exp(-ch.estRatePerMinute * (since ?? 0));
      revisits.push({ pChange, changed: k !== val.digest });
    }
    store(ch, view, forged);
    const decision = decideSpotCheck(
      { taskId: view.taskId, volunteer: v.id, status: view.status, issuedAt: view.issuedAt, receivedAt: view.receivedAt, livePages: view.validators.length, knownPages: known.size, revisited, changedOfRevisited, sinceLastCrawlMinutes: since, ratePerMinute: ch.estRatePerMinute, revisits },
      spotCheckRate(v.rep, repOpts),
      draws,
    );
    if (decision.check) reasons[decision.reason] = (reasons[decision.reason] ?? 0) + 1;
    if (decision.check) events.push({ at: view.receivedAt + o.checkDelayMs, run: () => check(v, ch, view, forged) });
  }
  runEventsUntil(Infinity);

  const malicious = volunteers.filter((v) => v.behaviour !== 'honest');
  const tasksToDetect: Record<string, number | null> = {};
  for (const v of malicious) tasksToDetect[v.id] = v.detectedAfter;
  let forgedCurrentAtEnd = 0;
  for (const ch of channels) for (const s of ch.stored.values()) if (s.forged) forgedCurrentAtEnd++;
  return {
    honest: o.honest,
    malicious: malicious.length,
    detected: malicious.filter((v) => v.rep.quarantine !== null).length,
    falselyQuarantined: volunteers.filter((v) => v.behaviour === 'honest' && v.rep.quarantine !== null).length,
    forgedCurrentAtEnd,
    tasksToDetect,
    undetectedTasks: Object.fromEntries(malicious.filter((v) => v.detectedAfter === null).map((v) => [v.id, v.primaryDone])),
    tasksToDetectMedian: median(malicious.map((v) => v.detectedAfter ?? Infinity)),
    verificationOverhead: verificationOverhead(counts),
    counts,
    honestDisagreements,
    honestPairs,
    honestPairDisagreements,
    checkReasons: reasons,
    coordinateFlags: Object.fromEntries(volunteers.filter((v) => v.rep.totals.coordinate > 0).map((v) => [v.id, v.rep.totals.coordinate])),
  };
}
