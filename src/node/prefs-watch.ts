// Reloads the preference file while the node runs. fs.watch on the directory
// (editors save by writing a new file and renaming it over the old one, which
// a watch on the file itself would lose) plus a stat poll, because fs.watch
// misses events on network file systems, in some containers and on some
// editors' save paths. A bad edit keeps the last good preferences in force and
// reports why, once per distinct bad content.
import { EventEmitter } from 'node:events';
import { readFileSync, statSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { applyOverrides, loadPrefsFile, parsePrefsText, PrefsError, type Prefs, type PrefsOverrides, type RawPrefs } from './prefs.js';

export interface PrefsWatcherOptions {
  path: string;
  /** Flags given on the command line: they win over the file, on every reload. */
  overrides?: PrefsOverrides;
  /** Stat poll interval, ms (default 2000). */
  pollMs?: number;
  /** Wait after a change event before reading, so a save in several writes is read once (ms, default 100). */
  debounceMs?: number;
  /** Use fs.watch besides the poll (default true; tests turn it off to exercise the poll alone). */
  fsWatch?: boolean;
}

export interface PrefsWatcherEvents {
  /** New preferences are in force (file content changed and is valid). */
  change: [prefs: Prefs];
  /** The file changed but is not valid: the previous preferences stay in force. */
  invalid: [error: PrefsError];
}

export class PrefsWatcher extends EventEmitter<PrefsWatcherEvents> {
  private readonly path: string;
  private readonly overrides: PrefsOverrides;
  private filePrefs: Prefs;
  private raw: RawPrefs;
  private lastText: string;
  private lastStat = '';
  private lastBadText: string | null = null;
  private watcher: FSWatcher | null = null;
  private poll: NodeJS.Timeout | null = null;
  private debounce: NodeJS.Timeout | null = null;
  /** Why the file in place is not in force, if it is not. */
  lastError: PrefsError | null = null;

  /**
   * Loads the file (creating it with the defaults if missing). A bad file at
   * start throws PrefsError: with no last good preferences to keep, the node
   * must not guess the owner's limits.
   */
  constructor(private readonly opts: PrefsWatcherOptions) {
    super();
    this.path = opts.path;
    this.overrides = opts.overrides ?? {};
    const first = loadPrefsFile(this.path);
    this.filePrefs = first.prefs;
    this.raw = first.raw;
    this.lastText = first.text;
    this.lastStat = this.statKey();
  }

  /** The preferences in force: the last good file with the flags on top. */
  get current(): Prefs {
    return applyOverrides(this.filePrefs, this.overrides);
  }

  /** The last good file's raw table (for `prefs set`). */
  get rawPrefs(): RawPrefs {
    return this.raw;
  }

  start(): this {
    if (this.opts.fsWatch !== false) this.startFsWatch();
    this.poll = setInterval(() => {
      const key = this.statKey();
      if (key === this.lastStat) return;
      this.lastStat = key; // once per change: a poll faster than the debounce must not keep postponing the read
      this.schedule();
    }, this.opts.pollMs ?? 2000);
    this.poll.unref();
    return this;
  }

  private startFsWatch(): void {
    try {
      this.watcher = watch(dirname(this.path), { persistent: false }, (_event, name) => {
        if (name === null || name === basename(this.path)) this.schedule();
      });
      this.watcher.on('error', () => {
        this.watcher?.close();
        this.watcher = null; // the poll carries on alone
      });
    } catch {
      this.watcher = null;
    }
  }

  close(): void {
    this.watcher?.close();
    this.watcher = null;
    if (this.poll) clearInterval(this.poll);
    if (this.debounce) clearTimeout(this.debounce);
    this.poll = this.debounce = null;
  }

  private statKey(): string {
    try {
      const s = statSync(this.path);
      return `${s.ino}:${s.size}:${s.mtimeMs}`;
    } catch {
      return 'missing';
    }
  }

  private schedule(): void {
    if (this.debounce) clearTimeout(this.debounce);
    this.debounce = setTimeout(() => {
      this.debounce = null;
      this.reload();
    }, this.opts.debounceMs ?? 100);
    this.debounce.unref();
  }

  /** Reads the file now; returns whether new preferences came into force. */
  reload(): boolean {
    this.lastStat = this.statKey();
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (e) {
      return this.reject(`missing`, new PrefsError(`${this.path}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); keeping the preferences in force`));
    }
    if (text === this.lastText) {
      this.lastError = null;
      return false;
    }
    let parsed: { raw: RawPrefs; prefs: Prefs };
    try {
      parsed = parsePrefsText(text);
    } catch (e) {
      const pe = e as PrefsError;
      return this.reject(text, new PrefsError(`${this.path}: ${pe.message}; keeping the preferences in force`, pe.key));
    }
    this.lastText = text;
    this.lastBadText = null;
    this.lastError = null;
    this.filePrefs = parsed.prefs;
    this.raw = parsed.raw;
    this.emit('change', this.current);
    return true;
  }

  private reject(badText: string, error: PrefsError): false {
    this.lastError = error;
    if (badText !== this.lastBadText) {
      this.lastBadText = badText;
      this.emit('invalid', error);
    }
    return false;
  }
}
