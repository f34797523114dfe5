// Request checks in front of the operator API and dashboard, against the web
// pages the operator visits: a DNS-rebinding page (its own name resolving to
// this server) is refused by the Host check; a cross-site form or fetch that
// would change something is refused by the Origin / Sec-Fetch-Site check and,
// failing that, by the Content-Type check (a browser sends application/json
// cross-origin only after a CORS preflight, which this server never grants).
// Each check returns null or the rejection to send; none reads the body.
import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import { InvalidArgumentError } from 'commander';
import { bearerMatches } from './auth.js';

export interface Rejection {
  status: number;
  error: string;
  headers?: Record<string, string>;
}

/** Methods that may change state: everything but GET, HEAD and OPTIONS. */
export function isUnsafe(method: string): boolean {
  return method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS';
}

/** Splits a Host header into a lowercase name (IPv6 without brackets) and port; null if malformed. */
function parseHost(value: string): { name: string; port: number } | null {
  // A host name (RFC 1123 letters, digits, hyphens, dots; '_' as some resolvers allow) or a bracketed IPv6 literal.
  const m = /^(\[[0-9a-f:.]+\]|[a-z0-9._-]+)(?::(\d{1,5}))?$/i.exec(value.trim());
  if (!m) return null;
  return { name: m[1]!.replace(/^\[(.*)\]$/, '$1').toLowerCase(), port: m[2] !== undefined ? Number(m[2]) : 80 };
}

/**
 * Which Host headers the server answers to. Always the loopback names and the
 * bound address, with the server's port. Bound to a wildcard address (0.0.0.0,
 * ::), any IP literal with the port too: the server answers on every address of
 * the machine, and rebinding needs a name, never a literal. `extra` names are
 * the operator's (--allowed-host): "name" matches any port (behind a reverse
 * proxy the public port differs), "name:port" only that port.
 */
/** Option parser for --allowed-host: "name" or "name:port", checked as a Host header would be. */
export function allowedHostArg(v: string, prev: string[] = []): string[] {
  if (parseHost(v) === null) throw new InvalidArgumentError(`expected a host name or name:port (got ${JSON.stringify(v)})`);
  return [...prev, v];
}

export function hostChecker(bound: string, port: number, extra: readonly string[] = []): (host: string | undefined) => Rejection | null {
  const wildcard = bound === '0.0.0.0' || bound === '::';
  const exact = new Set(['localhost', '127.0.0.1', '::1', bound.toLowerCase()].map((n) => `${n} ${port}`));
  const anyPort = new Set<string>();
  for (const e of extra) {
    const p = parseHost(e);
    if (p === null) throw new Error(`--allowed-host ${JSON.stringify(e)}: expected a host name or name:port`);
    if (/:\d+$/.test(e.trim())) exact.add(`${p.name} ${p.port}`);
    else anyPort.add(p.name);
  }
  return (host) => {
    const p = host === undefined ? null : parseHost(host);
    if (p !== null && (exact.has(`${p.name} ${p.port}`) || anyPort.has(p.name) || (wildcard && p.port === port && isIP(p.name) !== 0))) return null;
    return {
      status: 421,
      error: `Host ${JSON.stringify(host ?? '')} is not this server's address: use http://127.0.0.1:${port} (or the address it is bound to), or start serve with --allowed-host <name> to accept another name (this check stops DNS-rebinding pages)`,
    };
  };
}

/** Refuses a state-changing request sent from another origin (a page the operator visits). */
export function checkSameOrigin(method: string, headers: IncomingHttpHeaders): Rejection | null {
  if (!isUnsafe(method)) return null;
  const site = headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    return { status: 403, error: `cross-site request refused (Sec-Fetch-Site: ${site}): change channels from the dashboard or a command-line client` };
  }
  const origin = headers.origin;
  if (origin === undefined) return null;
  let authority: string | null = null;
  try {
    const u = new URL(origin);
    // Compare authorities only: behind a TLS reverse proxy the page is https.
    if (u.protocol === 'http:' || u.protocol === 'https:') authority = u.host;
  } catch {
    // "null" (sandboxed frames, file: pages) and garbage: never this server
  }
  if (authority === null || authority !== (headers.host ?? '').toLowerCase()) {
    return { status: 403, error: `cross-origin request refused (Origin: ${origin}): change channels from the dashboard or a command-line client` };
  }
  return null;
}

/** Requires `Authorization: Bearer <token>` when a token is set. */
export function checkToken(token: string | null, authorization: string | undefined): Rejection | null {
  if (token === null || bearerMatches(authorization, token)) return null;
  const missing = authorization === undefined;
  return {
    status: 401,
    error: missing
      ? "this API requires a token: send 'Authorization: Bearer <token>' (dht-manager serve prints where the token is)"
      : 'wrong API token',
    headers: { 'www-authenticate': missing ? 'Bearer realm="volcrawl manager"' : 'Bearer realm="volcrawl manager", error="invalid_token"' },
  };
}

/** The media type of a Content-Type header, lowercase, without parameters. */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

/**
 * Requires a state-changing request to declare a JSON body (or one of `also`,
 * an endpoint's other type). HTML forms and "simple" cross-origin fetches can
 * only send text/plain, form-urlencoded or multipart without a preflight.
 */
export function checkContentType(method: string, contentType: string | undefined, also: readonly string[] = []): Rejection | null {
  if (!isUnsafe(method)) return null;
  // A DELETE without a body is not something a form or a simple request can send
  // cross-origin (the method alone forces a preflight), so plain `curl -X DELETE` works.
  if (method === 'DELETE' && contentType === undefined) return null;
  const type = mediaType(contentType);
  if (type === 'application/json' || also.includes(type)) return null;
  const wanted = ['application/json', ...also].join(' or ');
  return {
    status: 415,
    error: `${method} needs Content-Type: ${wanted}${contentType === undefined ? ' (none sent)' : ` (got ${JSON.stringify(contentType)})`}; other types are refused so that web pages cannot submit to this API`,
  };
}
