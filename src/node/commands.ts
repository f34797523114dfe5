// The `volunteer-crawler` verbs. Each lives in its own module and registers
// itself here.
import { createProgram, runProgram } from '../cli.js';
import { registerJoin } from './join.js';

const program = createProgram(
  'volunteer-crawler',
  'volcrawl volunteer: lend this PC to a peer-to-peer web crawl, politely and at low priority',
);

registerJoin(program);
// `join` never needs the standalone crawl's modules (HTTP client, HTML parser,
// WARC writer, progress bars): a joined node loads the crawler on its first
// task (lazy-runner.ts). Every other invocation may ask for `crawl`, or for
// the help that lists it.
// The owner's verbs (status, pause, resume, prefs, service) talk to a running
// node; `join` needs none of them either.
if (process.argv[2] !== 'join') {
  (await import('./crawl-command.js')).registerCrawl(program);
  (await import('./owner-cli.js')).registerOwnerVerbs(program);
}

await runProgram(program);
