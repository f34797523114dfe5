// The demo's only view of the manager: the operator HTTP API (../http.ts), as
// any operator's client sees it. The response types name the manager's own
// types so a change of shape there fails the type check here.
import type { Manager } from '../src/manager/manager.js';
import type { Channel, RecrawlHistoryRecord } from '../src/manager/model.js';

export type Counters = Manager['counters'];
export type GroupView = ReturnType<Manager['groups']>[number];

/** GET /api/status */
export interface StatusView {
  peerId: string | null;
  channels: number;
  tasks: { queued: number; issued: number; running: number };
  crawlers: number;
  counters: Counters;
}

/** GET /api/groups */
export interface GroupsView {
  strategy: string;
  rounds: number;
  groups: GroupView[];
  updateQuality: ReturnType<Manager['updateQuality']>;
}

/** GET /api/channels/:id (schedule and host coordinate left out: the demo does not read them). */
export type ChannelView = Channel & { history: RecrawlHistoryRecord[] };

/** One entry of GET /api/channels/:id/content: the latest stored version of a page. */
export interface StoredPage {
  url: string;
  version: number;
  title?: string;
}

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

export class ManagerApi {
  constructor(readonly base: string) {}

  status(): Promise<StatusView> {
    return this.request('GET', '/api/status');
  }

  groups(): Promise<GroupsView> {
    return this.request('GET', '/api/groups');
  }

  channel(id: string): Promise<ChannelView> {
    return this.request('GET', `/api/channels/${encodeURIComponent(id)}`);
  }

  async channels(): Promise<Channel[]> {
    return (await this.request<{ channels: Channel[] }>('GET', '/api/channels?limit=10000')).channels;
  }

  /** The latest stored version of each page (the API's maximum page, more than a demo site has). */
  async content(id: string): Promise<StoredPage[]> {
    return (await this.request<{ pages: StoredPage[] }>('GET', `/api/channels/${encodeURIComponent(id)}/content?limit=1000`)).pages;
  }

  addChannel(spec: Record<string, unknown>): Promise<Channel> {
    return this.request('POST', '/api/channels', spec);
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${this.base}${path}`, {
      method,
      // The API refuses a state-changing request without a JSON Content-Type (../api-guard.ts).
      ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    if (!res.ok) {
      let reason = text;
      try {
        reason = (JSON.parse(text) as { error?: string }).error ?? text;
      } catch {
        // not JSON: show it as it came
      }
      throw new ApiError(`${method} ${path}: HTTP ${res.status}: ${reason}`, res.status);
    }
    return JSON.parse(text) as T;
  }
}
