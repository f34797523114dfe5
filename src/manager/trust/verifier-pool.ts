// Who may verify a check: a volunteer drawn independent of the check's parties
// (verifier.ts's chooseVerifier), preferring one whose crawls a check has
// vouched for, then one that has delivered pages (both read from its persisted
// reputation), then one that holds no check crawl now, and never one whose
// last task or check crawl was lost (accepted, never uploaded) until it
// finishes something — a lost check is overhead with no verdict. A newcomer
// that still owes its intro (intro.ts's owesIntro) is marked so: its matching
// verification of another's crawl ends its intro too.
import type { Rng } from '../../rng.js';
import type { TrustHost, TrustNetwork } from './check-host.js';
import { owesIntro } from './intro.js';
import { chooseVerifier, regionCoord, type VolunteerInfo } from './verifier.js';

export class VerifierPool {
  /** Volunteers whose last task or check crawl was lost and that finished nothing
   * since (in memory: a restart forgets). */
  private readonly lostCheck = new Set<string>();

  constructor(
    private readonly host: Pick<TrustHost, 'status' | 'spot' | 'rep' | 'record'>,
    private readonly rng: Rng,
    private readonly network: () => TrustNetwork | null,
    /** The peer holding each check crawl in flight. */
    private readonly holders: () => readonly string[],
  ) {}

  finished(volunteer: string): void {
    this.lostCheck.delete(volunteer);
  }

  lost(volunteer: string): void {
    this.lostCheck.add(volunteer);
  }

  private info(id: string): VolunteerInfo {
    const c = this.network()?.candidates().find((x) => x.id === id);
    return { id, status: this.host.status(id), address: c?.address ?? null, coord: regionCoord(this.host.record(id), c?.coord) };
  }

  /** What its record says of its work: it delivered pages (a task that stored text —
   * a finished task alone may be an empty one —, or a check that compared a crawl
   * of its); a check agreed with it and none outvoted it; it still owes its intro. */
  private evidence(id: string): { delivered: boolean; vouched: boolean; owesIntro: boolean } {
    const r = this.host.record(id);
    const t = r.totals;
    return { delivered: (r.textTasks ?? 0) > 0 || t.agree + t.disagree + t.inconclusive > 0, vouched: t.agree > 0 && t.disagree === 0, owesIntro: owesIntro(r, this.host.rep, this.host.spot) };
  }

  /** A verifier for `subject`'s work independent of it and of `others`, none of `exclude`; null when none. */
  pick(subject: string, others: readonly string[], exclude: readonly string[] = []): string | null {
    const net = this.network();
    if (net === null) return null;
    const holding = new Map<string, number>();
    for (const peer of this.holders()) holding.set(peer, (holding.get(peer) ?? 0) + 1);
    const cands = net
      .candidates()
      .filter((c) => !exclude.includes(c.id))
      .map((c) => ({ ...c, status: this.host.status(c.id), lostLastCheck: this.lostCheck.has(c.id), checksHeld: holding.get(c.id) ?? 0, ...this.evidence(c.id) }));
    return chooseVerifier(this.info(subject), cands, this.rng, others.map((o) => this.info(o)), this.host.spot)?.id ?? null;
  }
}
