// The operator's view of volunteers (docs/trust.md): reputations, and lifting a
// quarantine, banning and unbanning an identity. The trust service does the work.
import { objectBody, readJson } from './body.js';
import { HttpError } from '../errors.js';
import type { Route, RouteRequest } from './router.js';
import type { Manager } from '../manager.js';

const ok = <T>(body: T, status = 200) => ({ status, body });

/** Who acted: the body's `by` (an operator's name, ≤ 100 characters) or "operator". */
function actor(body: Record<string, unknown>): string {
  const by = body.by ?? 'operator';
  if (typeof by !== 'string' || by.length === 0 || by.length > 100) throw new HttpError(400, 'by: expected the operator name, 1 to 100 characters');
  return by;
}

async function bodyOf(req: RouteRequest['req']): Promise<Record<string, unknown>> {
  const len = Number(req.headers['content-length'] ?? 0);
  return len > 0 || req.headers['transfer-encoding'] !== undefined ? objectBody(await readJson(req)) : {};
}

export function volunteerRoutes(ctx: { manager: Manager }): Route[] {
  const trust = () => ctx.manager.trust;
  const r = (method: Route['method'], path: string, handle: Route['handle']): Route => ({ method, path, handle });
  return [
    r('GET', '/api/volunteers', async () => {
      const t = trust();
      return ok({ statuses: t.statusCounts(), counters: t.counters, verificationOverhead: t.overhead(), checksInFlight: t.checks.size, volunteers: t.summaries() });
    }),
    r('GET', '/api/volunteers/:id', async ({ params }) => ok(trust().summary(params.id!))),
    r('POST', '/api/volunteers/:id/lift', async ({ req, params }) => ok(await trust().lift(params.id!, actor(await bodyOf(req))))),
    r('POST', '/api/volunteers/:id/ban', async ({ req, params }) => {
      const body = await bodyOf(req);
      if (typeof body.reason !== 'string') throw new HttpError(400, 'reason: expected why the identity is banned');
      return ok(await trust().ban(params.id!, actor(body), body.reason));
    }),
    r('POST', '/api/volunteers/:id/unban', async ({ req, params }) => ok(await trust().unban(params.id!, actor(await bodyOf(req))))),
  ];
}
