// Trust no volunteer: spot-check verification, reputation and quarantine
// (issue #13, the pure decision logic). See docs/trust.md.
export * from './stats.js';
export * from './text.js';
export * from './reputation-options.js';
export * from './reputation.js';
export * from './reputation-summary.js';
export * from './compare.js';
export * from './spot-check.js';
export * from './intro.js';
export * from './verifier.js';
export * from './tie-break.js';
export * from './loss.js';
