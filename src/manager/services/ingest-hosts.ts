// Crawler-reported RTTs to a channel's web host: the last reports per host are
// kept, and once three crawlers (landmarks) reported, the host is placed in
// coordinate space (src/coords) so its tasks are routed to crawlers near it.
import { placeHost, type Landmark } from '../../coords/index.js';
import { fromWireCoord, toWireCoord } from '../../dht/peers.js';
import type { WireCoord } from '../../dht/signing.js';
import { createRng, deriveSeed } from '../../rng.js';
import type { BatchOp } from '../data/repositories.js';
import type { Channel } from '../domain/channel.js';
import type { ServiceCore } from './core.js';

/** Reports kept per host (the most recent, one per crawler). */
export const HOST_REPORTS_KEPT = 16;
/** Landmarks needed to place a host. */
const MIN_LANDMARKS = 3;

export async function hostRttOps(core: ServiceCore, ch: Channel, msg: { hostRttMs: number | null; crawlerCoord?: WireCoord }, from: string, now: number): Promise<BatchOp[]> {
  if (msg.hostRttMs === null || !(msg.hostRttMs > 0) || msg.crawlerCoord === undefined) return [];
  const { hosts } = core.repos;
  const host = ch.host;
  const hr = await hosts.reports(host);
  hr.reports = hr.reports.filter((x) => x.crawler !== from);
  hr.reports.push({ crawler: from, coord: msg.crawlerCoord, rttMs: msg.hostRttMs, at: now });
  if (hr.reports.length > HOST_REPORTS_KEPT) hr.reports.splice(0, hr.reports.length - HOST_REPORTS_KEPT);
  const ops = [hosts.reportsOp(host, hr)];
  if (hr.reports.length >= MIN_LANDMARKS) {
    const dims = hr.reports[hr.reports.length - 1]!.coord.vec.length;
    const landmarks: Landmark[] = hr.reports.map((x) => ({ coord: fromWireCoord(x.coord), rttMs: x.rttMs }));
    try {
      ops.push(hosts.coordOp(host, toWireCoord(placeHost(landmarks, { dimensions: dims }, createRng(deriveSeed(1, host))))));
    } catch (err) {
      core.log.debug({ host, err: String(err) }, 'host placement failed');
    }
  }
  return ops;
}
