import { describe, expect, it } from 'vitest';
import type { PageView } from '../../src/manager/trust/compare.js';
import { extractionDigest, judgeByReferences, sideByReferences, TextReferences, type TextRef } from '../../src/manager/trust/text-refs.js';

const page = (url: string, digest: number, text: string, title = 't'): PageView => ({ url, digest, text, title });
const ref = (volunteer: string, p: PageView): TextRef => ({ volunteer, taskId: `t-${volunteer}`, at: 0, extraction: extractionDigest(p) });

describe('text references: one body, one extraction', () => {
  it('keeps the extraction of each page body by volunteer, newest first, one per volunteer, and finds the eligible ones', () => {
    const refs = new TextReferences();
    refs.add('c', { volunteer: 'A', taskId: 'a1', receivedAt: 1, pages: [page('u0', 10, 'hello'), page('u1', 11, 'world')] });
    refs.add('c', { volunteer: 'B', taskId: 'b1', receivedAt: 2, pages: [page('u0', 10, 'hello')] });
    refs.add('c', { volunteer: 'A', taskId: 'a2', receivedAt: 3, pages: [page('u0', 10, 'hello')] });
    expect(refs.find('c', 'u0', 10, () => true).map((r) => r.taskId)).toEqual(['a2', 'b1']);
    expect(refs.find('c', 'u0', 10, (v) => v !== 'A').map((r) => r.volunteer)).toEqual(['B']);
    // Another body of the same URL, another channel: nothing.
    expect(refs.find('c', 'u0', 99, () => true)).toEqual([]);
    expect(refs.find('d', 'u0', 10, () => true)).toEqual([]);
  });

  it('keeps nothing when no rule reads the references (the default: both rules off)', () => {
    const refs = new TextReferences(false);
    refs.add('c', { volunteer: 'A', taskId: 'a1', receivedAt: 1, pages: [page('u0', 10, 'hello')] });
    expect(refs.channels).toBe(0);
    expect(refs.find('c', 'u0', 10, () => true)).toEqual([]);
  });

  it('the extraction covers text (normalised), title and noindex', () => {
    const p = page('u', 1, 'a  b', 'T');
    expect(extractionDigest(p)).toBe(extractionDigest(page('u', 1, 'a b', 'T')));
    expect(extractionDigest(p)).not.toBe(extractionDigest(page('u', 1, 'a b', 'U')));
    expect(extractionDigest(p)).not.toBe(extractionDigest({ ...p, noindex: true }));
    expect(extractionDigest(p)).not.toBe(extractionDigest(page('u', 1, 'a B', 'T')));
  });

  it('an intro passes only when every page with text is matched and none contradicted', () => {
    const honest = [page('u0', 1, 'one'), page('u1', 2, 'two')];
    const stored = new Map(honest.map((p) => [p.url, [ref('V', p)]]));
    const of = (p: PageView) => stored.get(p.url) ?? [];
    expect(judgeByReferences(honest, of)).toMatchObject({ verdict: 'agree', matched: 2, by: ['V'] });
    // A page nobody else saw in that body: nothing is said of it, so no pass.
    expect(judgeByReferences([...honest, page('u2', 3, 'three')], of)).toMatchObject({ verdict: 'incomplete', unreferenced: 1 });
    // A forged page under the true digest, beside a true one: contradicted, never a pass.
    expect(judgeByReferences([honest[0]!, page('u1', 2, 'SPAM')], of)).toMatchObject({ verdict: 'contradicted', contradicted: ['u1'] });
    expect(judgeByReferences([], of).verdict).toBe('incomplete');
  });

  it('a contradiction is settled for the side every reference matches, and not when they are split or say a third thing', () => {
    const truth = [page('u0', 1, 'one'), page('u1', 2, 'two')];
    const forged = truth.map((p) => ({ ...p, text: 'SPAM' }));
    const refsTrue = (p: PageView) => [ref('W', truth.find((x) => x.url === p.url)!)];
    expect(sideByReferences(['u0', 'u1'], forged, truth, refsTrue)).toMatchObject({ odd: 'a', pages: 2, by: ['W'] });
    expect(sideByReferences(['u0', 'u1'], truth, forged, refsTrue)).toMatchObject({ odd: 'b' });
    const split = (p: PageView) => [ref('W', truth.find((x) => x.url === p.url)!), ref('X', { ...p, text: 'SPAM' })];
    expect(sideByReferences(['u0'], forged, truth, split)).toBeNull();
    expect(sideByReferences(['u0'], forged, truth, (p) => [ref('W', { ...p, text: 'other' })])).toBeNull();
    expect(sideByReferences(['u0'], forged, truth, () => [])).toBeNull();
  });
});
