// `sim sweep`'s output: Markdown for the terminal, CSV and JSON for analysis,
// and the curves as SVG (tasks, weighted quality, true freshness and success
// rate against the crawler count, with the capacity bound where there is one).
import type * as vl from 'vega-lite';
import { outputDir, renderSvg } from './report.js';
import type { SweepReport, SweepRow } from './sweep.js';

function fmt(x: number, digits: number): string {
  return Number.isFinite(x) ? x.toFixed(digits) : String(x);
}

const COLUMNS: [string, (r: SweepRow) => string][] = [
  ['crawlers', (r) => String(r.crawlers)],
  ['strategy', (r) => r.strategy],
  ['mean_online', (r) => fmt(r.meanOnline, 0)],
  ['tasks', (r) => String(r.tasks)],
  ['completed', (r) => String(r.completed)],
  ['update_quality_weighted', (r) => fmt(r.updateQualityWeighted, 4)],
  ['update_quality', (r) => fmt(r.updateQuality, 4)],
  ['freshness', (r) => fmt(r.freshness, 4)],
  ['mean_age_minutes', (r) => fmt(r.meanAgeMinutes, 1)],
  ['success_rate', (r) => fmt(r.successRate, 4)],
  ['utilisation', (r) => fmt(r.utilisation, 4)],
  ['lost_share', (r) => fmt(r.threadUse.lost, 4)],
  ['idle_waiting_share', (r) => fmt(r.threadUse.idleWaiting, 4)],
  ['idle_nothing_share', (r) => fmt(r.threadUse.idleNothing, 4)],
  ['weighted_of_bound', (r) => (r.ofBound ? fmt(r.ofBound.updateQualityWeighted, 4) : '')],
  ['freshness_of_bound', (r) => (r.ofBound ? fmt(r.ofBound.freshness, 4) : '')],
  ['weighted_of_bound_after_departures', (r) => (r.ofBound ? fmt(r.ofBound.afterDepartures.updateQualityWeighted, 4) : '')],
  ['freshness_of_bound_after_departures', (r) => (r.ofBound ? fmt(r.ofBound.afterDepartures.freshness, 4) : '')],
];

export function sweepCsv(s: SweepReport): string {
  const lines = [COLUMNS.map(([h]) => h).join(',')];
  for (const r of s.rows) lines.push(COLUMNS.map(([, f]) => f(r)).join(','));
  for (const p of s.points) {
    if (p.bounds === null) continue;
    const b = p.bounds;
    lines.push([p.crawlers, 'bound', fmt(p.meanOnline, 0), '', fmt(b.completions, 0), fmt(b.updateQualityWeighted, 4), fmt(b.updateQuality, 4), fmt(b.freshness, 4), '', '', '', '', '', '', '1', '1', '', ''].join(','));
    const a = b.afterDepartures;
    lines.push([p.crawlers, 'bound_after_departures', fmt(p.meanOnline, 0), '', fmt(a.completions, 0), fmt(a.updateQualityWeighted, 4), fmt(a.updateQuality, 4), fmt(a.freshness, 4), '', '', '', '', '', '', '', '', '1', '1'].join(','));
  }
  return lines.join('\n') + '\n';
}

export function sweepMarkdown(s: SweepReport): string {
  const head = ['crawlers', 'strategy', 'tasks', 'q (w)', 'q', 'freshness', 'age (min)', 'success', 'utilisation', 'q (w) / bound', 'freshness / bound', 'q (w) / bound after departures'];
  const line = (c: string[]) => `| ${c.join(' | ')} |`;
  const out = [
    `## sim sweep (${s.hosts} channels, ${s.steps} steps, seed ${s.seed}, routing ${s.routing}, full system ${s.model.fullSystem}, RTT rule ${s.model.rttRule})`,
    '',
    line(head),
    line(head.map(() => '---')),
  ];
  for (const p of s.points) {
    for (const r of s.rows.filter((x) => x.crawlers === p.crawlers)) {
      out.push(
        line([
          String(r.crawlers),
          r.strategy.toUpperCase(),
          String(r.tasks),
          fmt(r.updateQualityWeighted, 3),
          fmt(r.updateQuality, 3),
          fmt(r.freshness, 3),
          fmt(r.meanAgeMinutes, 0),
          fmt(r.successRate, 3),
          fmt(r.utilisation, 3),
          r.ofBound ? fmt(r.ofBound.updateQualityWeighted, 3) : '',
          r.ofBound ? fmt(r.ofBound.freshness, 3) : '',
          r.ofBound ? fmt(r.ofBound.afterDepartures.updateQualityWeighted, 3) : '',
        ]),
      );
    }
    if (p.bounds) {
      const a = p.bounds.afterDepartures;
      out.push(line([String(p.crawlers), 'bound', '', fmt(p.bounds.updateQualityWeighted, 3), fmt(p.bounds.updateQuality, 3), fmt(p.bounds.freshness, 3), '', '', '', '1', '1', '']));
      out.push(line([String(p.crawlers), `bound after departures (λ ${fmt(a.lostShare, 3)})`, '', fmt(a.updateQualityWeighted, 3), fmt(a.updateQuality, 3), fmt(a.freshness, 3), '', '', '', '', '', '1']));
    }
  }
  out.push('', `wall ${fmt(s.wallSeconds, 1)} s`, '');
  return out.join('\n');
}

function curve(title: string, values: Record<string, unknown>[], y: string, yTitle: string): vl.TopLevelSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    width: 480,
    height: 260,
    data: { values },
    mark: { type: 'line', point: true, strokeWidth: 1.4 },
    encoding: {
      x: { field: 'crawlers', type: 'quantitative', title: 'crawlers (16000 channels)' },
      y: { field: y, type: 'quantitative', title: yTitle },
      color: { field: 'strategy', type: 'nominal' },
      strokeDash: { field: 'kind', type: 'nominal', legend: null },
    },
  } as vl.TopLevelSpec;
}

/** Writes sweep.json, sweep.csv, sweep.md and one SVG per curve into dir. */
export async function writeSweep(dir: string, s: SweepReport): Promise<string[]> {
  const { files, put } = outputDir(dir);
  put('sweep.json', JSON.stringify(s, null, 1) + '\n');
  put('sweep.csv', sweepCsv(s));
  put('sweep.md', sweepMarkdown(s));
  const values: Record<string, unknown>[] = s.rows.map((r) => ({
    crawlers: r.crawlers,
    strategy: r.strategy.toUpperCase(),
    kind: 'strategy',
    tasks: r.tasks,
    weighted: r.updateQualityWeighted,
    freshness: r.freshness,
    success: r.successRate,
  }));
  for (const p of s.points) {
    if (p.bounds) values.push({ crawlers: p.crawlers, strategy: 'capacity bound', kind: 'bound', weighted: p.bounds.updateQualityWeighted, freshness: p.bounds.freshness });
  }
  const strategiesOnly = values.filter((v) => v.kind === 'strategy');
  put('tasks.svg', await renderSvg(curve('Recrawl tasks submitted', strategiesOnly, 'tasks', 'tasks')));
  put('quality.svg', await renderSvg(curve('Weighted update quality, formula (5)', values, 'weighted', 'update quality (w)')));
  put('freshness.svg', await renderSvg(curve('True freshness (all channels)', values, 'freshness', 'freshness')));
  put('success.svg', await renderSvg(curve('Task success rate', strategiesOnly, 'success', 'success rate')));
  return files;
}
