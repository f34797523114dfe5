// The demo's only view of the manager: the operator HTTP API, as any
// operator's client sees it. The response types are the API's own
// (src/manager/api/views.ts), so a change of shape there fails the type check here.
import type { Channel } from '../src/manager/domain/channel.js';
import type { ChannelListView, ChannelView, ContentView, GroupsView, StatusView } from '../src/manager/api/views.js';

export type { ChannelView, GroupsView, StatusView };
export type GroupView = GroupsView['groups'][number];
export type StoredPage = ContentView['pages'][number];

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
    return (await this.request<ChannelListView>('GET', '/api/channels?limit=10000')).channels;
  }

  /** The latest stored version of each page (the API's maximum page, more than a demo site has). */
  async content(id: string): Promise<StoredPage[]> {
    return (await this.request<ContentView>('GET', `/api/channels/${encodeURIComponent(id)}/content?limit=1000`)).pages;
  }

  addChannel(spec: Record<string, unknown>): Promise<Channel> {
    return this.request('POST', '/api/channels', spec);
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${this.base}${path}`, {
      method,
      // The API refuses a state-changing request without a JSON Content-Type (src/manager/api/guard.ts).
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
