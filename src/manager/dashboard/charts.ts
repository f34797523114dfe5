// Server-side charts for the dashboard: vega-lite specs compiled and rendered
// to SVG with vega's headless renderer (no browser code, no build step). The
// page shows them as <img>, so nothing in them can run script.
import * as vega from 'vega';
import * as vl from 'vega-lite';
import type { Sample } from './sampler.js';

export const CHARTS = ['quality', 'intervals', 'throughput', 'tasks'] as const;
export type ChartName = (typeof CHARTS)[number];

interface Point {
  t: number;
  v: number;
  series: string;
}

function points(name: ChartName, samples: Sample[]): Point[] {
  const out: Point[] = [];
  for (let i = 0; i < samples.length; i++) {
    const s = samples[i]!;
    switch (name) {
      case 'quality':
        for (const g of s.groups) if (g.updateQuality !== null && g.channels > 0) out.push({ t: s.t, v: g.updateQuality, series: `group ${g.group}` });
        break;
      case 'intervals':
        for (const g of s.groups) out.push({ t: s.t, v: g.intervalMinutes, series: `group ${g.group}` });
        break;
      case 'throughput': {
        const p = samples[i - 1];
        if (!p) break;
        const dtMin = (s.t - p.t) / 60_000;
        if (!(dtMin > 0)) break;
        out.push({ t: s.t, v: (s.tasksSucceeded - p.tasksSucceeded) / dtMin, series: 'tasks completed / min' });
        out.push({ t: s.t, v: (s.tasksFailed - p.tasksFailed) / dtMin, series: 'tasks failed / min' });
        break;
      }
      case 'tasks':
        out.push({ t: s.t, v: s.crawlers, series: 'crawlers online' }, { t: s.t, v: s.queued, series: 'queued' }, { t: s.t, v: s.issued + s.running, series: 'issued + running' });
        break;
    }
  }
  return out;
}

const TITLES: Record<ChartName, string> = {
  quality: 'update quality per group (actual / expected update rate)',
  intervals: 'recrawl interval per group (minutes)',
  throughput: 'throughput (per minute)',
  tasks: 'crawlers and tasks',
};

/** Renders one chart as a standalone SVG document. */
export async function renderChart(name: ChartName, samples: Sample[]): Promise<string> {
  const values = points(name, samples);
  const spec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    width: 460,
    height: 160,
    background: 'white',
    title: { text: TITLES[name], fontSize: 12 },
    data: { values },
    mark: { type: 'line', point: values.length < 60 },
    encoding: {
      x: { field: 't', type: 'temporal', title: null, axis: { format: '%H:%M:%S', labelOverlap: true } },
      y: { field: 'v', type: 'quantitative', title: null, axis: { format: '~g' }, ...(name === 'intervals' ? { scale: { type: 'log' } } : {}) },
      color: { field: 'series', type: 'nominal', title: null, legend: { orient: 'bottom' } },
    },
  };
  const compiled = vl.compile(spec as unknown as vl.TopLevelSpec).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
