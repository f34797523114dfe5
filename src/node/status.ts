// The one-line live status shown on a terminal.
import type { NodeStatus } from './node-types.js';

function bytes(n: number): string {
  if (n < 1e3) return `${n.toFixed(0)} B`;
  if (n < 1e6) return `${(n / 1e3).toFixed(1)} kB`;
  if (n < 1e9) return `${(n / 1e6).toFixed(1)} MB`;
  return `${(n / 1e9).toFixed(2)} GB`;
}

export function formatStatus(s: NodeStatus, width = 160): string {
  const id = s.peerId.length > 12 ? `…${s.peerId.slice(-8)}` : s.peerId;
  const coord = s.coord.map((x) => x.toFixed(0)).join(',');
  const line =
    `${id} peers ${s.peers} (crawlers ${s.crawlersKnown}) | coord (${coord}) h ${s.height.toFixed(0)} err ${(s.error * 100).toFixed(0)}%` +
    ` | tasks ${s.running} running ${s.queued} queued ${s.accepted} accepted ${s.forwarded} fwd ${s.rejected} rej` +
    ` | pages ${s.pages} | ${bytes(s.bandwidth)}/s (${bytes(s.bytes)})`;
  return line.length > width ? line.slice(0, Math.max(10, width - 1)) : line;
}
