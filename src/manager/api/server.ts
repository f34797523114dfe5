// The operator HTTP API's server: node:http, JSON in and out, bound to
// 127.0.0.1 by default. A request is matched against the route table
// (routes.ts, and the dashboard's when it is served), passes the guard
// (guard.ts: Host, same origin, bearer token, Content-Type), then its handler
// runs; an error answers {"error": "..."} with errors.ts's status. See
// docs/manager.md for the reference.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpError, statusOf } from '../errors.js';
import { dashboardRoutes } from '../dashboard/serve.js';
import type { Sampler } from '../dashboard/sampler.js';
import { isLoopback, type ApiAuth } from './auth.js';
import { checkContentType, checkSameOrigin, checkToken, hostChecker, type Rejection } from './guard.js';
import { createMetrics } from './metrics.js';
import { apiRoutes, type ApiContext } from './routes.js';
import { RouteTable, type Match } from './router.js';

export interface ServerContext extends ApiContext {
  /** The dashboard's time series; absent → no dashboard. */
  sampler?: Sampler | null;
}

/** What the server checks before a handler runs; see guard.ts. */
interface Guard {
  host: (host: string | undefined) => Rejection | null;
  token: string | null;
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store', ...headers });
  res.end(text);
}

/** The route table of this server: the API, /metrics and (with a sampler) the dashboard. */
function routeTable(ctx: ServerContext): RouteTable {
  const metrics = createMetrics(ctx);
  return new RouteTable([
    ...apiRoutes(ctx),
    {
      method: 'GET',
      path: '/metrics',
      async handle({ res }) {
        const text = await metrics.scrape();
        res.writeHead(200, { 'content-type': metrics.contentType, 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
        res.end(text);
        return 'sent';
      },
    },
    ...(ctx.sampler ? dashboardRoutes(ctx.sampler) : []),
  ]);
}

async function handle(table: RouteTable, guard: Guard, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const u = new URL(req.url ?? '/', 'http://localhost');
  const path = u.pathname.replace(/\/+$/, '') || '/';
  const method = req.method ?? 'GET';
  let match: Match | null = null;
  let unrouted: unknown = null;
  try {
    match = table.match(method, path.split('/').filter((p) => p !== '').map((p) => decodeURIComponent(p)), path);
  } catch (err) {
    unrouted = err; // answered after the guard: an unknown path is no reason to skip the token check
  }
  // Nothing has been read or changed yet.
  const r =
    guard.host(req.headers.host) ??
    checkSameOrigin(method, req.headers) ??
    (match?.route.public === true ? null : checkToken(guard.token, req.headers.authorization)) ??
    checkContentType(method, req.headers['content-type'], match?.route.bodyTypes);
  if (r !== null) throw new HttpError(r.status, r.error, r.headers);
  if (match === null) throw unrouted;
  const out = await match.route.handle({ req, res, params: match.params, query: u.searchParams });
  if (out !== 'sent') send(res, out.status, out.body, out.headers);
}

export interface ApiServer {
  server: Server;
  url: string;
  /** The token every data request needs, or null (loopback, zero-config). */
  auth: ApiAuth | null;
  close(): Promise<void>;
}

export interface ApiOptions {
  port: number;
  host?: string;
  auth?: ApiAuth | null;
  /** More Host names to answer to (--allowed-host): "name" (any port) or "name:port". */
  allowedHosts?: readonly string[];
}

export async function startApi(ctx: ServerContext, opts: ApiOptions): Promise<ApiServer> {
  const auth = opts.auth ?? null;
  const server = createServer();
  server.headersTimeout = 10_000;
  server.requestTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  const a = server.address() as AddressInfo;
  if (auth === null && !isLoopback(a.address)) {
    // Fail closed: whoever reaches this address could change every channel.
    await close();
    throw new Error(`refusing to serve the operator API on ${a.address} without a token`);
  }
  let guard: Guard;
  try {
    guard = { host: hostChecker(a.address, a.port, opts.allowedHosts), token: auth?.token ?? null };
  } catch (err) {
    await close();
    throw err;
  }
  const table = routeTable(ctx);
  // Routed only now that the bound port, hence the Host check, is known.
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    handle(table, guard, req, res).catch((err: unknown) => {
      const status = statusOf(err);
      if (status === 500) ctx.manager.log.error({ err: String(err), url: req.url }, 'API error');
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const headers = err instanceof HttpError ? { ...err.headers } : {};
      if (status === 413) headers.connection = 'close';
      send(res, status, { error: status === 500 ? `internal error: ${(err as Error).message}` : (err as Error).message }, headers);
    });
  });
  const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
  return { server, url: `http://${host}:${a.port}`, auth, close };
}
