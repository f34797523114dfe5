// What the observers' answers say about this node's NAT (pure). A punch works
// only if the punch port keeps one public mapping whoever it talks to
// (endpoint-independent mapping, the "cone" NATs of home routers and most
// carrier-grade NATs): then the mapping an observer saw is the one the peer's
// SYN must be sent to. A NAT that gives each destination its own port
// ("symmetric") shows it as two observers seeing different ports (or
// addresses); there the peer cannot know where to send, and the punch is not
// tried. With one observer the type is unknown and the punch is tried with
// that observer's view.
import { sameEndpoint, type Endpoint } from './endpoint.js';

export type NatType = 'unknown' | 'cone' | 'symmetric';

export interface Observation {
  /** The observer's peer id. */
  observer: string;
  /** The ip:port it saw our punch port at. */
  seen: Endpoint;
}

export interface PunchMapping {
  natType: NatType;
  /** The punch port's public ip:port (for a symmetric NAT: what the first observer saw, valid toward it only). */
  mapping: Endpoint | null;
  observations: Observation[];
}

export function classifyMapping(observations: readonly Observation[]): PunchMapping {
  const obs = [...observations];
  const first = obs[0];
  if (first === undefined) return { natType: 'unknown', mapping: null, observations: obs };
  if (obs.some((o) => !sameEndpoint(o.seen, first.seen))) return { natType: 'symmetric', mapping: first.seen, observations: obs };
  const observers = new Set(obs.map((o) => o.observer));
  return { natType: observers.size >= 2 ? 'cone' : 'unknown', mapping: first.seen, observations: obs };
}
