// The key table: every key the manager's database holds, and the only place
// that spells one. Keys are strings with a short prefix per record kind (there
// are millions of them); values are JSON, page texts raw UTF-8. Repositories
// (channels.ts, tasks.ts, pages.ts, candidates.ts, hosts.ts, volunteers.ts, meta.ts) build
// keys here and nothing outside this folder sees one.
//
// A prefix ends at a separator that cannot occur inside the part before it:
// channel ids are `c<base36>`, origins have no '!', so `pl!<id>!` and
// `co!<origin>!` select exactly one channel or origin. URLs may contain '!',
// so the versions of one page are selected by a range plus a check of the
// remainder (pageVersions), never by a bare `pv!<id>!<url>!` prefix.

/** Keys that start with `prefix`, optionally only those whose remainder matches `rest`. */
export interface KeyRange {
  prefix: string;
  /** Lower bound inside the prefix (inclusive); defaults to the prefix itself. */
  from?: string;
  /** Upper bound (exclusive); defaults to the end of the prefix. */
  to?: string;
  rest?: RegExp;
}

const within = (prefix: string): KeyRange => ({ prefix });
/** A non-negative double as 16 hex digits of its IEEE bits: string order is numeric order. */
const ordered = (x: number): string => {
  const b = Buffer.alloc(8);
  b.writeDoubleBE(x === 0 ? 0 : x); // -0 → 0
  return b.toString('hex');
};
/** Groups as two digits, so `dt!` keys sort by group after the time. */
const grp = (g: number) => String(g).padStart(2, '0');
/** Versions are zero-padded to 8 digits so they sort in order. */
const ver = (v: number) => String(v).padStart(8, '0');

export const K = {
  // channels (data/channels.ts)
  channel: (id: string) => `c!${id}`,
  channels: () => within('c!'),
  /** Identity of a channel (origin + sorted prefixes) → its id: duplicates are refused. */
  channelKey: (key: string) => `ck!${key}`,
  origin: (origin: string, id: string) => `co!${origin}!${id}`,
  originChannels: (origin: string) => within(`co!${origin}!`),
  sched: (id: string) => `s!${id}`,
  scheds: () => within('s!'),
  history: (id: string) => `h!${id}`,
  known: (id: string) => `kn!${id}`,
  interSeeds: (id: string) => `is!${id}`,
  interDigests: (id: string) => `xd!${id}`,
  // the due index (data/due-index.ts): timed stream, paced stream per group, parked by host
  dueTimed: (at: number, g: number, id: string) => `dt!${ordered(at)}!${grp(g)}!${id}`,
  dueTimedAll: () => within('dt!'),
  /** Timed entries due at or before `at`. */
  dueTimedUpTo: (at: number): KeyRange => ({ prefix: 'dt!', to: `dt!${ordered(at)}!\uffff` }),
  duePaced: (g: number, li: number, id: string) => `dg!${grp(g)}!${ordered(li)}!${id}`,
  duePacedGroup: (g: number) => within(`dg!${grp(g)}!`),
  duePacedAll: () => within('dg!'),
  dueParked: (hh: number, id: string) => `dh!${hh.toString(36)}!${id}`,
  dueParkedHost: (hh: number) => within(`dh!${hh.toString(36)}!`),
  dueParkedAll: (): KeyRange => ({ prefix: 'dh!', to: 'dh!~' }),
  /** A live key just past the parked entries ('~' sorts after base-36 digits): a read of one
   * host's entries stops there instead of walking the deletions of the timed stream after it
   * (LevelDB steps over every deleted key up to the next live one, whatever the range's end). */
  dueParkedEnd: () => 'dh!~',
  // pages (data/pages.ts)
  pageLatest: (id: string, url: string) => `pl!${id}!${url}`,
  pagesLatest: (id: string) => within(`pl!${id}!`),
  pageVersion: (id: string, url: string, v: number) => `pv!${id}!${url}!${ver(v)}`,
  /** Every version of one page: `pv!<id>!<url>!` then digits only (a URL continuing with '!…' is another page). */
  pageVersions: (id: string, url: string): KeyRange => ({ prefix: `pv!${id}!${url}!`, from: `pv!${id}!${url}!0`, to: `pv!${id}!${url}!:`, rest: /^\d+$/ }),
  channelVersions: (id: string) => within(`pv!${id}!`),
  /** The text of a version, stored as a raw UTF-8 string (no JSON escaping: 4× faster for 20 KB pages). */
  pageText: (id: string, url: string, v: number) => `px!${id}!${url}!${ver(v)}`,
  channelTexts: (id: string) => within(`px!${id}!`),
  // tasks (data/tasks.ts): in flight under ta!, finished under t!
  task: (id: string) => `t!${id}`,
  active: (id: string) => `ta!${id}`,
  actives: () => within('ta!'),
  // candidate channels (data/candidates.ts)
  candidate: (origin: string) => `cd!${origin}`,
  candidates: () => within('cd!'),
  // hosts (data/hosts.ts)
  hostRtt: (host: string) => `hr!${host}`,
  hostCoord: (host: string) => `hc!${host}`,
  // volunteers' reputations and the channels whose current pages each supplied (data/volunteers.ts);
  // peer ids have no '!'
  volunteer: (peer: string) => `vr!${peer}`,
  volunteers: () => within('vr!'),
  volunteerWork: (peer: string, channel: string) => `vw!${peer}!${channel}`,
  volunteerWorks: (peer: string) => within(`vw!${peer}!`),
  /** Check crawls in flight (src/manager/trust/checks.ts), by their task id (no '!'). */
  volunteerCheck: (id: string) => `vc!${id}`,
  volunteerChecks: () => within('vc!'),
  // the rest of the manager's state (data/meta.ts)
  meta: (name: 'recrawl' | 'seq' | 'counters' | 'lastRound' | 'rounds' | 'trust' | 'window' | 'dueIndex') => `m!${name}`,
} as const;
