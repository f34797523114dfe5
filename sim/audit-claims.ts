// What §4's prose claims beside the tables — the success rates of §4.2 and the queue
// lengths of §4.2/§4.3 — held against the bounds and against the task queue's cap. Apart
// because these check the text, not the tables' arithmetic.
import type { PaperScenario, PaperStrategy } from './paper-tables.js';
import { PAPER_SETUP, PAPER_STRATEGIES, PAPER_TEXT, TABLE_1, TABLE_3 } from './paper-tables.js';
import { verdictOf, type Verdict } from './audit-basis.js';
import { readingBounds, type ReadingId } from './audit-bounds.js';

// ---------------------------------------------------------------- success rates vs the text

export interface SuccessCheck {
  scenario: PaperScenario;
  strategy: PaperStrategy;
  /** What §4.2 says, or null where it says nothing. */
  claim: string | null;
  /** The success rate each reading needs for the published weighted score (uniform success). */
  required: Record<ReadingId, number>;
  /** Rule: "about 30%" holds within ±5 points, "less than 15%" below 15%, no claim: ≤ 100%. */
  consistent: boolean;
}

export function successChecks(): SuccessCheck[] {
  const rb = readingBounds();
  const out: SuccessCheck[] = [];
  for (const sc of ['rec', 'ruc'] as const) {
    for (const s of PAPER_STRATEGIES) {
      const req = (id: ReadingId) => rb.find((x) => x.reading === id && x.scenario === sc && x.strategy === s)!.weighted.required;
      const required = { channels: req('channels'), 'text-steps': req('text-steps'), 'per-group': req('per-group') };
      const values = Object.values(required);
      let claim: string | null;
      let consistent: boolean;
      if (s === 'fixed' && sc === 'rec') {
        claim = `less than ${PAPER_TEXT.successFixedRecBelow * 100}%`;
        consistent = values.some((v) => v < PAPER_TEXT.successFixedRecBelow);
      } else if (s !== 'fixed') {
        claim = `about ${PAPER_TEXT.successIirIcr * 100}%${sc === 'ruc' ? ' ("also true under the case of RUC")' : ''}`;
        consistent = values.some((v) => Math.abs(v - PAPER_TEXT.successIirIcr) <= 0.05);
      } else {
        claim = null;
        consistent = values.some((v) => v <= 1);
      }
      out.push({ scenario: sc, strategy: s, claim, required, consistent });
    }
  }
  return out;
}

// ---------------------------------------------------------------- queues

export interface QueueCheck {
  scenario: PaperScenario;
  strategy: PaperStrategy;
  /** §4.2 / §4.3: queued tasks per crawler at the text's assumed online count. */
  perCrawler: number;
  assumedOnline: number;
  queued: number;
  /** Online crawlers the churn model implies: crawlers × lifetime / (lifetime + rejoin gap). */
  churnOnline: number;
  perCrawlerAtChurnOnline: number;
  cap: number;
  verdict: Verdict;
}

export function queueChecks(): QueueCheck[] {
  const frac = PAPER_SETUP.lifetimeMean / (PAPER_SETUP.lifetimeMean + PAPER_SETUP.rejoinMean);
  const out: QueueCheck[] = [];
  for (const [sc, q, crawlers] of [
    ['rec', PAPER_TEXT.queueRec, TABLE_1.crawlers],
    ['ruc', PAPER_TEXT.queueRuc, TABLE_3.crawlers],
  ] as const) {
    for (const s of PAPER_STRATEGIES) {
      const per = q.perCrawler[s];
      const queued = per * q.assumedOnline;
      const churnOnline = crawlers * frac;
      const atChurn = queued / churnOnline;
      // A crawler queues at most `cap` tasks, whatever the online count.
      out.push({
        scenario: sc,
        strategy: s,
        perCrawler: per,
        assumedOnline: q.assumedOnline,
        queued,
        churnOnline,
        perCrawlerAtChurnOnline: atChurn,
        cap: PAPER_SETUP.queueCap,
        verdict: verdictOf(Math.min(per, atChurn), PAPER_SETUP.queueCap, 0),
      });
    }
  }
  return out;
}

