// The order in which `sim run --jobs N` hands strategies to its workers: the
// costliest first, every strategy exactly once (the report's order is
// STRATEGIES' either way: identity.test.ts runs all four on two workers).
import { describe, expect, it } from 'vitest';
import { STRATEGIES } from '../../src/recrawl/index.js';
import { DISPATCH_ORDER, dispatchOrder } from '../../sim/run-parallel.js';

describe('dispatchOrder', () => {
  it('lists every strategy exactly once for each scenario', () => {
    for (const scenario of ['rec', 'ruc'] as const) {
      expect([...DISPATCH_ORDER[scenario]].sort()).toEqual([...STRATEGIES].sort());
      expect(dispatchOrder(scenario, STRATEGIES)).toEqual(DISPATCH_ORDER[scenario]);
    }
  });

  it('starts the strategy with the most tasks first: CAF under ruc, FIXED under rec', () => {
    expect(dispatchOrder('ruc', ['fixed', 'iir', 'icr', 'caf'])).toEqual(['caf', 'iir', 'icr', 'fixed']);
    expect(dispatchOrder('rec', ['fixed', 'iir', 'icr', 'caf'])).toEqual(['fixed', 'icr', 'caf', 'iir']);
  });

  it('keeps a subset in the same relative order and leaves its argument alone', () => {
    const todo = ['fixed', 'caf'] as const;
    expect(dispatchOrder('ruc', todo)).toEqual(['caf', 'fixed']);
    expect(dispatchOrder('rec', todo)).toEqual(['fixed', 'caf']);
    expect(todo).toEqual(['fixed', 'caf']);
  });
});
