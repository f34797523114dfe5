// A run's and a sweep's JSON record every recrawl option that shaped them
// (issue 12: CAF's options were missing from `sim run --json`), defaults filled
// in, and a set option changes the run it names.
import { describe, expect, it } from 'vitest';
import { DEFAULT_RECRAWL_OPTIONS } from '../../src/recrawl/index.js';
import { jsonSummary, markdown } from '../../sim/report.js';
import { runScenario } from '../../sim/run.js';
import { runSweep } from '../../sim/sweep.js';

describe('the recrawl options a run or a sweep ran with', () => {
  it('sim run: every option, CAF’s as set, the rest at their defaults; the option moved the run', () => {
    const params = { scenario: 'rec', strategies: ['caf'], routing: 'coord', seed: 1, quick: true, steps: 1200 } as const;
    const set = runScenario({ ...params, strategies: ['caf'], recrawl: { cafCostExponent: 0.5, cafMaxQueue: 0.3 } });
    const plain = runScenario({ ...params, strategies: ['caf'] });
    const j = jsonSummary(set) as { recrawl: Record<string, unknown> };
    const { strategy: _s, icrEncourage: _i, ...defaults } = DEFAULT_RECRAWL_OPTIONS;
    expect(j.recrawl).toEqual({ ...defaults, icrEncourage: 'group', cafCostExponent: 0.5, cafMaxQueue: 0.3 });
    expect(j.recrawl).not.toHaveProperty('strategy');
    expect((jsonSummary(plain) as { recrawl: Record<string, unknown> }).recrawl).toEqual({ ...defaults, icrEncourage: 'group' });
    // What the record says is what ran: the two runs differ.
    expect(set.strategies.caf!.tasksTotal).not.toBe(plain.strategies.caf!.tasksTotal);
    // The Markdown names CAF's settings too.
    expect(markdown(set)).toMatch(/CAF: cost exponent 0\.5, max queue 0\.3, wait intervals 2/);
  });

  it('sim sweep: the same record, and the bound after departures beside each point’s bound', async () => {
    const r = await runSweep({ crawlers: [60], strategies: ['fixed', 'caf'], steps: 1200, seed: 1, routing: 'coord', recrawl: { cafCostExponent: 0.25 } });
    expect(r.recrawl.cafCostExponent).toBe(0.25);
    expect(r.recrawl.cafMaxQueue).toBe(DEFAULT_RECRAWL_OPTIONS.cafMaxQueue);
    const b = r.points[0]!.bounds!;
    expect(b.afterDepartures.updateQualityWeighted).toBeLessThanOrEqual(b.updateQualityWeighted);
    for (const row of r.rows) {
      expect(row.updateQualityWeighted).toBeLessThanOrEqual(b.afterDepartures.updateQualityWeighted + 1e-9);
      expect(row.ofBound!.afterDepartures.updateQualityWeighted).toBeCloseTo(row.updateQualityWeighted / b.afterDepartures.updateQualityWeighted, 12);
    }
  });
});
