// A process that counts bytes into a ledger as fast as it can, flushing after
// each count and printing what it flushed, until it is killed (test/node/ledger.test.ts).
import { Ledger } from '../../src/node/ledger.js';

const path = process.argv[2] as string;
const ledger = new Ledger({ path, autoFlushMs: 0, periods: { timeZone: 'UTC', dayStartsAt: 0, monthStartsOn: 1, dailyCapBytes: null, monthlyCapBytes: null }, now: () => Date.UTC(2026, 5, 1, 12) });
for (let i = 1; ; i++) {
  ledger.addTransfer(1000, 10);
  ledger.flush();
  process.stdout.write(`${i}\n`);
  if (i % 50 === 0) await new Promise((r) => setImmediate(r));
}
