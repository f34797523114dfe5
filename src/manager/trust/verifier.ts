// Who crawls a check: another volunteer (never the same peer), preferably on
// another network prefix (/24 for IPv4, /48 for IPv6: the same machine, home
// or small hosting block), then one already trusted (so a crowd of fresh
// Sybil identities checks nobody), for a third crawl then one a check has
// vouched for, then one that has delivered work, then one in another coordinate
// region (judged only from coordinates witnesses vouched for: regionCoord); random among the best, so a volunteer cannot arrange to be checked by
// a friend. Pure; randomness from an injected Rng.
import { isIPv4, isIPv6 } from 'node:net';
import type { Rng } from '../../rng.js';
import { randomInt } from '../../rng.js';
import type { ReputationRecord, VolunteerStatus } from './reputation.js';
import { spotCheckOptions, type SpotCheckOptions } from './spot-check.js';

/**
 * The network prefix an address belongs to: the /24 of an IPv4 address (also
 * when IPv4-mapped in IPv6) and the /48 of an IPv6 address, as a string;
 * null for anything that is not an IP address.
 */
export function networkPrefix(address: string): string | null {
  let a = address.trim();
  if (a.startsWith('[') && a.endsWith(']')) a = a.slice(1, -1);
  const zone = a.indexOf('%');
  if (zone >= 0) a = a.slice(0, zone);
  if (isIPv4(a)) return `${a.split('.').slice(0, 3).join('.')}.0/24`;
  if (!isIPv6(a)) return null;
  const groups = ipv6Groups(a);
  // IPv4-mapped (::ffff:a.b.c.d, however written) is the IPv4 address.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.0/24`;
  }
  return `${groups.slice(0, 3).map((g) => g.toString(16)).join(':')}::/48`;
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a dotted IPv4 tail as two groups). */
function ipv6Groups(a: string): number[] {
  const parse = (part: string): number[] =>
    part === ''
      ? []
      : part.split(':').flatMap((g) => {
          if (!g.includes('.')) return [parseInt(g, 16)];
          const [w, x, y, z] = g.split('.').map(Number) as [number, number, number, number];
          return [(w << 8) | x, (y << 8) | z];
        });
  const gap = a.indexOf('::');
  if (gap < 0) return parse(a);
  const head = parse(a.slice(0, gap));
  const tail = parse(a.slice(gap + 2));
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
}

/** A volunteer that could verify, as the manager sees it. */
export interface VolunteerInfo {
  id: string;
  status: VolunteerStatus;
  /** The address the manager sees it connect from (null when unknown). */
  address?: string | null;
  /** Its coordinate's Euclidean part (null when unknown). */
  coord?: ArrayLike<number> | null;
  /** Its last task or check crawl was accepted and never uploaded, and it has finished nothing since. */
  lostLastCheck?: boolean;
  /** Check crawls it holds now. */
  checksHeld?: number;
  /** It has delivered pages: stored page text in a task of its own, or a check
   * compared a crawl of its (a volunteer that never delivers anything — the
   * benchmark's `drop` — would take check crawls and return none; one that
   * uploads empty crawls — `empty` — judged a forger's dispute and outvoted
   * nobody but itself on coverage, the forger went free). */
  delivered?: boolean;
  /** A check agreed with its crawling and none outvoted it: its crawls have been
   * seen to be right (not yet trusted: that takes more evidence). */
  vouched?: boolean;
  /** A newcomer that still owes its intro check (intro.ts's owesIntro). */
  owesIntro?: boolean;
}

export interface VerifierChoice {
  id: string;
  /** On another network prefix than every excluded volunteer (null: an address unknown). */
  otherPrefix: boolean | null;
  /** In another coordinate region than the subject (null: a coordinate unknown). */
  otherRegion: boolean | null;
  trusted: boolean;
}

/**
 * The coordinate a volunteer's region is judged from: its claim only once
 * witnesses have found it consistent with the RTTs they measured and none has
 * contradicted it; null (region unknown) before. An unchecked claim would let a
 * volunteer that says it sits 300 ms from everyone be "in another region" for
 * every subject, and so the preferred verifier of most checks — a place from
 * which it could vouch for an accomplice's forgery (the benchmark's coordinate
 * faker drew 9 of the first 10 second crawls of a run this way).
 */
export function regionCoord(rec: Pick<ReputationRecord, 'overlay'>, claim: ArrayLike<number> | null | undefined): ArrayLike<number> | null {
  return claim != null && rec.overlay.agree > 0 && rec.overlay.disagree === 0 ? claim : null;
}

function distance(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const n = Math.min(a.length, b.length);
  let s = 0;
  for (let i = 0; i < n; i++) s += (a[i]! - b[i]!) ** 2;
  return Math.sqrt(s);
}

/**
 * Chooses the volunteer that crawls a check. `subject` is the volunteer being
 * checked; `others` are volunteers already in this check (the first verifier
 * when choosing a tie-breaker): none of them, and none on their prefixes if
 * possible, is chosen. `candidates` are the volunteers the caller deems able
 * to crawl the channel now (alive, with capacity, near enough the host).
 * Suspect, quarantined and banned volunteers never verify, nor does one whose
 * last task or check crawl was lost (accepted, never uploaded) until it
 * finishes something: in the benchmark the `drop` volunteer took 3–4 check crawls a run,
 * each an extra crawl with no verdict. Among equals, one that holds no check
 * crawl now is preferred (a dropper holds its checks until their deadline).
 * For a third crawl (a tie-breaker: `others` not empty), before region, one a
 * check has vouched for is preferred, then one that has delivered anything: at
 * a run's start nobody is trusted, and the benchmark's third crawls fell on
 * misbehaving volunteers — the `drop` volunteer before it had lost anything
 * (no verdict, sent again), the `empty` one before its first check, a forger
 * judging a forger's dispute (three crawls that all differ: no majority). A
 * second crawl keeps the plain draw by default: a check crawl drawn to a
 * volunteer with no record is in effect a known-answer task for it, and a
 * misbehaving volunteer drawn to verify is caught by the third crawl that
 * follows (often how a forger that draws few or no tasks of its own is caught:
 * session 12, a forger with 0 tasks caught so). With secondCrawlPrefersDelivered
 * it prefers one that has delivered, as a third crawl does (session 12: saves
 * the lost check or third crawl a `drop` or `empty` verifier with no record
 * costs at a run's start, at the price of that catch); and
 * a newcomer that verifies and agrees ends its intro without a check of its own
 * — so a second crawl prefers, after prefix, trust and region, a newcomer that still
 * owes its intro, while such newcomers are at least introPairMinShare of the
 * eligible (intro.ts's pairing rule: what it guarantees against colluders).
 * Null when nobody fits.
 */
export function chooseVerifier(
  subject: VolunteerInfo,
  candidates: readonly VolunteerInfo[],
  rng: Rng,
  others: readonly VolunteerInfo[] = [],
  options: Partial<SpotCheckOptions> | SpotCheckOptions = {},
): VerifierChoice | null {
  const o = spotCheckOptions(options);
  const involved = [subject, ...others];
  const ids = new Set(involved.map((v) => v.id));
  const prefixes = involved.map((v) => (v.address ? networkPrefix(v.address) : null));
  // A third crawl decides a disagreement: its crawler must come back, and be right.
  const judge = others.length > 0;
  const eligible = candidates.filter((c) => !ids.has(c.id) && (c.status === 'new' || c.status === 'trusted') && c.lostLastCheck !== true);
  const owing = eligible.filter((c) => c.owesIntro === true).length;
  const pairing = !judge && o.introPairMinShare > 0 && owing > 0 && owing >= o.introPairMinShare * eligible.length;
  const scored: { choice: VerifierChoice; score: number }[] = [];
  for (const c of eligible) {
    const cp = c.address ? networkPrefix(c.address) : null;
    const otherPrefix = cp === null || prefixes.some((p) => p === null) ? null : prefixes.every((p) => p !== cp);
    const otherRegion = c.coord && subject.coord ? distance(c.coord, subject.coord) >= o.minRegionDistanceMs : null;
    const trusted = c.status === 'trusted';
    // Lexicographic: another prefix, then trusted, (for a third crawl) vouched, then delivered, then
    // another region (independence first), then (for a second crawl, when pairing) owes its intro, then idle.
    const proven = (judge && c.vouched === true ? 16 : 0) + ((judge || o.secondCrawlPrefersDelivered) && c.delivered === true ? 8 : 0);
    const pairs = pairing && c.owesIntro === true ? 2 : 0;
    const score = (otherPrefix === true ? 64 : 0) + (trusted ? 32 : 0) + proven + (otherRegion === true ? 4 : 0) + pairs + ((c.checksHeld ?? 0) === 0 ? 1 : 0);
    scored.push({ choice: { id: c.id, otherPrefix, otherRegion, trusted }, score });
  }
  if (scored.length === 0) return null;
  const best = Math.max(...scored.map((s) => s.score));
  const top = scored.filter((s) => s.score === best);
  return top[randomInt(rng, top.length)]!.choice;
}
