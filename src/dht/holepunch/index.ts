// The hole punch's public face (docs/nat.md, "Hole punching (phase 2b)"): the
// libp2p service factory, its options, events and counters, and the protocol
// names a node must serve.
export { holePunch } from './service.js';
export type { HolePunch, HolePunchComponents, HolePunchEvents, HolePunchInit, HolePunchStats, PunchFailure, PunchResult, PunchRole, PunchSuccess } from './service.js';
export { HOLEPUNCH_PROTOCOL, PUNCH_FAILURE_REASONS } from './coordination.js';
export type { PunchFailureReason } from './coordination.js';
export { OBSERVED_ADDR_PROTOCOL } from './observed-addr.js';
export type { NatType, PunchMapping } from './mapping.js';
