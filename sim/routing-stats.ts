// The routing block of a run's result (`routing` in `sim run --json`): its
// figures and the diagnosis of the sampled routes. Types only, apart from the
// miss classes' names: the engine, the result and the sweep read them without
// the router's machinery.

/** Routing figures of a run (the `routing` object of `sim run --json`, and more). */
export interface RoutingStats {
  policy: string;
  /** Chosen crawler's RTT to the host ÷ the best online crawler's (sampled tasks). */
  stretchMedian: number;
  stretchP90: number;
  /** The same for the oracle (least predicted RTT among online crawlers). */
  oracleStretchMedian: number;
  oracleStretchP90: number;
  /** The same for hash routing's first choice. */
  hashStretchMedian: number;
  hashStretchP90: number;
  stretchSamples: number;
  /** Chosen crawler's RTT ÷ the oracle's choice's (the policy's own cost, coordinate error aside). */
  overOracleMedian: number;
  overOracleP90: number;
  /** Mean RTT (ms) over the sampled tasks: chosen, oracle, best online, hash routing's. */
  sampledRttMs: { chosen: number; oracle: number; best: number; hash: number };
  /** Routed tasks: submissions and migrations. */
  routed: number;
  /** Tasks the search found no crawler for. */
  noCrawler: number;
  /** Tasks every attempt (and its forwards) refused. */
  refused: number;
  /** Crawlers the manager sent a task to, per routed task. */
  attemptsPerTask: number;
  /** Forwarding hops per placed task (0 when the first crawler took it), and per forwarded task. */
  forwardHopsMean: number;
  forwardHopsPerForwarded: number;
  /** Task-protocol messages (sends and forwards) per routed task. */
  sendsPerTask: number;
  /** Overlay costs: DHT lookups (paid, and answered from the Router's cache) and provides. */
  lookups: number;
  cacheHits: number;
  provides: number;
  /** Crawlers' counts of their finest announced cell (adaptive announcing, announce.ts): a lookup each. */
  densityCounts: number;
  /** (lookups + provides) and their modelled Kademlia messages, per routed task and per crawler-hour online. */
  dhtOpsPerTask: number;
  dhtMessagesPerTask: number;
  dhtOpsPerCrawlerHour: number;
  dhtMessagesPerCrawlerHour: number;
  lookupsPerTask: number;
  providesPerCrawlerHour: number;
  /** Records found of crawlers that had left. */
  staleRecords: number;
  /** Provider records the search offered as candidates per routed task (departed crawlers' too). */
  candidatesPerTask: number;
  /** With placement widen on: routes whose search was widened one level coarser
   * (no room within the spill bound), and those that found room there, per routed task. */
  widenedPerTask?: number;
  widenedToRoomPerTask?: number;
  /** With placement fullWalkEnds on: routes whose attempts stopped at a full
   * walk with candidates left untried, per routed task. */
  endedByWalkPerTask?: number;
  /** Why sampled routes missed the oracle's crawler (coordinate routing only). */
  diagnosis?: RoutingDiagnosis;
  /** Yardsticks beside the load imbalance (sim/imbalance.ts), when stats() is given the pages per crawler. */
  loadImbalanceIdeal?: number;
  loadImbalancePerCapacity?: number;
}

/** Why a sampled route did not go to the oracle's crawler (coordinate routing):
 * its cell lay outside the searched blocks; it did not announce the cell
 * searched (adaptive announcing: its own cell too sparse to go that fine,
 * or its finer record dropped); the cached answer of its cell was fetched
 * before its record; the answer was cut to the manager's own first
 * LOCAL_PROVIDER_CAP; the per-cell sample left it out; it was a candidate
 * with room but ranked below a less loaded one (the load term: a trade made
 * on purpose); it was a candidate without room (the task went to one with
 * room or was forwarded); anything else. */
export const MISS_CLASSES = ['outside', 'unannounced', 'staleAnswer', 'cut', 'sampledOut', 'load', 'full', 'other'] as const;
export type MissClass = (typeof MISS_CLASSES)[number];

/** The routing diagnosis: per class, the sampled routes and the stretch p90
 * had those routes gone to the oracle's crawler (the others unchanged). */
export interface RoutingDiagnosis {
  sampled: number;
  /** Routes that went to the oracle's crawler itself. */
  oracleTaken: number;
  classes: Record<MissClass, { count: number; p90IfOracle: number }>;
  /** The stretch p90 had the 'load' and 'full' routes gone to the oracle's
   * crawler: what the policy's trade of RTT for load (which the oracle,
   * ignoring load and queues, does not make) costs at p90. */
  p90IfOracleLoadTrade: number;
  /** The stretch p90 had each 'full' route gone to the crawler with room of
   * least predicted RTT instead (the oracle's yardstick with queues heeded):
   * near the run's own p90, the policy does what capacity allows. */
  p90IfRoomOracle: number;
  /** The 'full' routes by the forwarding hops that placed them (index 0: the
   * manager's own choice), each with the chosen crawler's RTT ÷ the nearest
   * crawler with room's (median, p90): where the policy loses to that yardstick. */
  fullByHop: { count: number; overRoomOracleMedian: number; overRoomOracleP90: number }[];
  /** The same counterfactuals on predicted RTT, each route's chosen crawler's
   * ÷ the oracle's (what the policy decides on): the p90 as run, had the
   * 'full' routes gone to the oracle's crawler, and had they gone to the
   * nearest crawler with room. The last is never below the one before (the
   * nearest with room is a crawler the oracle could choose, so its predicted
   * RTT is never below the oracle's): the exact form of the check that the
   * true-RTT p90s above only meet within coordinate error. */
  predicted: { overOracleP90: number; p90IfFullToOracle: number; p90IfFullToRoomOracle: number };
}
