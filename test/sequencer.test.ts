// The slow-first file order (test/sequencer.ts) names files that exist: a
// renamed or split slow file would otherwise drop silently to the back of the
// queue, and the suite's wall time would grow with nothing failing.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SLOW_FIRST } from './sequencer.js';

const ROOT = resolve(import.meta.dirname, '..');

describe('slow-first test order', () => {
  it('lists existing test files, each once', () => {
    expect(SLOW_FIRST.filter((f) => !existsSync(resolve(ROOT, f)) || !f.endsWith('.test.ts'))).toEqual([]);
    expect(new Set(SLOW_FIRST).size).toBe(SLOW_FIRST.length);
  });
});
