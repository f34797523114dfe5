// Per web host: the crawlers' RTT reports and the coordinate placed from them
// (a task for the host is routed to crawlers near that coordinate).
import type { WireCoord } from '../../dht/signing.js';
import { K } from './keys.js';
import type { HostReports } from '../domain/records.js';
import type { BatchOp, Store } from './store.js';

export class HostRepository {
  constructor(private readonly store: Store) {}

  async reports(host: string): Promise<HostReports> {
    return (await this.store.get<HostReports>(K.hostRtt(host))) ?? { reports: [] };
  }

  async coord(host: string): Promise<WireCoord | undefined> {
    return this.store.get<WireCoord>(K.hostCoord(host));
  }

  /** Placed coordinates of these hosts (undefined where not placed yet). */
  coords(hosts: string[]): Promise<(WireCoord | undefined)[]> {
    return this.store.getMany<WireCoord>(hosts.map((h) => K.hostCoord(h)));
  }

  reportsOp(host: string, r: HostReports): BatchOp {
    return { type: 'put', key: K.hostRtt(host), value: r };
  }

  coordOp(host: string, c: WireCoord): BatchOp {
    return { type: 'put', key: K.hostCoord(host), value: c };
  }
}
