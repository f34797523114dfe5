import { describe, expect, it } from 'vitest';
import { checkFilterPattern, parseTask, TaskValidationError } from '../../src/crawler/task.js';

const base = {
  id: 'task-1',
  scope: { origin: 'http://example.com', pathPrefixes: ['/blog/'] },
  seeds: ['http://example.com/blog/'],
  maxDepth: 3,
  deadline: Date.now() + 60_000,
};

function reason(json: unknown): string {
  try {
    parseTask(json);
  } catch (err) {
    expect(err).toBeInstanceOf(TaskValidationError);
    return (err as TaskValidationError).reason;
  }
  throw new Error('task was accepted');
}

describe('parseTask', () => {
  it('accepts a valid task and fills defaults', () => {
    const t = parseTask(base);
    expect(t.scope).toEqual({ origin: 'http://example.com', pathPrefixes: ['/blog/'] });
    expect(t.filters).toEqual([]);
    expect(t.maxPages).toBe(10_000);
    expect(t.delayMs).toBe(1000);
    expect(t.known).toEqual([]);
  });

  it('normalises seeds (fragment dropped, duplicates merged)', () => {
    const t = parseTask({ ...base, seeds: ['http://EXAMPLE.com/blog/#x', 'http://example.com/blog/'] });
    expect(t.seeds).toEqual(['http://example.com/blog/']);
  });

  it.each([
    ['not an object', 42, 'task'],
    ['missing id', { ...base, id: undefined }, 'id'],
    ['bad id characters', { ...base, id: 'a b' }, 'id'],
    ['no seeds', { ...base, seeds: [] }, 'seeds'],
    ['ftp seed', { ...base, seeds: ['ftp://example.com/blog/'] }, 'scheme'],
    ['javascript seed', { ...base, seeds: ['javascript:alert(1)'] }, 'scheme'],
    ['seed outside scope', { ...base, seeds: ['http://example.com/shop/'] }, 'outside the channel'],
    ['seed on another host', { ...base, seeds: ['http://other.com/blog/'] }, 'outside the channel'],
    ['credentials', { ...base, seeds: ['http://u:p@example.com/blog/'] }, 'credentials'],
    ['origin with path', { ...base, scope: { origin: 'http://example.com/blog/' } }, 'scope.pathPrefixes'],
    ['origin scheme', { ...base, scope: { origin: 'file:///etc' } }, 'scheme'],
    ['prefix without slash', { ...base, scope: { origin: 'http://example.com', pathPrefixes: ['blog'] } }, "start with '/'"],
    ['negative depth', { ...base, maxDepth: -1 }, 'maxDepth'],
    ['fractional depth', { ...base, maxDepth: 1.5 }, 'maxDepth'],
    ['huge page cap', { ...base, maxPages: 1e9 }, 'maxPages'],
    ['digest out of range', { ...base, pageDigests: [2 ** 32] }, 'pageDigests'],
    ['digest not a number', { ...base, interSiteDigests: ['abc'] }, 'interSiteDigests'],
    ['too long URL', { ...base, seeds: ['http://example.com/blog/' + 'a'.repeat(3000)] }, 'seeds'],
    ['filter does not compile', { ...base, filters: ['(unclosed'] }, 'does not compile'],
    ['missing deadline', { ...base, deadline: undefined }, 'deadline'],
    ['known page outside scope', { ...base, known: [{ url: 'http://example.com/x' }] }, 'known.0.url'],
  ])('rejects %s with a reason', (_name, json, fragment) => {
    expect(reason(json)).toContain(fragment);
  });

  it('rejects catastrophic-backtracking filters at validation, quickly', () => {
    const t0 = performance.now();
    for (const p of ['(a+)+$', '^(a|a)*$', '(x+x+)+y', '^(([a-z])+.)+[A-Z]([a-z])+$', '(\\w+\\d*)+$']) {
      expect(reason({ ...base, filters: [p] })).toMatch(/catastrophic backtracking/);
    }
    // Bounded check time: nowhere near a hang (generous bound, not a timing test).
    expect(performance.now() - t0).toBeLessThan(30_000);
  });

  it('accepts ordinary URL filters', () => {
    for (const p of ['^http://example\\.com/blog/\\d+\\.html$', '/blog/', '\\.html?$', '.*foo.*']) {
      expect(checkFilterPattern(p)).toBeNull();
    }
  });
});
