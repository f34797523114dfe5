// The owner in charge of a running volunteer: the preference file (reloaded
// while it runs), the run policy decided every few seconds from the clock, the
// OS probes and the transfer ledger, the owner's pause and resume (persisted
// in <data-dir>/run-state.json, so a pause survives a restart) and the control
// socket `status | pause | resume | prefs` talk to. A NodeService of its own:
// join builds it before the node (so a node that must start paused never takes
// a task) and plugs it in with `services`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { FetchBudget } from '../crawler/thread.js';
import type { TaskResult } from '../crawler/task.js';
import { writeFileAtomic } from './atomic-file.js';
import { ControlServer, type ControlHandler } from './control.js';
import { Ledger, periodConfig } from './ledger.js';
import type { NodeService, VolunteerNode } from './node.js';
import { linuxProbes, type OsProbes } from './os-probe.js';
import { OwnerReport } from './owner-report.js';
import type { OperatorConfig, ReachKind } from '../dht/volunteer-state.js';
import type { NetworkStatus, OwnerStatus } from './owner-status.js';
import { describePrefs, prefsPath, setPrefInFile, type Prefs, type PrefsOverrides } from './prefs.js';
import { PrefsWatcher } from './prefs-watch.js';
import { decideRunState, initialMemory, ownerPause, ownerResume, type PolicyMemory, type RunDecision } from './run-policy.js';

export const RUN_STATE_FILE = 'run-state.json';
/** Longest wait for a pause's hand-over before `pause` answers, ms. */
const PAUSE_ANSWER_MS = 5000;

const runStateSchema = z.object({
  version: z.literal(1),
  owner: z.object({ since: z.number().int().min(0), until: z.number().int().min(0).nullable() }).nullable(),
});

export interface OwnerControlOptions {
  dataDir: string;
  /** Flags given to join: they win over the file. */
  overrides: PrefsOverrides;
  log: Logger;
  /** How often the policy is decided, ms (default 5000). */
  tickMs?: number;
  /** Epoch ms (default Date.now). */
  now?: () => number;
  /** The OS probes (default: Linux /proc and /sys). */
  probes?: (windowMs: number) => OsProbes;
  /** Stat poll of the preference file, ms (default 2000). */
  prefsPollMs?: number;
  /** The manager's peer id: the state is reported to it (running, or paused and why). */
  manager?: string;
  /** The operator's configuration, signed by the manager and verified, each time the manager sends it. */
  onOperatorConfig?: (cfg: OperatorConfig) => void;
  /** How others reach this node (behind NAT), sent with every state report. */
  reach?: () => ReachKind | undefined;
  /** The manager asks this volunteer to pull its tasks for `ms` (its pushes failed; the reply to a state report). */
  onPullAdvice?: (ms: number) => void;
  /** Whether to re-report the state every `reportEveryMs` without a change (behind NAT: how the manager's advice arrives). */
  reportPeriodically?: () => boolean;
  reportEveryMs?: number;
  /** Reachability and coordinate counters for the status (once the node runs). */
  network?: () => NetworkStatus | undefined;
  /** The libp2p stack's own TCP bytes (src/dht/traffic.ts): added to the ledger at every policy step, so the overlay's traffic counts against the caps too. */
  traffic?: { take(): { read: number; written: number } };
}

/** What the owner's preferences tune in the running crawler. */
export type PrefsApplier = (prefs: Prefs) => void;

export class OwnerControl {
  readonly watcher: PrefsWatcher;
  readonly ledger: Ledger;
  readonly probes: OsProbes;
  private memory: PolicyMemory;
  private decision: RunDecision;
  private readonly now: () => number;
  private readonly appliers: PrefsApplier[] = [];
  private node: VolunteerNode | undefined;
  private timer: NodeJS.Timeout | undefined;
  private soon: NodeJS.Timeout | undefined;
  private control: ControlServer | undefined;
  private report: OwnerReport | undefined;
  /** Transitions one at a time: a pause's hand-over completes before a resume. */
  private chain: Promise<unknown> = Promise.resolve();
  private closed = false;

  /** Loads the preferences (a bad file throws PrefsError: no last good ones to keep), the ledger and the persisted pause. */
  constructor(private readonly o: OwnerControlOptions) {
    this.now = o.now ?? Date.now;
    this.watcher = new PrefsWatcher({ path: prefsPath(o.dataDir), overrides: o.overrides, ...(o.prefsPollMs !== undefined ? { pollMs: o.prefsPollMs } : {}) });
    const prefs = this.watcher.current;
    this.ledger = new Ledger({ path: Ledger.path(o.dataDir), periods: periodConfig(prefs), now: this.now });
    if (this.ledger.warning) o.log.warn({ ledger: Ledger.path(o.dataDir) }, this.ledger.warning);
    this.probes = (o.probes ?? ((windowMs) => linuxProbes({ windowMs })))(prefs.pauseWhen.cpuWindowMs);
    this.probes.cpu.sample();
    this.memory = { ...initialMemory(this.now()), owner: this.loadOwnerPause() };
    this.decision = this.decide();
    this.memory = this.decision.memory;
  }

  get prefs(): Prefs {
    return this.watcher.current;
  }

  /** Whether the node must start without taking tasks. */
  get paused(): boolean {
    return this.decision.state === 'paused';
  }

  /** The owner's transfer cap for the crawler's threads: a reservation per request; a thread that finds none left asks for a policy decision now. */
  get budget(): FetchBudget {
    return { reserve: (maxBytes) => this.ledger.reserve(maxBytes) };
  }

  /** A thread waits for budget: decide now rather than at the next tick, so the node pauses and hands its tasks on. */
  budgetSpent(): void {
    if (this.soon !== undefined || this.closed) return;
    this.soon = setTimeout(() => {
      this.soon = undefined;
      void this.tick();
    }, 200);
    this.soon.unref();
  }

  /** Registers what follows the preferences (threads, queue, bandwidth, block list); called at once with the current ones. */
  onPrefs(apply: PrefsApplier): void {
    this.appliers.push(apply);
    apply(this.prefs);
  }

  /** A result part or archive batch went up to a storage node: a final result counts as a task given. Its bytes count against the cap: through the libp2p sockets when `traffic` is given, else as the payload's size. */
  noteUpload(bytes: number, result?: TaskResult): void {
    if (this.o.traffic === undefined) this.ledger.addTransfer(0, bytes);
    if (result?.final === true) this.ledger.addTask(result.stats?.pagesFetched ?? 0);
  }

  /** The NodeService: control socket, preference reloads and the policy tick, once the node runs. */
  service(node: VolunteerNode): NodeService {
    return {
      name: 'owner control',
      start: async () => {
        this.node = node;
        this.watcher.on('change', (p) => this.prefsChanged(p));
        this.watcher.on('invalid', (err) => this.o.log.warn({ prefs: prefsPath(this.o.dataDir), err: err.message }, 'preference file not valid; keeping the last good preferences'));
        this.watcher.start();
        this.control = await ControlServer.start(this.o.dataDir, this.handler());
        if (this.control.note) this.o.log.warn(this.control.note);
        this.ledger.tick(!this.paused, this.now());
        if (this.paused) await this.transition(this.decision);
        if (this.o.manager !== undefined) {
          this.report = new OwnerReport({
            libp2p: node.libp2p,
            manager: this.o.manager,
            state: () => {
              const reach = this.o.reach?.();
              return { state: this.decision.state, reasons: [...this.decision.reasons], since: Math.floor(this.decision.memory.since), ...(reach !== undefined ? { reach } : {}) };
            },
            onConfig: (cfg) => this.o.onOperatorConfig?.(cfg),
            ...(this.o.onPullAdvice !== undefined ? { onPullAdvice: this.o.onPullAdvice } : {}),
            ...(this.o.reportPeriodically !== undefined ? { periodic: this.o.reportPeriodically } : {}),
            ...(this.o.reportEveryMs !== undefined ? { everyMs: this.o.reportEveryMs } : {}),
            log: this.o.log,
          });
          this.report.start();
        }
        this.timer = setInterval(() => void this.tick(), this.o.tickMs ?? 5000);
        this.timer.unref();
        this.o.log.info({ state: this.decision.state, reasons: this.decision.reasons, prefs: describePrefs(this.prefs) }, 'owner control ready');
      },
      stop: async () => {
        this.closed = true;
        this.report?.stop();
        if (this.timer) clearInterval(this.timer);
        if (this.soon) clearTimeout(this.soon);
        this.watcher.close();
        await this.control?.close();
        this.ledger.tick(!this.paused, this.now());
        this.ledger.close();
      },
    };
  }

  /** How others reach this node changed: the manager is told with the state. */
  reachChanged(): void {
    this.report?.changed();
  }

  /** Closes what the constructor opened, for a node that never started. */
  abandon(): void {
    this.watcher.close();
    this.ledger.close();
  }

  private decide(): RunDecision {
    const t = this.o.traffic?.take();
    if (t !== undefined && t.read + t.written > 0) this.ledger.addTransfer(t.read, t.written);
    return decideRunState(this.memory, {
      now: this.now(),
      prefs: this.prefs,
      cpuOtherPercent: this.probes.cpu.otherPercent(),
      power: this.probes.power(),
      remaining: this.ledger.remaining(),
    });
  }

  /** One policy step: sample, decide, count the time, pause or resume on a change. */
  private tick(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.probes.cpu.sample();
    return this.step();
  }

  private step(): Promise<void> {
    const d = this.decide();
    const was = this.decision;
    this.memory = d.memory;
    this.decision = d;
    this.ledger.tick(was.state === 'running', this.now());
    if (d.changed || d.reasons.join() !== was.reasons.join()) {
      this.o.log.info({ state: d.state, reasons: d.reasons, details: d.details }, d.state === 'paused' ? 'paused' : 'running');
      this.report?.changed();
    }
    return d.changed ? this.transition(d) : Promise.resolve();
  }

  private transition(d: RunDecision): Promise<void> {
    const node = this.node;
    if (node === undefined) return Promise.resolve();
    const next = this.chain.then(async () => {
      if (this.closed) return;
      // The decision may have flipped back while the previous transition ran.
      const run = this.decision.state === 'running';
      const r = await node.takeTasks(run);
      if (!run) this.o.log.info({ reasons: d.reasons, migrated: r.migrated.length, lost: r.lost.length }, 'stopped taking tasks');
    });
    this.chain = next.catch((err: unknown) => this.o.log.error({ err: String(err) }, 'pause/resume failed'));
    return this.chain as Promise<void>;
  }

  private prefsChanged(p: Prefs): void {
    this.ledger.setPeriods(periodConfig(p));
    this.probes.cpu.windowMs = p.pauseWhen.cpuWindowMs;
    for (const a of this.appliers) {
      try {
        a(p);
      } catch (err) {
        this.o.log.error({ err: String(err) }, 'could not apply the new preferences');
      }
    }
    this.o.log.info({ prefs: describePrefs(p) }, 'preferences reloaded');
    void this.step();
  }

  private runStatePath(): string {
    return join(this.o.dataDir, RUN_STATE_FILE);
  }

  private loadOwnerPause(): PolicyMemory['owner'] {
    let text: string;
    try {
      text = readFileSync(this.runStatePath(), 'utf8');
    } catch {
      return null;
    }
    let json: unknown = null;
    try {
      json = JSON.parse(text);
    } catch {
      // reported below as not valid
    }
    const r = runStateSchema.safeParse(json);
    if (!r.success) {
      this.o.log.warn({ file: this.runStatePath() }, 'run state file not valid; ignoring it (not paused by the owner)');
      return null;
    }
    return r.data.owner;
  }

  private saveOwnerPause(): void {
    writeFileAtomic(this.runStatePath(), JSON.stringify({ version: 1, owner: this.memory.owner }) + '\n');
  }

  status(): OwnerStatus {
    const node = this.node;
    const now = this.now();
    const load = node?.runner.load() ?? { running: 0, queued: 0 };
    const u = this.ledger.usage(now);
    const rem = this.ledger.remaining(now);
    const network = this.o.network?.();
    return {
      peerId: node?.peerId ?? '',
      dataDir: this.o.dataDir,
      state: this.decision.state,
      since: this.decision.memory.since,
      reasons: this.decision.reasons,
      details: this.decision.details,
      notes: this.decision.notes,
      tasks: { running: load.running, queued: load.queued },
      remaining: { day: rem.day, month: rem.month },
      today: u.today,
      thisMonth: u.thisMonth,
      history: this.ledger.history(7, now),
      prefsFile: prefsPath(this.o.dataDir),
      prefsError: this.watcher.lastError?.message ?? null,
      ...(network !== undefined ? { network } : {}),
    };
  }

  private handler(): ControlHandler {
    return {
      status: () => this.status(),
      pause: async (forMs) => {
        this.memory = ownerPause(this.memory, this.now(), forMs);
        this.saveOwnerPause();
        // The runner stops at once; handing the tasks on may take longer than the
        // owner should wait for an answer (the CLI gives up after 15 s).
        await Promise.race([this.step(), new Promise((r) => setTimeout(r, PAUSE_ANSWER_MS).unref())]);
        return this.status();
      },
      resume: async () => {
        this.memory = ownerResume(this.memory);
        this.saveOwnerPause();
        await this.step();
        return this.status();
      },
      prefsGet: () => ({ file: prefsPath(this.o.dataDir), prefs: this.prefs, error: this.watcher.lastError?.message ?? null }),
      prefsSet: (key, value) => {
        setPrefInFile(prefsPath(this.o.dataDir), key, value);
        this.watcher.reload();
        if (this.watcher.lastError) throw this.watcher.lastError;
        return { file: prefsPath(this.o.dataDir), prefs: this.prefs };
      },
    };
  }
}
