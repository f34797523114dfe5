// Where a bench:integrity run's extra crawls went, read from its --log-dir:
// every second crawl (why, whose task, who crawled it), every third crawl,
// how each disagreement ended, status changes and quarantines, with the
// volunteers named as the benchmark started them (honest-<i>,
// malicious-<i>-<mode>), then a tally per kind and subject.
//
//   npm run bench:integrity -- --json --seed 1 --log-dir /tmp/run1
//   node bin/run-ts.js bench/integrity-log.ts /tmp/run1
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2];
if (dir === undefined || dir === '--help' || dir === '-h') {
  process.stdout.write('usage: node bin/run-ts.js bench/integrity-log.ts <log-dir of a bench:integrity run>\n');
  process.exit(dir === undefined ? 2 : 0);
}

type Line = Record<string, unknown> & { msg?: string; time?: number };
const parse = (text: string): Line[] =>
  text.split('\n').flatMap((l) => {
    try {
      const v: unknown = JSON.parse(l);
      return typeof v === 'object' && v !== null ? [v as Line] : [];
    } catch {
      return [];
    }
  });

let files: string[];
try {
  files = readdirSync(dir).filter((f) => f.endsWith('.log'));
} catch (err) {
  process.stderr.write(`cannot read ${dir}: ${String(err)}\n`);
  process.exit(2);
}
if (!files.includes('manager.log')) {
  process.stderr.write(`${dir} holds no manager.log (run the benchmark with --log-dir)\n`);
  process.exit(2);
}
const names = new Map<string, string>();
for (const f of files) {
  if (f === 'manager.log') continue;
  const started = parse(readFileSync(join(dir, f), 'utf8')).find((l) => typeof l.peerId === 'string');
  if (started !== undefined) names.set(started.peerId as string, f.slice(0, -'.log'.length));
}
const name = (id: unknown): string => (typeof id === 'string' ? (names.get(id) ?? id.slice(-8)) : '-');
const role = (id: unknown): string => (name(id).startsWith('honest-') ? 'honest' : name(id));
const lines = parse(readFileSync(join(dir, 'manager.log'), 'utf8'));
const t0 = lines[0]?.time ?? 0;
const tally = new Map<string, number>();
const count = (k: string): void => void tally.set(k, (tally.get(k) ?? 0) + 1);
const out: string[] = [];
for (const l of lines) {
  const t = `${Math.round(((l.time ?? t0) - t0) / 1000)}`.padStart(5);
  const say = (s: string): void => void out.push(`${t} s  ${s}`);
  switch (l.msg) {
    case 'spot check issued':
      say(`check (${String(l.reason)}) of ${name(l.volunteer)}'s task by ${name(l.verifier)}${l.verifierOwesIntro === true ? ' (who owes its intro)' : ''}: ${String(l.status)}, ${String(l.pages)} pages with text, ${String(l.live)} live`);
      count(`second crawl, ${String(l.reason)}, of ${role(l.volunteer)}`);
      if (l.verifierOwesIntro === true) count('second crawl by a newcomer that owed its intro');
      break;
    case 'spot check compared':
      say(`  ${String(l.verdict)}: ${name(l.volunteer)} against ${name(l.verifier)} ${Array.isArray(l.reasons) ? l.reasons.join('; ').slice(0, 120) : ''}`);
      break;
    case 'disagreement: third crawl issued':
      say(`third crawl of ${name(l.volunteer)}'s task (verifier ${name(l.verifier)}) by ${name(l.third)}`);
      count(`third crawl, of ${role(l.volunteer)} against ${role(l.verifier)}`);
      break;
    case 'disagreement broken':
      say(`  ${String(l.note)}`);
      break;
    case 'disagreement broken by a stored crawl: no third crawl':
      say(`  settled with ${l.witness === true ? "a check crawl's witness" : 'a stored crawl'} of ${name(l.storedBy)}: ${String(l.note)}`);
      count(`settled with no third crawl${l.witness === true ? ' (witness)' : ''}`);
      break;
    case 'intro passed by stored text: no check crawl':
      say(`intro of ${name(l.volunteer)}'s task passed by stored text of ${Array.isArray(l.by) ? l.by.map(name).join(', ') : '-'} (${String(l.pages)} pages): no check crawl`);
      count(`intro passed by stored text, of ${role(l.volunteer)}`);
      break;
    case 'intro: stored text of the same page bodies differs, a second crawl decides':
      say(`  intro of ${name(l.volunteer)}: stored text differs on ${String(l.pages)} pages, a second crawl decides`);
      count(`intro contradicted by stored text, of ${role(l.volunteer)}`);
      break;
    case 'intro: no stored text of some page bodies, a second crawl decides':
      say(`  intro of ${name(l.volunteer)}: stored text matched ${String(l.matched)} pages, none for ${String(l.unreferenced)}: a second crawl`);
      count(`intro with nothing stored to compare, of ${role(l.volunteer)}`);
      break;
    case 'contradiction: no stored text settles it, a third crawl decides':
      count(`contradiction stored text did not settle (${l.side === 'b' ? 'it sided with the subject' : 'no reference'})`);
      break;
    case 'disagreement broken by stored text: no third crawl':
      say(`  ${name(l.volunteer)} outvoted by ${name(l.verifier)} and stored text of ${Array.isArray(l.by) ? l.by.map(name).join(', ') : '-'} (${String(l.pages)} pages): no third crawl`);
      count(`settled by stored text, of ${role(l.volunteer)}`);
      break;
    case 'volunteer status changed':
      say(`  ${name(l.volunteer)}: ${String(l.from)} → ${String(l.to)} (${String(l.outcome)}: ${String(l.reason).slice(0, 100)})`);
      break;
    case 'volunteer quarantined':
      say(`QUARANTINED ${name(l.volunteer)}`);
      break;
    case 'disagreement with a quarantined volunteer: no third crawl':
      say(`  moot: ${name(l.volunteer)} / ${name(l.verifier)}`);
      break;
    case 'no independent volunteer took the check in time: dropped':
    case 'a disagreement could not be broken in time: no third volunteer':
      say(`dropped (${String(l.stage)}) of ${name(l.volunteer)}`);
      count('dropped while waiting');
      break;
    default:
  }
}
process.stdout.write(`${out.join('\n')}\n\ntally:\n${[...tally].sort().map(([k, n]) => `${String(n).padStart(4)}  ${k}`).join('\n')}\n`);
