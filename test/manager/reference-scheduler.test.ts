// The reference scheduler (reference-scheduler.ts, the in-memory model the disk-backed
// scheduler is checked against) where it goes beyond src/recrawl: a channel moved
// between priority groups.
import { describe, expect, it } from 'vitest';
import { MINUTE } from '../../src/manager/domain/scheduler.js';
import { ReferenceScheduler as Scheduler } from './reference-scheduler.js';

describe('scheduler', () => {
  it("a channel moved to another group starts the IIR window afresh there: its old group's update gaps do not set the new group's interval", () => {
    const s = new Scheduler({ recrawl: { minInterval: 0, triggerUpdates: 2, triggerFraction: 0.5 } }, 0);
    s.add('top', 0, 60);
    s.add('moved', 2, 240);
    // 'moved' is recrawled at group 2's 4 h interval three times, then the estimator moves it up.
    let t = 0;
    for (let i = 1; i <= 3; i++) {
      t = i * 240 * MINUTE;
      s.markIssued('moved', `m${i}`, t - 30_000, t + MINUTE);
      s.markSuccess('moved', `m${i}`, t, 1000);
    }
    expect(s.channel('moved').sucCount).toBe(3);
    s.markIssued('moved', 'm4', t + 1000, t + MINUTE); // a task in flight while it moves
    s.setGroup('moved', 0);
    expect(s.channel('moved')).toMatchObject({ group: 0, subCount: 1, sucCount: 0, gapSum: 0 });
    expect(s.state.topCount).toBe(2);
    // In group 0 both channels are updated hourly; the round that follows sets group 0 to
    // about an hour (IIR: mean update gap), not towards the 4 h gaps seen in group 2.
    s.markSuccess('moved', 'm4', t + 60 * MINUTE, 1000);
    for (let i = 1; i <= 3; i++) {
      const at = t + i * 60 * MINUTE;
      s.markIssued('top', `t${i}`, at - 30_000, at + MINUTE);
      s.markSuccess('top', `t${i}`, at, 1000);
      if (i > 1) {
        s.markIssued('moved', `m4.${i}`, at - 30_000, at + MINUTE);
        s.markSuccess('moved', `m4.${i}`, at, 1000);
      }
    }
    const r = s.maybeReassign(t + 3 * 60 * MINUTE + 1);
    expect(r).not.toBeNull();
    // 'top' was never updated before: its first gap runs from the state's start (0).
    const topGaps = (t + 60 * MINUTE) / MINUTE + 60 + 60;
    const movedGaps = 60 + 60 + 60; // from its last update in group 2, then hourly
    expect(r!.intervals[0]).toBeCloseTo(0.6 * ((topGaps / 3 + movedGaps / 3) / 2), 6);
  });
});
