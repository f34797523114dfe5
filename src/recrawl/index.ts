// Scale-adaptable recrawl strategies (Xu et al., NPC 2010, §3): FIXED, IIR and ICR,
// and CAF, ours: capacity-aware freshness (caf.ts).
//
// Pure: no I/O, no clock, no randomness. Time is passed in by the caller in one
// consistent unit (the simulator uses minutes); download times use the same unit.
// The whole state is plain JSON-serialisable data so a manager can persist it.
//
// Rank convention: group 0 is the HIGHEST priority (most frequently changing
// channels, shortest interval), as in the paper's §3 pseudocode. The paper's
// Tables 1–4 number the other way (their rank 4 is the 60-minute group):
// paper rank r  <->  our group K-1-r. See docs/recrawl.md.
//
// One module per job: options.ts (names, options, defaults), state.ts (the
// state, its creation, persistence and the interval a channel runs at),
// record.ts (what the caller reports), round.ts (what rounds share), iir.ts,
// icr.ts, caf.ts (the strategies' rounds), tally.ts (the per-group tally ICR
// and CAF read), schedule.ts (when and which round).
// FIXED is the absence of rounds.

export * from './options.js';
export * from './state.js';
export * from './record.js';
export { checkPriorities, type RoundReport } from './round.js';
export * from './iir.js';
export * from './icr.js';
export * from './caf.js';
export * from './tally.js';
export * from './schedule.js';
