// The owner's preferences as the node holds them (Prefs, with its parts), the
// raw TOML table they come from, and the error that names the key at fault.
// Apart so that the file's layout, the value parsers and the schema can all
// speak of them without importing one another (prefs.ts re-exports them).

/** A crawl window in local minutes since midnight. end ≤ start: the window runs past midnight into the next day. */
export interface TimeWindow {
  start: number;
  end: number;
}

/** Owner's block list as written (normalised: lower-case ASCII names, canonical CIDR). */
export interface BlockRules {
  /** Exact host names. */
  domains: string[];
  /** A name and every name under it ("example.org" also blocks www.example.org). */
  domainSuffixes: string[];
  /** CIDR ranges or single addresses, IPv4 or IPv6. */
  addressRanges: string[];
}

export interface Prefs {
  threads: number;
  queue: number;
  /** Download bandwidth cap, bytes/s; null = none. */
  maxBandwidth: number | null;
  /** IANA time zone for windows and periods; null = the computer's. */
  timeZone: string | null;
  /** Crawl windows per weekday (0 = Monday); null = any time. */
  schedule: TimeWindow[][] | null;
  transfer: {
    dailyCapBytes: number | null;
    monthlyCapBytes: number | null;
    /** Day of the month (1..28) on which the monthly period starts. */
    monthStartsOn: number;
    /** Local minute of the day at which a day's period starts (and the month's, on monthStartsOn). */
    dayStartsAt: number;
  };
  pauseWhen: {
    onBattery: boolean;
    /** Pause when other programs use more than this percent of all cores; null = never. */
    cpuBusyAbove: number | null;
    /** ... and resume only once they use less than this. */
    cpuResumeBelow: number;
    cpuWindowMs: number;
    /** A pause for CPU or battery lasts at least this long. */
    minPauseMs: number;
  };
  neverFetch: BlockRules;
}

/** The raw TOML table as read from the file (validated shape, owner's spelling). */
export type RawPrefs = Record<string, unknown>;

export class PrefsError extends Error {
  override name = 'PrefsError';
  constructor(
    message: string,
    /** Dotted key the error is about, when there is one. */
    readonly key?: string,
  ) {
    super(message);
  }
}
