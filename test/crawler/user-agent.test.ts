// What a site owner sees: the operator's contact URL in the User-Agent, while
// robots.txt is still matched on the product token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROBOTS_TOKEN, userAgentWithContact } from '../../src/crawler/limits.js';
import { parseTask, type TaskResult } from '../../src/crawler/task.js';
import { runTask } from '../../src/crawler/thread.js';
import { TestWeb } from '../../testbed/web/testweb.js';

let web: TestWeb;
beforeAll(async () => {
  web = await TestWeb.start([{ name: 'ua', pages: 3, fanout: 2, robots: 'none' }]);
});
afterAll(() => web.close());

describe('the User-Agent', () => {
  it('carries the contact URL it is given, and the robots.txt token stays the product token', async () => {
    const ua = userAgentWithContact('https://crawl.example.org/about');
    expect(ua).toBe('volcrawl/0.1 (+https://crawl.example.org/about; volunteer web crawler)');
    expect(ROBOTS_TOKEN).toBe('volcrawl');
    const site = web.site('ua');
    const results: TaskResult[] = [];
    const task = parseTask({ id: 'ua', scope: { origin: site.origin, pathPrefixes: ['/'] }, seeds: [`${site.origin}/`], maxDepth: 3, delayMs: 0, deadline: Date.now() + 60_000 });
    const out = await runTask(task, { upload: async (r) => void results.push(r) }, { allowPrivate: true, userAgent: ua });
    expect(out.status).toBe('completed');
    expect([...site.stats.userAgents]).toEqual([ua]);
  });
});
