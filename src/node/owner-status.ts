// What `volunteer-crawler status` shows the owner: the node's state and why,
// what it moved against the caps, and what the computer has given. The
// running node builds an OwnerStatus for the control socket's "status"
// request; with no node running, the contribution comes from the ledger file.
import type { DayRecord } from './ledger.js';
import type { PauseReason } from './run-policy.js';
import type { ReachKind } from '../dht/volunteer-state.js';
import { formatNatStatus, type NatStatus } from './nat-service.js';

/** How others reach the node and what its coordinate rests on (nat-check reads it: counters, not log lines). */
export interface NetworkStatus {
  /** How others reach it, in the manager's words (behind NAT; absent on a LAN network). */
  reach?: ReachKind;
  nat?: NatStatus;
  /** Orders its pulls brought that it accepted (the pull fallback). */
  tasksPulled?: number;
  /** Vivaldi samples taken, coordinate probes refused because the only connection was relayed, and samples
   * taken over a relayed connection (none may be: a relayed RTT is not the path's). */
  coordinates: { samples: number; relayedProbesRefused: number; relayedSamples: number };
}

export interface OwnerStatus {
  peerId: string;
  dataDir: string;
  state: 'running' | 'paused';
  /** Epoch ms the state began. */
  since: number;
  reasons: PauseReason[];
  details: string[];
  notes: string[];
  tasks: { running: number; queued: number };
  /** Bytes left in the current periods (null = no cap). */
  remaining: { day: number | null; month: number | null };
  today: DayRecord;
  thisMonth: DayRecord;
  /** Newest first. */
  history: ({ day: string } & DayRecord)[];
  prefsFile: string;
  /** Why the preference file on disk is not in force, if it is not. */
  prefsError: string | null;
  network?: NetworkStatus;
}

export function formatBytes(n: number): string {
  if (n < 1e3) return `${n} B`;
  if (n < 1e6) return `${(n / 1e3).toFixed(1)} kB`;
  if (n < 1e9) return `${(n / 1e6).toFixed(1)} MB`;
  return `${(n / 1e9).toFixed(2)} GB`;
}

const hours = (ms: number) => `${(ms / 3_600_000).toFixed(1)} h`;

/** One line per day: tasks, pages, bytes, online and crawling hours. */
export function formatContribution(history: ({ day: string } & DayRecord)[]): string[] {
  const lines = ['day          tasks   pages   down+up     online  crawling'];
  for (const d of history) {
    lines.push(`${d.day}  ${String(d.tasks).padStart(6)}  ${String(d.pages).padStart(6)}  ${formatBytes(d.down + d.up).padStart(10)}  ${hours(d.onlineMs).padStart(7)}  ${hours(d.activeMs).padStart(8)}`);
  }
  return lines;
}

export function formatOwnerStatus(s: OwnerStatus, now: number = Date.now()): string {
  const mins = Math.max(0, Math.round((now - s.since) / 60_000));
  const left = (r: number | null) => (r === null ? 'no cap' : `${formatBytes(Math.max(0, r))} left`);
  const lines = [
    `${s.state === 'running' ? 'running' : `paused (${s.reasons.join(', ')})`} for ${mins} min — peer ${s.peerId}`,
    ...s.details.map((d) => `  ${d}`),
    ...s.notes.map((n) => `  note: ${n}`),
    `tasks: ${s.tasks.running} running, ${s.tasks.queued} queued`,
    ...(s.network !== undefined ? [formatNetwork(s.network)] : []),
    `transfer today ${formatBytes(s.today.down + s.today.up)} (${left(s.remaining.day)}), this month ${formatBytes(s.thisMonth.down + s.thisMonth.up)} (${left(s.remaining.month)})`,
    `given this month: ${s.thisMonth.tasks} tasks, ${s.thisMonth.pages} pages, ${hours(s.thisMonth.activeMs)} crawling of ${hours(s.thisMonth.onlineMs)} online`,
    `preferences: ${s.prefsFile}${s.prefsError ? `\n  NOT IN FORCE: ${s.prefsError}` : ''}`,
    '',
    ...formatContribution(s.history),
  ];
  return lines.join('\n');
}

/** One line: how others reach the node, and what its coordinate rests on. */
export function formatNetwork(n: NetworkStatus): string {
  const c = n.coordinates;
  const reach = n.nat !== undefined ? `${formatNatStatus(n.nat)}${n.nat.natType !== 'unknown' ? ` (NAT: ${n.nat.natType})` : ''}${n.tasksPulled ? `, ${n.tasksPulled} tasks pulled` : ''}` : 'no NAT handling (LAN)';
  const relayed = c.relayedProbesRefused > 0 ? `, ${c.relayedProbesRefused} relayed probes refused` : '';
  return `network: ${reach}; coordinate from ${c.samples} samples${relayed}${c.relayedSamples > 0 ? `, ${c.relayedSamples} OVER RELAYS` : ''}`;
}
