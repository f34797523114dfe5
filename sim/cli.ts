// `sim`: the discrete-event simulator that replays the paper's experiments.
import { createProgram, runProgram } from '../src/cli.js';

const program = createProgram(
  'sim',
  "volcrawl simulator: replay the paper's rec/ruc experiments on measured latency data",
);

await runProgram(program);
