// vitest's file order for `vitest run`: the slowest files first, so that on
// two workers the long pole starts at once and the short files fill in around
// it (longest-processing-time-first scheduling). vitest orders by durations it
// cached from earlier runs, but a clean clone (the project's CI) has no cache,
// and there it keeps the glob order, which started the 170 s network test
// wherever it fell. SLOW_FIRST fixes the order of the files that took ≥ 8 s in
// a clean-clone run, in every run: longest first, except that the short NAT
// files (test/nat: namespaces, nftables, several processes each) are spaced
// apart, since neighbours in this list tend to run side by side
// (test/nat/libp2p took 77 s beside test/nat/harness on two workers, 41 s on
// one, load 27). The other files follow in vitest's own order. Add a file
// here when it grows slow (test/sequencer.test.ts checks the names).
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

export const SLOW_FIRST = [
  'test/node/network.test.ts',
  'test/node/bounds.test.ts',
  'test/nat/tasks.test.ts',
  'test/manager/demo.test.ts',
  'test/manager/processes.test.ts',
  'test/package.test.ts',
  'test/node/crawl-e2e.test.ts',
  'test/nat/harness.test.ts',
  'test/sim/sim.test.ts',
  'test/trust/integrity.test.ts',
  'test/nat/holepunch.test.ts',
  'test/manager/dashboard.test.ts',
  'test/nat/libp2p.test.ts',
  'test/trust/service.test.ts',
  'test/nat/push-fail.test.ts',
  'test/manager/serve.test.ts',
  'test/node/owner-network.test.ts',
];

export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const rank = (f: TestSpecification): number => {
      const i = SLOW_FIRST.indexOf(relative(root, f.moduleId).split('\\').join('/'));
      return i === -1 ? SLOW_FIRST.length : i;
    };
    // Array.prototype.sort is stable: unlisted files keep vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
