// The idle heap trim (src/node/idle-heap.ts): a full collection only while
// the node holds no task and only past the slack bound; V8's collection,
// reached without --expose-gc on the command line, really frees garbage.
import { describe, expect, it } from 'vitest';
import { fullCollection, idleHeapService, oldSpaceSlack, trimIfIdle } from '../../src/node/idle-heap.js';

describe('idle heap trim', () => {
  it('collects only when idle and the old space holds more than the bound unused', () => {
    let n = 0;
    const collect = () => void n++;
    const look = (idle: boolean, slack: number) => trimIfIdle({ isIdle: () => idle, slack: () => slack, collect, slackBytes: 3 << 20 });
    expect(look(false, 10 << 20)).toBe(false); // a task runs: V8's own schedule
    expect(look(true, 3 << 20)).toBe(false); // at the bound
    expect(look(true, 2 << 20)).toBe(false);
    expect(n).toBe(0);
    expect(look(true, (3 << 20) + 1)).toBe(true);
    expect(n).toBe(1);
  });

  it('runs as a node service and stops with it', async () => {
    let idle = true;
    const svc = idleHeapService({ isIdle: () => idle, everyMs: 10, slack: () => 8 << 20, collect: () => undefined });
    svc.start();
    while (svc.collections < 2) await new Promise((r) => setTimeout(r, 10));
    idle = false;
    svc.stop?.();
    const after = svc.collections;
    await new Promise((r) => setTimeout(r, 50));
    expect(svc.collections).toBe(after);
  });

  it("V8's full collection frees what nothing references", () => {
    const gc = fullCollection();
    gc();
    const before = process.memoryUsage().heapUsed;
    const holder: { junk?: number[][] } = { junk: Array.from({ length: 2000 }, (_, i) => Array.from({ length: 1000 }, (__, j) => i + j + 0.5)) };
    expect(process.memoryUsage().heapUsed).toBeGreaterThan(before + 8 * 2 ** 20);
    delete holder.junk;
    gc();
    expect(process.memoryUsage().heapUsed).toBeLessThan(before + 4 * 2 ** 20);
    expect(oldSpaceSlack()).toBeGreaterThanOrEqual(0);
  });
});
