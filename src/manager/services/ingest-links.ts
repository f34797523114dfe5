// Inter-site URLs from a final upload: a URL inside a known channel becomes a
// seed of that channel's next task; a URL no channel covers makes its site a
// candidate channel (candidates.ts lets the operator accept or reject it). The
// source channel keeps their digests so its crawler need not report them again.
import { sha1_32 } from '../../crawler/hash.js';
import type { BatchOp } from '../data/repositories.js';
import type { Channel } from '../domain/channel.js';
import type { Candidate } from '../domain/records.js';
import { DATA_INTER_DIGESTS, DATA_INTER_SEEDS } from '../domain/scheduler.js';
import type { ServiceCore } from './core.js';
import { dataOps } from './schedules.js';

export const LINK_LIMITS = {
  interSeedsPerChannel: 1000,
  interDigestsPerChannel: 100_000,
  originsPerUpload: 200,
  interUrlsPerUpload: 2000,
  candidateSamples: 10,
} as const;

/** http(s) URLs without credentials or fragment, grouped by origin (at most originsPerUpload origins). */
function byOrigin(urls: string[]): Map<string, URL[]> {
  const out = new Map<string, URL[]>();
  for (const s of urls) {
    let u: URL;
    try {
      u = new URL(s);
    } catch {
      continue;
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') continue;
    if (u.username || u.password) continue;
    u.hash = '';
    const list = out.get(u.origin);
    if (list !== undefined) list.push(u);
    else if (out.size < LINK_LIMITS.originsPerUpload) out.set(u.origin, [u]);
  }
  return out;
}

export async function interSiteOps(core: ServiceCore, src: Channel, urlsIn: string[], now: number): Promise<BatchOp[]> {
  const { repos } = core;
  const urls = [...new Set(urlsIn)].slice(0, LINK_LIMITS.interUrlsPerUpload);
  if (urls.length === 0) return [];
  const ops: BatchOp[] = [];
  const addSeeds = new Map<string, string[]>();
  const cands = new Map<string, URL[]>();
  for (const [origin, list] of byOrigin(urls)) {
    const channels = await repos.channels.ofOrigin(origin);
    for (const u of list) {
      const hit = channels.find((c) => c.prefixes.some((p) => u.pathname.startsWith(p)));
      if (hit !== undefined) {
        if (hit.id === src.id) continue;
        const a = addSeeds.get(hit.id);
        if (a !== undefined) a.push(u.href);
        else addSeeds.set(hit.id, [u.href]);
      } else {
        const c = cands.get(origin);
        if (c !== undefined) c.push(u);
        else cands.set(origin, [u]);
      }
    }
  }
  const seedIds = [...addSeeds.keys()];
  const olds = await repos.channels.interSeedsOf(seedIds);
  const recs = await repos.channels.schedules(seedIds);
  seedIds.forEach((id, i) => {
    const merged = [...new Set([...(olds[i] ?? []), ...addSeeds.get(id)!])];
    ops.push(repos.channels.interSeedsOp(id, merged.slice(-LINK_LIMITS.interSeedsPerChannel)));
    if (recs[i] !== undefined) ops.push(...dataOps(core, id, recs[i]!, DATA_INTER_SEEDS));
  });
  const origins = [...cands.keys()];
  const prev = await repos.candidates.getMany(origins);
  origins.forEach((origin, i) => {
    const list = cands.get(origin)!;
    const c: Candidate = prev[i] ?? { origin, status: 'pending', firstSeen: now, lastSeen: now, count: 0, urls: [], from: [] };
    c.lastSeen = now;
    c.count += list.length;
    c.urls = [...new Set([...c.urls, ...list.map((u) => u.href)])].slice(0, LINK_LIMITS.candidateSamples);
    if (!c.from.includes(src.id)) c.from = [...c.from, src.id].slice(-LINK_LIMITS.candidateSamples);
    ops.push(repos.candidates.putOp(c));
  });
  // The source channel's crawler need not report these again.
  const digests = new Set(await repos.channels.interDigests(src.id));
  for (const s of urls) digests.add(sha1_32(s));
  ops.push(repos.channels.interDigestsOp(src.id, [...digests].slice(-LINK_LIMITS.interDigestsPerChannel)));
  const rec = await repos.channels.schedule(src.id);
  if (rec !== undefined) ops.push(...dataOps(core, src.id, rec, DATA_INTER_DIGESTS));
  return ops;
}
