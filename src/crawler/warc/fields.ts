// WARC named fields (WARC 1.1 §4): the one sanitiser every field value we write
// goes through, the WARC-Date form and record ids. A field value is TEXT: no
// control characters and no line breaks, or a crafted page title or ETag could
// end the field and start a forged one ("…\r\nWARC-Type: response").
import { randomUUID } from 'node:crypto';

/** C0 controls (CR, LF, TAB, NUL, ESC …), DEL, and the characters that some
 * readers split lines on (NEL, LINE and PARAGRAPH SEPARATOR). */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f\u0085\u2028\u2029]/;
// eslint-disable-next-line no-control-regex -- as above
const UNSAFE_RUNS = /[\u0000-\u001f\u007f\u0085\u2028\u2029]+/g;

/** Longest value written (a field is one line; 8 KiB holds any URL we crawl). */
export const MAX_FIELD_CHARS = 8192;

/** A field value as written: unsafe characters become one space, ends trimmed, bounded. */
export function fieldValue(v: string | number): string {
  let s = typeof v === 'number' ? String(v) : v;
  if (UNSAFE.test(s)) s = s.replace(UNSAFE_RUNS, ' ');
  if (s.length > MAX_FIELD_CHARS) s = s.slice(0, MAX_FIELD_CHARS);
  return s.trim();
}

/** A named field, its value sanitised. */
export type WarcField = [name: string, value: string];

export function field(name: string, value: string | number): WarcField {
  return [name, fieldValue(value)];
}

/** WARC-Date: UTC to the second (W3C-ISO8601 as WARC/1.0 readers expect it; 1.1
 * allows a fraction, which some replay indexes do not parse). */
export function warcDate(ms: number): string {
  const iso = new Date(ms).toISOString();
  return iso.slice(0, 19) + 'Z';
}

/** The 14-digit timestamp CDX(J) indexes and replay URLs use. */
export function timestamp14(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace(/[-:T]/g, '');
}

export function recordId(): string {
  return `<urn:uuid:${randomUUID()}>`;
}

/** An application/warc-fields block (warcinfo, metadata): "name: value" lines. */
export function warcFieldsBlock(fields: Record<string, string | number | undefined>): Buffer {
  let s = '';
  for (const k in fields) {
    const v = fields[k];
    if (v !== undefined) s += `${k}: ${fieldValue(v)}\r\n`;
  }
  return Buffer.from(s, 'utf8');
}
