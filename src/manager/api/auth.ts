// The operator API's bearer token. On loopback the API stays zero-config (only
// local processes reach it, and api-guard.ts keeps web pages out); as soon as it
// listens anywhere else, or the operator asks for it, every request for data
// needs `Authorization: Bearer <token>`. The token comes from --api-token /
// VOLCRAWL_API_TOKEN, or is generated once into <data-dir>/api-token (0600).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { ApiTokenError } from '../errors.js';

export const TOKEN_FILE = 'api-token';
export const TOKEN_ENV = 'VOLCRAWL_API_TOKEN';
// Visible ASCII only, so the token fits an HTTP header and a URL fragment
// unchanged; 16 characters at least, so a hand-picked one is not guessable.
const TOKEN_RE = /^[\x21-\x7e]{16,512}$/;

export interface ApiAuth {
  token: string;
  /** Where the token was read from: a file path, or null for --api-token / VOLCRAWL_API_TOKEN. */
  file: string | null;
}

/** True for an address or name that only this machine can reach. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  const v4 = h.startsWith('::ffff:') ? h.slice(7) : h;
  return isIP(v4) === 4 && v4.startsWith('127.');
}

/** The token to require, or null when the API needs none (loopback, no token configured). */
export async function resolveApiAuth(o: { dataDir: string; httpHost: string; apiToken?: string | undefined; requireToken?: boolean | undefined }): Promise<ApiAuth | null> {
  if (o.apiToken !== undefined) {
    if (!TOKEN_RE.test(o.apiToken)) throw new ApiTokenError(`--api-token / ${TOKEN_ENV}: expected 16 to 512 visible ASCII characters (no spaces)`);
    return { token: o.apiToken, file: null };
  }
  if (o.requireToken !== true && isLoopback(o.httpHost)) return null;
  return { token: await loadOrCreateToken(o.dataDir), file: join(o.dataDir, TOKEN_FILE) };
}

async function loadOrCreateToken(dataDir: string): Promise<string> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, TOKEN_FILE);
  const token = randomBytes(32).toString('base64url');
  try {
    await writeFile(path, token + '\n', { mode: 0o600, flag: 'wx' });
    return token;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  // Kept from an earlier start (or written by the operator): tighten its mode as
  // the identity key's loader does, and check it is usable in a header.
  if (process.platform !== 'win32' && ((await stat(path)).mode & 0o077) !== 0) await chmod(path, 0o600);
  const kept = (await readFile(path, 'utf8')).trim();
  if (!TOKEN_RE.test(kept)) throw new ApiTokenError(`${path}: expected 16 to 512 visible ASCII characters (no spaces); delete the file to generate a new token`);
  return kept;
}

/** Constant-time check of an Authorization header against the token. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer[ ]+(\S+)[ ]*$/i.exec(header ?? '');
  if (!m) return false;
  // Hash both sides so the comparison has a fixed length and leaks nothing about it.
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(m[1]!), digest(token));
}

/** The startup message's lines for the API and the dashboard. */
export function apiBanner(url: string, auth: ApiAuth | null): string {
  if (auth === null) return `  operator API ${url} (try: curl ${url}/api/status)\n  dashboard ${url}/dashboard\n`;
  const ref = auth.file !== null ? `$(cat '${auth.file.replaceAll("'", "'\\''")}')` : `$${TOKEN_ENV}`;
  return (
    `  operator API ${url} (bearer token required, from ${auth.file ?? `--api-token / ${TOKEN_ENV}`})\n` +
    `    try: curl -H "Authorization: Bearer ${ref}" ${url}/api/status\n` +
    `  dashboard ${url}/dashboard#token=${encodeURIComponent(auth.token)}\n`
  );
}
