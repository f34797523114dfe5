// The operator HTTP API: node:http, JSON in and out, bound to 127.0.0.1 by
// default. Every request first passes api-guard.ts (Host, same origin, bearer
// token, Content-Type). Bodies are capped (1 MiB → 413); malformed JSON,
// invalid fields, unsafe filter patterns, unknown channels → 4xx with
// {"error": "..."} and nothing changed. See docs/manager.md for the reference.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConflictError, NotFoundError, type Manager } from './manager.js';
import { ValidationError } from './model.js';
import { K } from './store.js';
import type { ManagerNode } from './network.js';
import { CandidateConflict, CandidateNotFound, type Storage } from './storage.js';
import { handleDashboard, isDashboardAsset } from './dashboard/serve.js';
import { isLoopback, type ApiAuth } from './api-auth.js';
import { checkContentType, checkSameOrigin, checkToken, hostChecker, mediaType, type Rejection } from './api-guard.js';
import type { Sampler } from './dashboard/sampler.js';

export const MAX_BODY_BYTES = 1024 * 1024;

export interface ApiContext {
  manager: Manager;
  storage: Storage;
  node?: ManagerNode | null;
  /** The dashboard's time series (GET /dashboard…); absent → no dashboard. */
  sampler?: Sampler | null;
}

/** What startApi checks before routing; see api-guard.ts. */
export interface Guard {
  host: (host: string | undefined) => Rejection | null;
  token: string | null;
}

/** Endpoints whose body is not JSON by design: the import takes a plain seed list as
 * text/uri-list (one URL a line, # comments), a type no web page can send unasked. */
const OTHER_BODY_TYPES: Record<string, string[]> = { '/api/channels/import': ['text/uri-list'] };

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** Throws the first check that refuses the request; nothing has been read or changed yet. */
function admit(guard: Guard, req: IncomingMessage, path: string, parts: string[]): void {
  const method = req.method ?? 'GET';
  // The dashboard's page, script and style hold no data: the page must load to ask for the token.
  const asset = (method === 'GET' || method === 'HEAD') && isDashboardAsset(parts);
  const r =
    guard.host(req.headers.host) ??
    checkSameOrigin(method, req.headers) ??
    (asset ? null : checkToken(guard.token, req.headers.authorization)) ??
    checkContentType(method, req.headers['content-type'], OTHER_BODY_TYPES[path]);
  if (r !== null) throw new HttpError(r.status, r.error, r.headers);
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, {
    'content-type': typeof body === 'string' ? 'text/plain; version=0.0.4; charset=utf-8' : 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}

/** Reads the body up to MAX_BODY_BYTES; HttpError(413) beyond. */
async function readBody(req: IncomingMessage): Promise<string> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) throw new HttpError(413, `body larger than ${MAX_BODY_BYTES} bytes`);
  const chunks: Buffer[] = [];
  let n = 0;
  let over = false;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    n += chunk.length;
    if (n > MAX_BODY_BYTES) {
      over = true;
      if (n > 8 * MAX_BODY_BYTES) break; // stop draining a flood; the connection is closed below
      continue;
    }
    chunks.push(chunk);
  }
  if (over) throw new HttpError(413, `body larger than ${MAX_BODY_BYTES} bytes`);
  return Buffer.concat(chunks).toString('utf8');
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const text = await readBody(req);
  if (text.trim() === '') throw new HttpError(400, 'empty body: expected JSON');
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new HttpError(400, `malformed JSON: ${(err as Error).message}`);
  }
}

function intParam(u: URL, name: string, def: number, max: number): number {
  const v = u.searchParams.get(name);
  if (v === null) return def;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new HttpError(400, `${name} must be an integer in 1..${max}`);
  return n;
}

function objectBody(v: unknown): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new HttpError(400, 'expected a JSON object');
  return v as Record<string, unknown>;
}

export async function handle(ctx: ApiContext, guard: Guard, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const m = ctx.manager;
  const u = new URL(req.url ?? '/', 'http://localhost');
  const path = u.pathname.replace(/\/+$/, '') || '/';
  const method = req.method ?? 'GET';
  const parts = path.split('/').filter((p) => p !== '').map((p) => decodeURIComponent(p));
  admit(guard, req, path, parts);
  const route = (meth: string, ...segs: (string | null)[]): boolean =>
    method === meth && parts.length === segs.length && segs.every((s, i) => s === null || s === parts[i]);
  const anyMethod = (...segs: (string | null)[]): boolean => parts.length === segs.length && segs.every((s, i) => s === null || s === parts[i]);

  if (ctx.sampler && (parts.length === 0 || parts[0] === 'dashboard') && (method === 'GET' || method === 'HEAD')) {
    if (await handleDashboard(ctx, ctx.sampler, parts, u, res)) return;
  }
  if (route('GET', 'metrics')) return send(res, 200, metrics(ctx));
  if (route('GET', 'api', 'status')) {
    const t = m.taskSummary();
    return send(res, 200, {
      peerId: ctx.node?.peerId ?? null,
      addrs: ctx.node?.multiaddrs() ?? [],
      channels: m.sched.size,
      strategy: m.sched.state.options.strategy,
      rateCap: m.sched.state.options.rateCap,
      tasks: { queued: t.queued, issued: t.issued, running: t.running },
      crawlers: ctx.node?.crawlers().length ?? 0,
      counters: m.counters,
    });
  }
  if (route('GET', 'api', 'channels')) {
    const limit = intParam(u, 'limit', 100, 10_000);
    const after = u.searchParams.get('after') ?? undefined;
    const list = await m.listChannels({ limit, ...(after !== undefined ? { after } : {}) });
    return send(res, 200, { channels: list, next: list.length === limit ? list[list.length - 1]!.id : null });
  }
  if (route('POST', 'api', 'channels')) {
    const ch = await m.addChannel(await readJson(req));
    return send(res, 201, ch, { location: `/api/channels/${ch.id}` });
  }
  if (route('POST', 'api', 'channels', 'import')) {
    let text: string;
    let extra: Record<string, unknown> = {};
    if (mediaType(req.headers['content-type']) === 'application/json') {
      const body = objectBody(await readJson(req));
      if (typeof body.text !== 'string') throw new HttpError(400, 'text: expected the seed list as a string');
      text = body.text;
      if (body.defaults !== undefined) extra = objectBody(body.defaults);
    } else {
      text = await readBody(req);
    }
    const r = await m.importSeedList(text, extra);
    return send(res, 200, { added: r.added.length, ids: r.added.map((c) => c.id), skipped: r.skipped });
  }
  if (route('GET', 'api', 'channels', null)) {
    const id = parts[2]!;
    const ch = await m.getChannel(id);
    const s = m.sched;
    const dueAt = s.dueAt(id);
    return send(res, 200, {
      ...ch,
      schedule: {
        intervalMinutes: s.intervalMs(id) / 60_000,
        dueAt: Number.isFinite(dueAt) ? dueAt : null,
        inFlight: s.inFlight(id),
        updates: s.channel(id).updateTimes.length,
      },
      hostCoord: (await m.store.get(K.hostCoord(ch.host))) ?? null,
      history: await m.history(id),
    });
  }
  if (route('PATCH', 'api', 'channels', null) || route('PUT', 'api', 'channels', null)) {
    const id = parts[2]!;
    await m.getChannel(id);
    return send(res, 200, await m.updateChannel(id, await readJson(req)));
  }
  if (route('DELETE', 'api', 'channels', null)) {
    await m.deleteChannel(parts[2]!);
    return send(res, 200, { deleted: parts[2] });
  }
  if (route('GET', 'api', 'channels', null, 'content')) {
    const limit = intParam(u, 'limit', 50, 1000);
    const after = u.searchParams.get('after') ?? undefined;
    const pages = await ctx.storage.latest(parts[2]!, { limit, ...(after !== undefined ? { after } : {}) });
    return send(res, 200, { channel: parts[2], pages });
  }
  if (route('GET', 'api', 'crawlers')) {
    const list = (ctx.node?.crawlers() ?? []).map((p) => ({
      id: p.id,
      coord: p.coord !== undefined ? { vec: Array.from(p.coord.vec), height: p.coord.height, error: p.coord.error } : null,
      load: p.load ?? null,
      rttMs: p.rttMs ?? null,
      lastSeenSecondsAgo: (performance.now() - p.seenAt) / 1000,
    }));
    return send(res, 200, { online: list.length, crawlers: list });
  }
  if (route('GET', 'api', 'tasks')) {
    const state = u.searchParams.get('state');
    const t = m.taskSummary();
    const limit = intParam(u, 'limit', 100, 10_000);
    const body: Record<string, unknown> = { queued: t.queued, issued: t.issued, running: t.running, failedRecent: t.failedRecent.length };
    if (state === 'failed') body.tasks = t.failedRecent.slice(0, limit);
    else if (state === 'running' || state === 'issued') body.tasks = await m.activeTasks(limit, state);
    else if (state === 'queued') body.channels = m.sched.listDue(m.clock(), limit);
    else if (state !== null) throw new HttpError(400, 'state must be queued, issued, running or failed');
    return send(res, 200, body);
  }
  if (route('GET', 'api', 'groups')) {
    return send(res, 200, {
      strategy: m.sched.state.options.strategy,
      rounds: m.sched.state.rounds,
      groups: m.groups(),
      updateQuality: m.updateQuality(),
      lastRound: m.lastRound,
    });
  }
  if (route('GET', 'api', 'candidates')) {
    const st = u.searchParams.get('status');
    if (st !== null && st !== 'pending' && st !== 'accepted' && st !== 'rejected') throw new HttpError(400, 'status must be pending, accepted or rejected');
    return send(res, 200, { candidates: await ctx.storage.candidates(st ?? undefined) });
  }
  if (route('POST', 'api', 'candidates', 'accept') || route('POST', 'api', 'candidates', 'reject')) {
    const body = objectBody(await readJson(req));
    const { origin, ...extra } = body;
    if (typeof origin !== 'string') throw new HttpError(400, 'origin: expected the candidate origin, e.g. "http://host.example"');
    if (parts[2] === 'accept') return send(res, 201, await ctx.storage.acceptCandidate(origin, extra));
    return send(res, 200, await ctx.storage.rejectCandidate(origin));
  }
  const known =
    anyMethod('metrics') ||
    anyMethod('api', 'status') ||
    anyMethod('api', 'channels') ||
    anyMethod('api', 'channels', null) ||
    anyMethod('api', 'channels', null, 'content') ||
    anyMethod('api', 'crawlers') ||
    anyMethod('api', 'tasks') ||
    anyMethod('api', 'groups') ||
    anyMethod('api', 'candidates') ||
    anyMethod('api', 'candidates', null);
  if (known) throw new HttpError(405, `method ${method} not allowed on ${path}`);
  throw new HttpError(404, `no route ${method} ${path}`);
}

function statusOf(err: unknown): number {
  if (err instanceof HttpError) return err.status;
  if (err instanceof ValidationError) return 400;
  if (err instanceof NotFoundError || err instanceof CandidateNotFound) return 404;
  if (err instanceof ConflictError || err instanceof CandidateConflict) return 409;
  if (err instanceof URIError) return 400;
  return 500;
}

export function metrics(ctx: ApiContext): string {
  const m = ctx.manager;
  const lines: string[] = [];
  const metric = (name: string, type: 'gauge' | 'counter', help: string, samples: [Record<string, string | number> | null, number][]) => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [labels, v] of samples) {
      const l = labels === null ? '' : `{${Object.entries(labels).map(([k, x]) => `${k}="${String(x)}"`).join(',')}}`;
      lines.push(`${name}${l} ${Number.isFinite(v) ? v : 'NaN'}`);
    }
  };
  const t = m.taskSummary();
  const groups = m.groups();
  const c = m.counters;
  metric('volcrawl_channels', 'gauge', 'Channels in the database.', [[null, m.sched.size]]);
  metric('volcrawl_group_channels', 'gauge', 'Channels per priority group.', groups.map((g) => [{ group: g.group }, g.channels]));
  metric('volcrawl_group_interval_seconds', 'gauge', 'Current recrawl interval per priority group.', groups.map((g) => [{ group: g.group }, g.intervalMinutes * 60]));
  metric('volcrawl_group_update_quality', 'gauge', 'Mean actual/expected update rate per group (paper eq. 5).', groups.flatMap((g) => (g.updateQuality === null ? [] : [[{ group: g.group }, g.updateQuality] as [Record<string, number>, number]])));
  metric('volcrawl_tasks', 'gauge', 'Tasks by state (queued = channels due, not yet issued).', [
    [{ state: 'queued' }, t.queued],
    [{ state: 'issued' }, t.issued],
    [{ state: 'running' }, t.running],
  ]);
  metric('volcrawl_tasks_issued_total', 'counter', 'Tasks issued.', [[null, c.tasksIssued]]);
  metric('volcrawl_tasks_succeeded_total', 'counter', 'Tasks completed with an update.', [[null, c.tasksSucceeded]]);
  metric('volcrawl_tasks_failed_total', 'counter', 'Tasks failed (no crawler, refused, crawler-reported failure, overdue).', [[null, c.tasksFailed]]);
  metric('volcrawl_tasks_overdue_total', 'counter', 'Tasks failed because their deadline passed.', [[null, c.tasksOverdue]]);
  metric('volcrawl_uploads_total', 'counter', 'Upload parts by outcome.', [
    [{ outcome: 'applied' }, c.uploadsApplied],
    [{ outcome: 'duplicate' }, c.uploadsDuplicate],
    [{ outcome: 'refused' }, c.uploadsRefused],
  ]);
  metric('volcrawl_pages_stored_total', 'counter', 'Page versions stored.', [[null, c.pagesStored]]);
  metric('volcrawl_page_text_chars_total', 'counter', 'Characters of page text stored.', [[null, c.pageBytes]]);
  metric('volcrawl_group_moves_total', 'counter', 'Channels moved between priority groups by the estimator.', [[null, c.groupMoves]]);
  metric('volcrawl_recrawl_rounds_total', 'counter', 'Interval reassignment rounds (IIR/ICR).', [[null, c.rounds]]);
  metric('volcrawl_crawlers_online', 'gauge', 'Crawlers the manager has heard from and not seen leave.', [[null, ctx.node?.crawlers().length ?? 0]]);
  metric('process_resident_memory_bytes', 'gauge', 'Resident set size.', [[null, process.memoryUsage.rss()]]);
  return lines.join('\n') + '\n';
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

export async function startApi(ctx: ApiContext, opts: ApiOptions): Promise<ApiServer> {
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
  // Routed only now that the bound port, hence the Host check, is known.
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    handle(ctx, guard, req, res).catch((err: unknown) => {
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
