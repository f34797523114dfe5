// The preferences file's standard layout: its sections, keys, defaults and the
// comments that make the file explain itself, and the file rendered in that
// layout (on first run, and by setPrefInFile). Apart because the layout is the
// one list of settable keys: knownKeys(), the schema's suggestions and the
// writer all read it.
import { WEEKDAYS } from './local-time.js';
import { PrefsError, type RawPrefs } from './prefs-types.js';

type TomlScalar = string | number | boolean | string[];
interface KeyDoc {
  key: string;
  doc: string;
  default: TomlScalar;
}
interface SectionDoc {
  /** null: top-level keys. */
  name: string | null;
  doc: string;
  keys: KeyDoc[];
  /** Keys shown commented out as examples when absent. */
  examples?: Record<string, TomlScalar>;
}

export const PREFS_LAYOUT: readonly SectionDoc[] = [
  {
    name: null,
    doc: 'volcrawl volunteer preferences. Saved changes take effect within seconds, no restart needed;\n`volunteer-crawler join` flags override them. `volunteer-crawler prefs` shows what is in force.',
    keys: [
      { key: 'threads', doc: 'Crawl tasks run at once (1..256).', default: 5 },
      { key: 'queue', doc: 'Tasks waiting beyond the running ones (0..10000).', default: 5 },
      { key: 'max_bandwidth', doc: 'Download rate cap, bytes per second: "500k", "2M", or "none".', default: 'none' },
      { key: 'time_zone', doc: 'Time zone of the windows and transfer periods, e.g. "Europe/Berlin"; "" = this computer\'s.', default: '' },
    ],
  },
  {
    name: 'schedule',
    doc: 'When the node may crawl, in local time: lists of "HH:MM-HH:MM" windows per weekday.\nA day without its own line uses every_day; [] = not at all that day. A window whose end is\nbefore its start runs past midnight ("22:00-06:00" on monday = Monday night until Tuesday 06:00).',
    keys: [{ key: 'every_day', doc: 'Days without their own line.', default: ['00:00-24:00'] }],
    examples: { saturday: ['00:00-24:00'], monday: ['18:00-23:30'] },
  },
  {
    name: 'transfer',
    doc: 'Transfer caps, bytes down + up: "2G", "500M", "50GiB", or "none". At a cap the node ends\nits tasks cleanly, hands them on and pauses until the next period.',
    keys: [
      { key: 'daily_cap', doc: 'Per day.', default: 'none' },
      { key: 'monthly_cap', doc: 'Per month.', default: 'none' },
      { key: 'month_starts_on', doc: 'Day of the month (1..28) the monthly period starts, e.g. your ISP\'s billing day.', default: 1 },
      { key: 'day_starts_at', doc: 'Local time each day\'s period (and the month\'s) starts.', default: '00:00' },
    ],
  },
  {
    name: 'pause_when',
    doc: 'Stepping aside while you use the computer.',
    keys: [
      { key: 'on_battery', doc: 'Pause while the computer runs on battery.', default: true },
      { key: 'cpu_busy_above', doc: 'Pause while other programs use more than this percent of all CPU cores (0 = never).', default: 70 },
      { key: 'cpu_resume_below', doc: '...and resume only once they use less than this percent.', default: 40 },
      { key: 'cpu_window_seconds', doc: 'CPU use is averaged over this many seconds (5..3600).', default: 60 },
      { key: 'min_pause_minutes', doc: 'A pause for CPU or battery lasts at least this long (0..1440).', default: 5 },
    ],
  },
  {
    name: 'never_fetch',
    doc: 'Sites this computer never fetches, checked after DNS resolution (redirects included).\nA task for one goes back to the manager, which gives it to another volunteer.',
    keys: [
      { key: 'domains', doc: 'Exact host names, e.g. ["intranet.example.com"].', default: [] },
      { key: 'domain_suffixes', doc: 'A domain and everything under it, e.g. ["bank.example"] also blocks www.bank.example.', default: [] },
      { key: 'address_ranges', doc: 'Addresses or CIDR ranges, IPv4 or IPv6, e.g. ["203.0.113.0/24", "2001:db8::/32"].', default: [] },
    ],
  },
];

/** Every settable key, dotted ("transfer.daily_cap", "threads", "schedule.monday"). */
export function knownKeys(): string[] {
  const out: string[] = [];
  for (const s of PREFS_LAYOUT) {
    for (const k of s.keys) out.push(s.name ? `${s.name}.${k.key}` : k.key);
    if (s.name === 'schedule') for (const d of WEEKDAYS) out.push(`schedule.${d}`);
  }
  return out;
}

function tomlValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v); // a JSON string is a valid TOML basic string
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[${v.map(tomlValue).join(', ')}]`;
  throw new PrefsError(`cannot write ${typeof v} values`);
}

const comment = (text: string): string[] => text.split('\n').map((l) => `# ${l}`);

/** The file in the standard layout: every key with its comment; keys not in `raw` get their default. */
export function renderPrefsFile(raw: RawPrefs = {}): string {
  const out: string[] = [];
  for (const s of PREFS_LAYOUT) {
    const table = (s.name ? raw[s.name] : raw) as Record<string, unknown> | undefined;
    if (s.name) out.push('', ...comment(s.doc), `[${s.name}]`);
    else out.push(...comment(s.doc), '');
    for (const k of s.keys) {
      out.push(...comment(k.doc), `${k.key} = ${tomlValue(table?.[k.key] ?? k.default)}`);
    }
    if (s.name === 'schedule') {
      let any = false;
      for (const d of WEEKDAYS) {
        if (table?.[d] !== undefined) {
          out.push(`${d} = ${tomlValue(table[d])}`);
          any = true;
        }
      }
      if (!any && s.examples) for (const [k, v] of Object.entries(s.examples)) out.push(`# ${k} = ${tomlValue(v)}`);
    }
  }
  return out.join('\n') + '\n';
}
