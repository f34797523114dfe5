// A check run again and again off the event loop's keep-alive: every
// `checkMs` while it reports all is well (or that it mended what was wrong),
// and after a gap that doubles up to `maxBackoffMs` while its repairs fail —
// so a cut-off node does not bury its peers in dials. The peer keeper
// (peer-keeper.ts) and the manager link (src/node/manager-link.ts) run on it.
export class BackoffLoop {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private active = false;
  private gap: number;

  /** `step` resolves true when all is well or mended, false when its repair failed. */
  constructor(
    private readonly step: () => Promise<boolean>,
    private readonly checkMs: number,
    private readonly maxBackoffMs: number,
  ) {
    this.gap = checkMs;
  }

  /** Between start() and stop(). */
  get running(): boolean {
    return this.active;
  }

  start(): void {
    this.active = true;
    this.schedule(this.checkMs);
  }

  stop(): void {
    this.active = false;
    if (this.timer !== undefined) clearTimeout(this.timer);
  }

  private schedule(ms: number): void {
    if (!this.active) return;
    this.timer = setTimeout(() => void this.tick(), ms);
    this.timer.unref?.();
  }

  private async tick(): Promise<void> {
    const ok = await this.step().catch(() => false);
    this.gap = ok ? this.checkMs : Math.min(this.maxBackoffMs, this.gap * 2);
    this.schedule(this.gap);
  }
}
