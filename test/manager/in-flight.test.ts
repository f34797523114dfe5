// The compact in-flight set (domain/in-flight.ts) against the plain map it replaced.
import { describe, expect, it } from 'vitest';
import { InFlightSet, hostKey } from '../../src/manager/domain/in-flight.js';
import { taskId } from '../../src/manager/domain/task-builder.js';
import type { InFlight } from '../../src/manager/domain/schedule-record.js';
import { createRng } from '../../src/rng.js';

describe('InFlightSet', () => {
  it('answers as a map of channel → InFlight with a host gate, through adds, ends and slot reuse', () => {
    const set = new InFlightSet();
    const model = new Map<string, InFlight>();
    // The plain version's host gate: host key → the channel that last took it.
    const hosts = new Map<number, string>();
    const release = (ch: string) => {
      const f = model.get(ch);
      if (f !== undefined && hosts.get(f.hh) === ch) hosts.delete(f.hh);
    };
    const rng = createRng(7);
    const t0 = Date.UTC(2026, 0, 1);
    for (let step = 0; step < 5000; step++) {
      const ch = `c${Math.floor(rng.next() * 300).toString(36)}`;
      const r = rng.next();
      if (r < 0.5) {
        const issuedAt = t0 + step * 1000;
        // Now and then an id the manager would not make (kept as it is).
        const task = r < 0.05 ? `odd-${step}` : taskId(ch, issuedAt, step);
        const f: InFlight = { task, issuedAt, round: step % 7, deadline: issuedAt + 60_000 + step, running: r < 0.2, hh: hostKey(`h${Math.floor(rng.next() * 200)}`) };
        if (r < 0.1) f.x = 5;
        set.add(ch, f);
        release(ch);
        model.set(ch, f);
        hosts.set(f.hh, ch);
      } else if (r < 0.8) {
        expect(set.end(ch)).toEqual(model.get(ch));
        release(ch);
        model.delete(ch);
      } else if (r < 0.9) {
        set.markRunning(ch);
        const f = model.get(ch);
        if (f !== undefined) f.running = true;
      } else {
        set.addData(ch, 2);
        const f = model.get(ch);
        if (f !== undefined) f.x = (f.x ?? 0) | 2;
      }
      if (step % 250 === 0 || step === 4999) {
        expect(set.size).toBe(model.size);
        for (const [c, f] of model) {
          expect(set.get(c)).toEqual(f);
          expect(set.isActive(c, f.task)).toBe(true);
          expect(set.isActive(c, f.task + 'x')).toBe(false);
        }
        for (let h = 0; h < 200; h++) expect(set.busy(hostKey(`h${h}`))).toBe(hosts.has(hostKey(`h${h}`)));
        const running = [...model.values()].filter((f) => f.running).length;
        expect(set.counts()).toEqual({ issued: model.size - running, running });
        expect(new Set(set.list(Infinity, 'running').map(([c]) => c))).toEqual(new Set([...model].filter(([, f]) => f.running).map(([c]) => c)));
        const now = t0 + step * 1000;
        expect(new Set(set.overdue(now, 0).map(([c, t]) => `${c} ${t}`))).toEqual(new Set([...model].filter(([, f]) => now > f.deadline).map(([c, f]) => `${c} ${f.task}`)));
      }
    }
  });

  it('keeps a host busy while any of its channels holds it, and frees it when that one ends', () => {
    const set = new InFlightSet();
    const hh = hostKey('a.example');
    set.add('c1', { task: taskId('c1', 1000, 1), issuedAt: 1000, round: 0, deadline: 2000, running: false, hh });
    expect(set.busy(hh)).toBe(true);
    set.add('c2', { task: taskId('c2', 1000, 2), issuedAt: 1000, round: 0, deadline: 2000, running: false, hh });
    set.end('c1');
    expect(set.busy(hh)).toBe(true); // c2 holds it now
    set.end('c2');
    expect(set.busy(hh)).toBe(false);
  });
});
