// The trust service's figures on /metrics (docs/trust.md): volunteers by
// status, spot checks by reason, third crawls, re-crawls, quarantines and the
// verification overhead. Read from the service when scraped.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { ApiContext } from './routes.js';

export function trustMetrics(registers: Registry[], ctx: ApiContext): void {
  const t = () => ctx.manager.trust;
  new Gauge({ name: 'volcrawl_volunteers', help: 'Volunteer identities by reputation status.', labelNames: ['status'], registers, collect() {
    for (const [status, n] of Object.entries(t().statusCounts())) this.set({ status }, n);
  } });
  new Counter({ name: 'volcrawl_spot_checks_total', help: 'Second crawls issued to check a task, by why the task was checked.', labelNames: ['reason'], registers, collect() {
    this.reset();
    for (const [reason, n] of Object.entries(t().counters.byReason)) this.inc({ reason }, n);
  } });
  const counter = (name: string, help: string, key: 'tieBreaks' | 'recrawls' | 'quarantines' | 'checksDropped' | 'storedTieBreaks' | 'witnessTieBreaks' | 'noMajority') =>
    new Counter({ name, help, registers, collect() { this.reset(); this.inc(t().counters[key]); } });
  counter('volcrawl_tie_breaks_total', 'Third crawls issued to break a disagreement.', 'tieBreaks');
  counter('volcrawl_trust_recrawls_total', 'Re-crawls of channels whose pages came from a distrusted volunteer.', 'recrawls');
  counter('volcrawl_quarantines_total', 'Identities quarantined or banned.', 'quarantines');
  counter('volcrawl_stored_tie_breaks_total', 'Coverage disputes settled by a stored crawl of a third volunteer instead of a third crawl.', 'storedTieBreaks');
  counter('volcrawl_witness_tie_breaks_total', 'Of those, settled by what an earlier check crawl of the channel found (a coverage witness).', 'witnessTieBreaks');
  counter('volcrawl_tie_breaks_no_majority_total', 'Third crawls that outvoted nobody.', 'noMajority');
  counter('volcrawl_spot_checks_dropped_total', 'Checks not issued (no independent volunteer) or lost.', 'checksDropped');
  new Gauge({ name: 'volcrawl_verification_overhead', help: '(second + third crawls) / primary tasks.', registers, collect() { this.set(t().overhead()); } });
}
