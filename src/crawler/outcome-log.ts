// The outcomes of a task besides its pages: a count per outcome and the first
// errors with their detail (what the final part of the result reports). One
// object that the frontier, the fetch loop and the response handling all count
// into, so a task's outcomes are kept in one place whoever meets them.
import type { Outcome, TaskResult } from './task.js';

/** Errors kept with their URL and detail; later ones are only counted. */
const MAX_ERRORS = 100;
/** Longest detail kept per error (a server's message can be anything). */
const MAX_DETAIL_CHARS = 500;

export class OutcomeLog {
  readonly outcomes: Partial<Record<Outcome, number>> = {};
  readonly errors: TaskResult['errors'] = [];

  count(o: Outcome, n = 1): void {
    this.outcomes[o] = (this.outcomes[o] ?? 0) + n;
  }

  /** Counts the outcome and keeps the URL and detail while there is room. */
  fail(url: string, outcome: Outcome, detail?: string): void {
    this.count(outcome);
    if (this.errors.length < MAX_ERRORS) this.errors.push(detail ? { url, outcome, detail: detail.slice(0, MAX_DETAIL_CHARS) } : { url, outcome });
  }
}
