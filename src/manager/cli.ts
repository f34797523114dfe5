// `dht-manager`: the one service an operator runs. Each verb lives in its own
// module and registers itself here.
import { createProgram, runProgram } from '../cli.js';

const program = createProgram(
  'dht-manager',
  'volcrawl manager: channel database, adaptive recrawl scheduling and storage',
);

await runProgram(program);
