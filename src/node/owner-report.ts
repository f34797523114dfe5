// Tells the manager what the owner lets this volunteer do (running, or paused
// and why), over /volcrawl/volunteer-state (src/dht/volunteer-state.ts): at
// start, on every change, and whenever the connection to the manager comes
// back (a restarted manager learns every state again). The manager answers
// with the operator's signed configuration; once verified, its contact URL
// goes into this volunteer's User-Agent. One report in flight at a time; a
// change while one is in flight sends the newest state after it. Behind NAT
// (`periodic`) the state is also re-reported every `everyMs`: the reply is how
// the manager tells a volunteer its pushes fail and it should pull its tasks
// (src/dht/push-failures.ts) — it cannot push that news.
import type { Logger } from 'pino';
import type { PeerId } from '@libp2p/interface';
import type { VolcrawlLibp2p } from '../dht/libp2p.js';
import { reportState, type OperatorConfig, type StateReport } from '../dht/volunteer-state.js';

export interface OwnerReportOptions {
  libp2p: VolcrawlLibp2p;
  manager: string;
  state: () => StateReport;
  onConfig: (cfg: OperatorConfig) => void;
  /** The manager asks this volunteer to pull its tasks for `ms` (its pushes failed). */
  onPullAdvice?: (ms: number) => void;
  /** Whether to re-report every `everyMs` even without a change (behind NAT, not pulling). */
  periodic?: () => boolean;
  /** Gap between periodic reports, ms (default 60 000). */
  everyMs?: number;
  /** A failed report is tried again after this long while the manager stays connected, ms (default 10 000). */
  retryMs?: number;
  log: Logger;
}

export class OwnerReport {
  private sending = false;
  private again = false;
  private retry: NodeJS.Timeout | undefined;
  private periodicTimer: NodeJS.Timeout | undefined;
  private lastSent = 0;
  private stopped = false;
  private readonly onConnect = (e: CustomEvent<PeerId>) => {
    if (e.detail.toString() === this.o.manager) this.changed();
  };

  constructor(private readonly o: OwnerReportOptions) {}

  start(): void {
    this.o.libp2p.addEventListener('peer:connect', this.onConnect);
    this.changed();
    if (this.o.periodic !== undefined) {
      const every = this.o.everyMs ?? 60_000;
      // Checked at a quarter of the gap: a report sent for a change meanwhile counts as this one.
      this.periodicTimer = setInterval(() => {
        if (this.o.periodic!() && performance.now() - this.lastSent >= every) this.changed();
      }, Math.max(250, every / 4));
      this.periodicTimer.unref();
    }
  }

  stop(): void {
    this.stopped = true;
    this.o.libp2p.removeEventListener('peer:connect', this.onConnect);
    if (this.retry !== undefined) clearTimeout(this.retry);
    if (this.periodicTimer !== undefined) clearInterval(this.periodicTimer);
  }

  /** The state changed (or the manager is back): report it. */
  changed(): void {
    if (this.stopped) return;
    if (this.sending) {
      this.again = true;
      return;
    }
    void this.send();
  }

  private async send(): Promise<void> {
    this.sending = true;
    const report = this.o.state();
    this.lastSent = performance.now();
    try {
      const { config, pullForMs } = await reportState(this.o.libp2p, this.o.manager, report);
      this.o.log.debug({ state: report.state, reasons: report.reasons, pullForMs }, 'state reported to the manager');
      this.o.onConfig(config);
      if (pullForMs > 0) this.o.onPullAdvice?.(pullForMs);
    } catch (err) {
      this.o.log.debug({ err: String(err) }, 'could not report the state to the manager');
      // Not connected: the next connection reports. Connected: try again later.
      if (!this.stopped && this.o.libp2p.getConnections().some((c) => c.remotePeer.toString() === this.o.manager)) {
        if (this.retry !== undefined) clearTimeout(this.retry);
        this.retry = setTimeout(() => this.changed(), this.o.retryMs ?? 10_000);
        this.retry.unref();
      }
    } finally {
      this.sending = false;
      if (this.again) {
        this.again = false;
        this.changed();
      }
    }
  }
}
