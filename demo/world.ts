// The demo's world: generated test-web sites (one channel each) in five change
// profiles, the compressed clock both the test web and the manager run on, and
// the ground-truth measure of freshness and age of what the manager stored
// (read through its HTTP API).
import { createRng, deriveSeed, randomInt } from '../src/rng.js';
import { MINUTE } from '../src/manager/domain/scheduler.js';
import { ApiError, type ManagerApi } from './api.js';
import type { SiteSpec, TestWeb } from '../testbed/web/testweb.js';

/** Change profiles: mean changes per page per SIMULATED day, and the group that rate belongs to
 * (the paper's group intervals 1, 2, 4, 8, 16 h: group g ≈ a change every 2^g hours … 2^(g+1)). */
export const PROFILES = [
  { name: 'news', changesPerDay: 48, group: 0 },
  { name: 'forum', changesPerDay: 12, group: 1 },
  { name: 'blog', changesPerDay: 4, group: 2 },
  { name: 'shop', changesPerDay: 1, group: 3 },
  { name: 'docs', changesPerDay: 0.25, group: 4 },
] as const;

export const DEMO_EPOCH = Date.UTC(2026, 0, 1);
const DAY_MIN = 1440;

export function siteSpecs(n: number, seed: number): SiteSpec[] {
  const rng = createRng(deriveSeed(seed, 'demo-sites'));
  const out: SiteSpec[] = [];
  for (let i = 0; i < n; i++) {
    const p = PROFILES[i % PROFILES.length]!;
    out.push({ name: `${p.name}-${i}`, pages: 6 + randomInt(rng, 20), fanout: 4, pageBytes: 1500, changesPerDay: p.changesPerDay });
  }
  return out;
}

export function profileOf(site: SiteSpec): (typeof PROFILES)[number] {
  return PROFILES.find((p) => site.name.startsWith(p.name + '-')) ?? PROFILES[2];
}

/**
 * The shared compressed clock. Simulated time = DEMO_EPOCH + speed × (real time
 * since start). The test web's TestClock is set from it; the manager runs on
 * its real clock with every duration compressed by the same factor
 * (`dht-manager serve --time-scale`, ../time-scale.ts). Figures in the report are converted back to simulated
 * time (× speed).
 */
export class DemoClock {
  private readonly t0 = performance.now();
  /** The wall clock at the start (the manager's clock: its report times are wall-clock minutes). */
  private readonly wall0 = Date.now();
  constructor(readonly speed: number) {}
  /** Simulated ms since the start of a time on the manager's clock (epoch minutes). */
  simSinceStart(managerMinutes: number): number {
    return (managerMinutes * MINUTE - this.wall0) * this.speed;
  }
  realElapsedMs(): number {
    return performance.now() - this.t0;
  }
  simNow(): number {
    return DEMO_EPOCH + Math.floor(this.realElapsedMs() * this.speed);
  }
  /** Moves the test web's clock to the simulated now. */
  sync(web: TestWeb): number {
    const t = this.simNow();
    if (t > web.clock.now()) web.clock.set(t);
    return web.clock.now();
  }
}

/** A site's true mean change interval, simulated minutes. */
export function trueChangeInterval(site: SiteSpec): number {
  return DAY_MIN / profileOf(site).changesPerDay;
}

/**
 * The channel the demo adds for a site. Like an operator with a fresh seed list it
 * gives no group and no change interval: every channel starts in the middle group,
 * and the manager's estimator moves it to the group its measured change rate
 * belongs to (the report shows where each went).
 */
export function channelFor(url: string, site: SiteSpec): Record<string, unknown> {
  const p = profileOf(site);
  return { url, depth: 4, maxPages: 200, delayMs: 0, note: `demo ${p.name} site, ${p.changesPerDay} changes/page/day` };
}

export interface GroupTruth {
  group: number;
  /** Page-samples: pages in scope, of them with a stored copy, of those fresh. */
  pages: number;
  stored: number;
  fresh: number;
  /** Sum over stored page-samples of the age (simulated minutes; 0 when fresh). */
  ageSumMin: number;
}

export interface TruthSnapshot {
  at: number;
  groups: GroupTruth[];
}

/** Page index from a test-web URL ('/' → 0, '/p/<i>.html' → i). */
export function pageIndex(url: string): number | null {
  const path = new URL(url).pathname;
  if (path === '/') return 0;
  const m = /^\/p\/(\d+)\.html$/.exec(path);
  return m ? Number(m[1]) : null;
}

/** Version of a stored copy, from its title ("<site> page <i> v<version>"). */
export function storedVersion(title: string | undefined): number | null {
  const m = title === undefined ? null : / v(\d+)$/.exec(title);
  return m ? Number(m[1]) : null;
}

/**
 * Ground truth now: for every channel's pages, is the latest stored copy the
 * page's current version (fresh), and if not, how long ago did it stop being
 * (age = now − the first change after the stored version; Cho & Garcia-Molina).
 */
export async function measureTruth(web: TestWeb, api: ManagerApi, channels: { id: string; site: string }[], simNow: number): Promise<TruthSnapshot> {
  const byGroup = new Map<number, GroupTruth>();
  const views = await Promise.all(
    channels.map(async (c) => {
      try {
        const [ch, latest] = await Promise.all([api.channel(c.id), api.content(c.id)]);
        return { site: c.site, group: ch.group, latest };
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) return null; // deleted from the dashboard meanwhile
        throw err;
      }
    }),
  );
  for (const v of views) {
    if (v === null) continue;
    const g = byGroup.get(v.group) ?? { group: v.group, pages: 0, stored: 0, fresh: 0, ageSumMin: 0 };
    byGroup.set(v.group, g);
    const site = web.site(v.site);
    const have = new Map<number, number>();
    for (const p of v.latest) {
      const i = pageIndex(p.url);
      const ver = storedVersion(p.title);
      if (i !== null && ver !== null) have.set(i, ver);
    }
    for (let i = 0; i < site.spec.pages; i++) {
      g.pages++;
      const ver = have.get(i);
      if (ver === undefined) continue;
      g.stored++;
      const changes = site.changeTimes(i, simNow);
      if (changes.length <= ver) g.fresh++;
      else g.ageSumMin += (simNow - changes[ver]!) / MINUTE;
    }
  }
  return { at: simNow, groups: [...byGroup.values()].sort((a, b) => a.group - b.group) };
}

/** Sums snapshots (time average over equally spaced samples). */
export function accumulate(into: Map<number, GroupTruth>, snap: TruthSnapshot): void {
  for (const g of snap.groups) {
    const a = into.get(g.group) ?? { group: g.group, pages: 0, stored: 0, fresh: 0, ageSumMin: 0 };
    a.pages += g.pages;
    a.stored += g.stored;
    a.fresh += g.fresh;
    a.ageSumMin += g.ageSumMin;
    into.set(g.group, a);
  }
}
