// Reading what a process inside the NAT test network prints.
import type { ProcessHandle } from '../processes.js';

/** Resolves with the first line matching `re` (its match), including lines printed before the call; rejects if the process exits first or `timeoutMs` passes. */
export function waitForLine(h: ProcessHandle, re: RegExp, timeoutMs = 60_000): Promise<RegExpExecArray> {
  for (const line of h.output().split('\n').slice(1)) {
    const m = re.exec(line);
    if (m !== null) return Promise.resolve(m);
  }
  return new Promise((done, fail) => {
    let settled = false;
    const finish = (f: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      unfollow();
      f();
    };
    const timer = setTimeout(() => finish(() => fail(new Error(`${h.name}: no line matching ${re} within ${timeoutMs} ms\n${h.output(40)}`))), timeoutMs);
    const unfollow = h.follow((line) => {
      const m = re.exec(line);
      if (m !== null) finish(() => done(m));
    });
    void h.exited.then(() => finish(() => fail(new Error(`${h.name} exited (${h.exitStatus}) before printing ${re}\n${h.output(40)}`))));
  });
}

/** Collects stdout+stderr lines until the process exits; rejects on a non-zero exit or after `timeoutMs` (then kills it). */
export async function linesUntilExit(h: ProcessHandle, timeoutMs = 60_000): Promise<string[]> {
  const lines: string[] = [];
  const unfollow = h.follow((l) => lines.push(l));
  const timer = setTimeout(() => void h.kill('SIGKILL'), timeoutMs);
  await h.exited;
  clearTimeout(timer);
  unfollow();
  if (h.proc.exitCode !== 0) throw new Error(`${h.name} ended with ${h.exitStatus}\n${h.output(40)}`);
  return lines;
}

/** The last line of `lines` that parses as a JSON object. */
export function lastJson<T>(lines: string[]): T {
  for (const l of [...lines].reverse()) {
    if (!l.startsWith('{')) continue;
    try {
      return JSON.parse(l) as T;
    } catch {
      // not JSON after all
    }
  }
  throw new Error(`no JSON line in:\n${lines.join('\n')}`);
}
