// Text normalisation for comparing two crawls of a page.
//
// The crawler already collapses whitespace in the text it extracts, so two
// honest crawls of the same body give the same text. Normalisation removes
// only what honest crawls of an unchanged page can still disagree on — Unicode
// compatibility forms (NFKC) and whitespace runs — and nothing a forger could
// use: case, punctuation, words and digits all still count. Digits are the one
// volatile part of many pages (clocks, dates, view counters), so they are
// handled apart: `digitOnlyDifferences` says whether two texts differ only in
// a few numbers, which compare.ts treats as neither agreement nor
// disagreement — a forgery that only changes a price or a phone number is
// therefore not caught on that page (docs/trust.md says so), while it is when
// the page's own change history is known to be stable.
import { sha1_32 } from '../../crawler/hash.js';

/** NFKC, every whitespace run (including NBSP, which NFKC maps to a space) as one space, trimmed. */
export function normaliseText(s: string): string {
  return s.normalize('NFKC').replace(/\s+/gu, ' ').trim();
}

/** 32-bit SHA-1 of the normalised text: what a manager stores to compare a later crawl without the text. */
export function textDigest(s: string): number {
  return sha1_32(normaliseText(s));
}

const DIGITS = /\p{Nd}+/gu;

/**
 * When two normalised texts have the same words except for digit runs, the
 * number of words whose digits differ (0 when the texts are equal); null when
 * they differ in anything else (a word, punctuation, the number of words).
 */
export function digitOnlyDifferences(a: string, b: string): number | null {
  if (a === b) return 0;
  const ta = a.split(' ');
  const tb = b.split(' ');
  if (ta.length !== tb.length) return null;
  let n = 0;
  for (let i = 0; i < ta.length; i++) {
    const x = ta[i]!;
    const y = tb[i]!;
    if (x === y) continue;
    if (x.replace(DIGITS, '#') !== y.replace(DIGITS, '#')) return null;
    n++;
  }
  return n;
}

/** Shorter over longer length (1 when both are empty): the "length band" of two versions. */
export function lengthRatio(a: number, b: number): number {
  const hi = Math.max(a, b);
  return hi === 0 ? 1 : Math.min(a, b) / hi;
}
