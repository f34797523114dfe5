// The operator API's route table: every endpoint once, with its handler. The
// handlers parse and check the request, call the services and return the typed
// view (views.ts); errors map to status codes in errors.ts.
import { mediaType } from './guard.js';
import { enumParam, intParam, objectBody, readBody, readJson } from './body.js';
import { HttpError } from '../errors.js';
import type { Manager } from '../manager.js';
import type { ManagerNode } from '../network.js';
import type { Route, RouteRequest } from './router.js';
import { volunteerRoutes } from './volunteer-routes.js';
import type { VolunteerState } from '../volunteer-states.js';
import type { CandidatesView, CrawlerView, ChannelListView, ChannelView, ContentView, CrawlersView, DeletedView, GroupsView, ImportView, StatusView, TasksView } from './views.js';

/** What the API reads besides the manager: the libp2p node, when there is one. */
export type NodeView = Pick<ManagerNode, 'peerId' | 'multiaddrs' | 'crawlers'> & Partial<Pick<ManagerNode, 'ownerStates' | 'pulls' | 'crawlerLoad'>>;

export interface ApiContext {
  manager: Manager;
  node?: NodeView | null;
}

const ok = <T>(body: T, status = 200, headers?: Record<string, string>) => ({ status, body, ...(headers !== undefined ? { headers } : {}) });

export function apiRoutes(ctx: ApiContext): Route[] {
  const m = ctx.manager;
  const node = () => ctx.node ?? null;
  const r = (method: Route['method'], path: string, handle: (q: RouteRequest) => Promise<ReturnType<typeof ok>>, extra: Partial<Route> = {}): Route => ({ method, path, handle, ...extra });
  return [
    r('GET', '/api/status', async () => {
      const t = await m.reporting.taskSummary();
      const o = m.sched.state.options;
      const body: StatusView = {
        peerId: node()?.peerId ?? null,
        addrs: node()?.multiaddrs() ?? [],
        channels: m.sched.size,
        strategy: o.strategy,
        rateCap: o.rateCap,
        tasks: { queued: t.queued, issued: t.issued, running: t.running },
        crawlers: node()?.crawlers().length ?? 0,
        counters: m.counters,
      };
      return ok(body);
    }),
    r('GET', '/api/channels', async ({ query }) => {
      const limit = intParam(query, 'limit', 100, 10_000);
      const after = query.get('after') ?? undefined;
      const list = await m.channels.list({ limit, ...(after !== undefined ? { after } : {}) });
      return ok<ChannelListView>({ channels: list, next: list.length === limit ? list[list.length - 1]!.id : null });
    }),
    r('POST', '/api/channels', async ({ req }) => {
      const ch = await m.channels.add(await readJson(req));
      return ok(ch, 201, { location: `/api/channels/${ch.id}` });
    }),
    // A seed list as text/uri-list (one URL a line, # comments: a type no web page can send
    // unasked), or JSON {text, defaults}.
    r(
      'POST',
      '/api/channels/import',
      async ({ req }) => {
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
        const res = await m.channels.importSeedList(text, extra);
        return ok<ImportView>({ added: res.added.length, ids: res.added.map((c) => c.id), skipped: res.skipped });
      },
      { bodyTypes: ['text/uri-list'] },
    ),
    r('GET', '/api/channels/:id', async ({ params }) => {
      const id = params.id!;
      const ch = await m.channels.get(id);
      const body: ChannelView = {
        ...ch,
        schedule: await m.channels.schedule(id),
        hostCoord: (await m.repos.hosts.coord(ch.host)) ?? null,
        history: await m.channels.history(id),
      };
      return ok(body);
    }),
    r('PATCH', '/api/channels/:id', async ({ req, params }) => updateChannel(m, params.id!, req)),
    r('PUT', '/api/channels/:id', async ({ req, params }) => updateChannel(m, params.id!, req)),
    r('DELETE', '/api/channels/:id', async ({ params }) => {
      await m.channels.delete(params.id!);
      return ok<DeletedView>({ deleted: params.id! });
    }),
    r('GET', '/api/channels/:id/content', async ({ params, query }) => {
      const limit = intParam(query, 'limit', 50, 1000);
      const after = query.get('after') ?? undefined;
      const pages = await m.pages.latest(params.id!, { limit, ...(after !== undefined ? { after } : {}) });
      return ok<ContentView>({ channel: params.id!, pages });
    }),
    r('GET', '/api/crawlers', async () => {
      const states = node()?.ownerStates;
      const pulling = node()?.pulls?.live() ?? new Set<string>();
      const list = (node()?.crawlers() ?? []).map((p) => ({
        id: p.id,
        coord: p.coord !== undefined ? { vec: Array.from(p.coord.vec), height: p.coord.height, error: p.coord.error } : null,
        load: p.load ?? null,
        rttMs: p.rttMs ?? null,
        lastSeenSecondsAgo: (performance.now() - p.seenAt) / 1000,
        owner: ownerView(states?.get(p.id) ?? null),
        reachability: states?.reach(p.id, pulling) ?? (pulling.has(p.id) ? 'pull' : null),
      }));
      return ok<CrawlersView>({ online: list.length, paused: list.filter((c) => c.owner?.state === 'paused').length, crawlers: list });
    }),
    r('GET', '/api/tasks', async ({ query }) => {
      const state = enumParam(query, 'state', ['queued', 'issued', 'running', 'failed'] as const, 'state must be queued, issued, running or failed');
      const limit = intParam(query, 'limit', 100, 10_000);
      const t = await m.reporting.taskSummary();
      const body: TasksView = { queued: t.queued, issued: t.issued, running: t.running, failedRecent: t.failedRecent.length };
      if (state === 'failed') body.tasks = t.failedRecent.slice(0, limit);
      else if (state === 'running' || state === 'issued') body.tasks = await m.tasks.activeList(limit, state);
      else if (state === 'queued') body.channels = await m.reporting.listDue(limit);
      return ok(body);
    }),
    r('GET', '/api/groups', async () => {
      const q = await m.reporting.quality();
      return ok<GroupsView>({
        strategy: m.sched.state.options.strategy,
        rounds: m.sched.state.rounds,
        groups: await m.reporting.groups(q),
        updateQuality: { weighted: q.weighted, unweighted: q.unweighted },
        lastRound: m.tasks.lastRound,
        recentRounds: m.tasks.rounds,
        roundLoad: m.sched.state.load,
        crawlerLoad: node()?.crawlerLoad?.() ?? null,
      });
    }),
    r('GET', '/api/candidates', async ({ query }) => {
      const status = enumParam(query, 'status', ['pending', 'accepted', 'rejected'] as const, 'status must be pending, accepted or rejected');
      return ok<CandidatesView>({ candidates: await m.candidates.list(status ?? undefined) });
    }),
    r('POST', '/api/candidates/accept', async ({ req }) => {
      const { origin, extra } = candidateBody(await readJson(req));
      return ok(await m.candidates.accept(origin, extra), 201);
    }),
    r('POST', '/api/candidates/reject', async ({ req }) => ok(await m.candidates.reject(candidateBody(await readJson(req)).origin))),
    ...volunteerRoutes(ctx),
  ];
}

/** A volunteer's state as its owner's controls set it; null until it reported one. */
function ownerView(s: VolunteerState | null): CrawlerView['owner'] {
  return s === null ? null : { state: s.state, reasons: s.reasons, since: s.since, reportedSecondsAgo: Math.max(0, (Date.now() - s.reportedAt) / 1000) };
}

async function updateChannel(m: Manager, id: string, req: RouteRequest['req']) {
  await m.channels.get(id); // 404 before the body is read
  return ok(await m.channels.update(id, await readJson(req)));
}

function candidateBody(raw: unknown): { origin: string; extra: Record<string, unknown> } {
  const { origin, ...extra } = objectBody(raw);
  if (typeof origin !== 'string') throw new HttpError(400, 'origin: expected the candidate origin, e.g. "http://host.example"');
  return { origin, extra };
}
