// Network coordinates (Vivaldi), host placement, latency data and scoring.
export * from './options.js';
export * from './vivaldi.js';
export * from './place.js';
export * from './latency.js';
export * from './embed.js';
export * from './eval.js';
export * from './plausibility.js';
export * from './adaptive.js';
export * from './loop-lag.js';
export * from './app-coord.js';
