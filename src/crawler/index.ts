// The crawler's public surface.
export * from './task.js';
export { TaskManager, type TaskManagerExtraOptions } from './manager.js';
export { runTask, type ThreadOptions, type ThreadOutcome } from './thread.js';
export { TokenBucket } from './bandwidth.js';
export { DEFAULT_LIMITS, USER_AGENT, ROBOTS_TOKEN, type CrawlLimits } from './limits.js';
export { isPrivateAddress } from './safety.js';
export { sha1_32 } from './hash.js';
