// What each volunteer's owner lets it do, as the volunteer last reported it
// (src/dht/volunteer-state.ts): running, or paused and why (schedule, cap,
// busy, battery, owner). Kept per peer id in memory — a volunteer reports on
// every change and on every (re)connection, so a restarted manager learns the
// states again within one manager-link check. Routing leaves paused
// volunteers out (a paused node also withdraws its cell announcements, but a
// router's cached cell answer can name it for a while); the API, /metrics and
// the dashboard show the states, and how others reach each volunteer (its
// report's `reach`; `pull` whenever it pulled its tasks lately, which the
// manager sees for itself).
import { REACH_KINDS, type OwnerPauseReason, type ReachKind, type StateReport } from '../dht/volunteer-state.js';

export interface VolunteerState extends StateReport {
  /** Manager's clock when the report arrived, epoch ms. */
  reportedAt: number;
}

/** Identities kept at most (the oldest report is dropped beyond it). */
const MAX_VOLUNTEERS = 100_000;

export class VolunteerStates {
  private readonly states = new Map<string, VolunteerState>();

  constructor(private readonly now: () => number = Date.now) {}

  note(peer: string, report: StateReport): void {
    this.states.delete(peer); // re-inserted last: the map stays in report order
    this.states.set(peer, { ...report, reportedAt: this.now() });
    if (this.states.size > MAX_VOLUNTEERS) this.states.delete(this.states.keys().next().value!);
  }

  get(peer: string): VolunteerState | null {
    return this.states.get(peer) ?? null;
  }

  /** Volunteers whose last report says paused: routing skips them. */
  paused(): Set<string> {
    const out = new Set<string>();
    for (const [id, s] of this.states) if (s.state === 'paused') out.add(id);
    return out;
  }

  /** Paused volunteers per reason (a volunteer paused for two reasons counts under both), and running ones. */
  counts(): { running: number; paused: number; reasons: Record<OwnerPauseReason, number> } {
    const reasons: Record<OwnerPauseReason, number> = { owner: 0, cap: 0, schedule: 0, battery: 0, busy: 0 };
    let running = 0;
    let paused = 0;
    for (const s of this.states.values()) {
      if (s.state === 'running') running++;
      else {
        paused++;
        for (const r of s.reasons) reasons[r]++;
      }
    }
    return { running, paused, reasons };
  }

  /** How others reach `peer`: pulling (seen by the manager's pull desk), else as it last reported; null before any report. */
  reach(peer: string, pulling: ReadonlySet<string>): ReachKind | null {
    return pulling.has(peer) ? 'pull' : (this.states.get(peer)?.reach ?? null);
  }

  /** Online volunteers per reachability (`unknown`: no report with it yet: a LAN network, or an older volunteer). */
  reachCounts(online: readonly string[], pulling: ReadonlySet<string>): Record<ReachKind | 'unknown', number> {
    const out = Object.fromEntries([...REACH_KINDS, 'unknown'].map((k) => [k, 0])) as Record<ReachKind | 'unknown', number>;
    for (const id of online) out[this.reach(id, pulling) ?? 'unknown']++;
    return out;
  }
}
