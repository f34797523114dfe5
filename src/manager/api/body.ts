// Request bodies and query parameters, bounded and checked: a body over
// MAX_BODY_BYTES is refused with 413 (declared or streamed), malformed JSON and
// bad parameters with 400, before anything is changed.
import type { IncomingMessage } from 'node:http';
import { HttpError } from '../errors.js';

export const MAX_BODY_BYTES = 1024 * 1024;

/** Reads the body up to MAX_BODY_BYTES; HttpError(413) beyond. */
export async function readBody(req: IncomingMessage): Promise<string> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) throw new HttpError(413, `body larger than ${MAX_BODY_BYTES} bytes`);
  const chunks: Buffer[] = [];
  let n = 0;
  let over = false;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    n += chunk.length;
    if (n > MAX_BODY_BYTES) {
      over = true;
      if (n > 8 * MAX_BODY_BYTES) break; // stop draining a flood; the connection is closed after the answer
      continue;
    }
    chunks.push(chunk);
  }
  if (over) throw new HttpError(413, `body larger than ${MAX_BODY_BYTES} bytes`);
  return Buffer.concat(chunks).toString('utf8');
}

export async function readJson(req: IncomingMessage): Promise<unknown> {
  const text = await readBody(req);
  if (text.trim() === '') throw new HttpError(400, 'empty body: expected JSON');
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new HttpError(400, `malformed JSON: ${(err as Error).message}`);
  }
}

export function objectBody(v: unknown): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new HttpError(400, 'expected a JSON object');
  return v as Record<string, unknown>;
}

/** An integer query parameter in 1..max, `def` when absent. */
export function intParam(q: URLSearchParams, name: string, def: number, max: number): number {
  const v = q.get(name);
  if (v === null) return def;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new HttpError(400, `${name} must be an integer in 1..${max}`);
  return n;
}

/** A query parameter that must be one of `allowed` (or absent: null). */
export function enumParam<T extends string>(q: URLSearchParams, name: string, allowed: readonly T[], message: string): T | null {
  const v = q.get(name);
  if (v === null) return null;
  if (!(allowed as readonly string[]).includes(v)) throw new HttpError(400, message);
  return v as T;
}
