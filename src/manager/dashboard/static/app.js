// The operator dashboard: polls the manager's JSON API and redraws. Every value
// from the server goes into the page through textContent / element properties
// (never innerHTML), so nothing it shows can be interpreted as markup.
// When the API needs a token (the manager listens beyond loopback), the page
// sends it as `Authorization: Bearer`: it comes from the link the manager
// prints (#token=…, a fragment, so never sent to a server nor in a Referer) or
// is typed into the token form, and is kept in sessionStorage (this tab only).
/* global document, fetch, setInterval */

const { Node, confirm, location, history, sessionStorage } = globalThis;
const REFRESH_MS = 3000;
const TOKEN_KEY = 'volcrawl-api-token';
const CHARTS = ['quality', 'intervals', 'throughput', 'tasks'];
const $ = (id) => document.getElementById(id);

function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'className') e.className = v;
    else if (k === 'onclick') e.addEventListener('click', v);
    else e.setAttribute(k, String(v));
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(c === null || c === undefined ? '' : String(c)));
  return e;
}

function takeTokenFromFragment() {
  const m = /^#token=(.+)$/.exec(location.hash);
  if (!m) return;
  sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(m[1]));
  // Out of the address bar and the history, where it would be seen or bookmarked.
  history.replaceState(null, '', location.pathname + location.search);
}

async function authFetch(path, opts = {}) {
  const token = sessionStorage.getItem(TOKEN_KEY);
  const res = await fetch(path, { ...opts, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(opts.headers ?? {}) } });
  if (res.status === 401) {
    $('token-form').hidden = false;
    $('token-msg').textContent = token ? 'The manager refused this token; enter the current one.' : 'This manager needs its API token (dht-manager serve prints where it is).';
  }
  return res;
}

async function api(path, opts = {}) {
  const res = await authFetch(path, { ...opts, headers: { accept: 'application/json', ...(opts.headers ?? {}) } });
  const text = await res.text();
  let body;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = { error: text };
  }
  if (!res.ok) throw new Error((body && body.error) || `HTTP ${res.status}`);
  return body;
}

function fill(tbodyParent, rows) {
  const tbody = tbodyParent.querySelector('tbody');
  tbody.replaceChildren(...rows);
}

const fmt = (x, d = 2) => (x === null || x === undefined || !Number.isFinite(x) ? '–' : x.toFixed(d));
function fmtMin(m) {
  if (m === null || m === undefined || !Number.isFinite(m)) return '–';
  if (m < 1) return `${(m * 60).toFixed(1)} s`;
  if (m < 120) return `${m.toFixed(1)} min`;
  return `${(m / 60).toFixed(1)} h`;
}
/** A crawler's load as people read it: "2 of 6 slots busy (1 running, 1 queued)". */
function fmtLoad(l) {
  if (!l) return '–';
  const cap = l.running + l.queued + l.free;
  const busy = l.running + l.queued;
  return cap > 0 ? `${busy} of ${cap} slots busy (${l.running} running, ${l.queued} queued)` : `${l.running} running, ${l.queued} queued`;
}
function msg(id, text, ok) {
  const p = $(id);
  p.textContent = text;
  p.className = `msg ${ok ? 'ok' : 'error'}`;
}

// What the volunteer's owner lets it do: "running", or "paused (cap, schedule)"; "–" until it reported.
function fmtOwner(o) {
  if (!o) return '–';
  return o.state === 'paused' ? `paused (${o.reasons.join(', ') || 'unknown'})` : 'running';
}

// How others reach the volunteer (behind NAT: docs/nat.md); "–" on a LAN network or before it reported.
const REACH_WORDS = { public: 'public', mapped: 'mapped (UPnP)', punched: 'relayed, hole-punched', relayed: 'relayed', pull: 'pull only', starting: 'starting', unreachable: 'unreachable' };
function fmtReach(r) {
  return r ? (REACH_WORDS[r] ?? r) : '–';
}

let editing = null;
let contentOf = null;

async function refreshSummary() {
  const [status, groups, tasks, crawlers, series, vols] = await Promise.all([api('/api/status'), api('/api/groups'), api('/api/tasks?state=failed&limit=10'), api('/api/crawlers'), api('/dashboard/series'), api('/api/volunteers')]);
  $('peer').textContent = status.peerId ? `peer ${status.peerId}` : '';
  $('c-crawlers').textContent = crawlers.paused > 0 ? `${crawlers.online} (${crawlers.paused} paused)` : String(crawlers.online);
  $('c-channels').textContent = String(status.channels);
  $('c-queued').textContent = String(tasks.queued);
  $('c-running').textContent = String(tasks.issued + tasks.running);
  $('c-done').textContent = `${status.counters.tasksSucceeded} / ${status.counters.tasksFailed}`;
  $('c-pages').textContent = String(status.counters.pagesStored);
  $('c-quality').textContent = fmt(groups.updateQuality.weighted);
  const s = series.samples;
  if (s.length >= 2) {
    const a = s[Math.max(0, s.length - 13)];
    const b = s[s.length - 1];
    const dtMin = (b.t - a.t) / 60000;
    $('c-throughput').textContent = dtMin > 0 ? fmt((b.tasksSucceeded - a.tasksSucceeded) / dtMin, 1) : '–';
  }
  $('strategy').textContent = `strategy ${groups.strategy}, ${groups.rounds} rounds`;
  fill(
    $('groups'),
    groups.groups.map((g) => el('tr', {}, el('td', {}, g.group), el('td', { className: 'num' }, g.channels), el('td', { className: 'num' }, g.updated), el('td', {}, fmtMin(g.intervalMinutes)), el('td', {}, fmtMin(g.initialIntervalMinutes)), el('td', { className: 'num' }, fmt(g.updateQuality)))),
  );
  fill(
    $('crawlers'),
    crawlers.crawlers.map((c) => el('tr', {}, el('td', {}, c.id), el('td', {}, c.coord ? c.coord.vec.map((x) => x.toFixed(1)).join(', ') : '–'), el('td', {}, fmtLoad(c.load)), el('td', {}, c.rttMs === null ? '–' : `${fmt(c.rttMs, 1)} ms`), el('td', {}, `${fmt(c.lastSeenSecondsAgo, 0)} s ago`), el('td', {}, fmtOwner(c.owner)), el('td', {}, fmtReach(c.reachability)))),
  );
  $('trust').textContent = `${Object.entries(vols.statuses).map(([k, n]) => `${n} ${k}`).join(', ')}; verification overhead ${fmt(vols.verificationOverhead * 100, 1)} %`;
  fill(
    $('volunteers'),
    vols.volunteers.map((v) =>
      el('tr', {}, el('td', {}, v.id), el('td', {}, v.status), el('td', { className: 'num' }, `${fmt(v.spotCheckRate * 100, 1)} %`), el('td', { className: 'num' }, fmt(v.pBad, 3)), el('td', {}, `${v.totals.agree} / ${v.totals.disagree} / ${v.totals.lost}`), el('td', { className: 'num' }, v.tasks), el('td', {}, v.lastVerified ? new Date(v.lastVerified.at).toLocaleString() : '–'), el('td', {}, (v.ban ?? v.quarantine)?.reason ?? '')),
    ),
  );
  fill(
    $('failed'),
    (tasks.tasks ?? []).map((t) => el('tr', {}, el('td', {}, t.id), el('td', {}, t.channel), el('td', {}, t.reason ?? ''))),
  );
  await refreshCharts();
  $('updated').textContent = `updated ${new Date().toLocaleTimeString()}`;
}

// Fetched rather than set as <img src>, which could not carry the token; shown from blob: URLs.
async function refreshCharts() {
  await Promise.all(
    CHARTS.map(async (name) => {
      const res = await authFetch(`/dashboard/chart/${name}.svg`);
      if (!res.ok) throw new Error(`chart ${name}: HTTP ${res.status}`);
      const img = $(`chart-${name}`);
      const old = img.src;
      img.src = URL.createObjectURL(await res.blob());
      if (old.startsWith('blob:')) URL.revokeObjectURL(old);
    }),
  );
}

function channelLabel(c) {
  const prefixes = c.pathPrefixes && !(c.pathPrefixes.length === 1 && c.pathPrefixes[0] === '/') ? ` ${c.pathPrefixes.join(' ')}` : '';
  return `${c.origin}${prefixes}`;
}

async function refreshChannels() {
  const { channels } = await api('/api/channels?limit=500');
  fill(
    $('channels'),
    channels.map((c) =>
      el(
        'tr',
        { 'data-id': c.id },
        el('td', {}, c.id),
        el('td', {}, channelLabel(c), c.note ? el('div', { className: 'muted' }, c.note) : ''),
        el('td', {}, `${c.group}${c.pinnedGroup ? ' (pinned)' : ''}`),
        el('td', {}, fmtMin(c.changeInterval)),
        el('td', { className: 'num' }, c.depth),
        el('td', { className: 'num' }, c.maxPages),
        el('td', {}, el('button', { type: 'button', onclick: () => showContent(c.id) }, 'Content'), el('button', { type: 'button', onclick: () => startEdit(c) }, 'Edit'), el('button', { type: 'button', onclick: () => removeChannel(c) }, 'Remove')),
      ),
    ),
  );
}

function startEdit(c) {
  editing = c.id;
  $('edit-section').hidden = false;
  $('edit-id').textContent = `${c.id} (${channelLabel(c)})`;
  $('edit-group').value = String(c.group);
  $('edit-pinned').checked = c.pinnedGroup === true;
  $('edit-depth').value = String(c.depth);
  $('edit-maxpages').value = String(c.maxPages);
  $('edit-delay').value = String(c.delayMs);
  $('edit-note').value = c.note ?? '';
  $('edit-msg').textContent = '';
}

async function removeChannel(c) {
  if (!confirm(`Remove channel ${c.id} (${channelLabel(c)}) and its stored pages?`)) return;
  try {
    await api(`/api/channels/${encodeURIComponent(c.id)}`, { method: 'DELETE', headers: { 'content-type': 'application/json' } });
    msg('add-msg', `removed ${c.id}`, true);
    if (contentOf === c.id) $('content-section').hidden = true;
  } catch (err) {
    msg('add-msg', err.message, false);
  }
  await refreshChannels();
}

async function showContent(id) {
  contentOf = id;
  $('content-section').hidden = false;
  $('content-id').textContent = id;
  const box = $('content');
  box.replaceChildren(el('p', { className: 'muted' }, 'loading…'));
  try {
    const { pages } = await api(`/api/channels/${encodeURIComponent(id)}/content?limit=50`);
    if (pages.length === 0) {
      box.replaceChildren(el('p', { className: 'muted' }, 'nothing stored yet'));
      return;
    }
    box.replaceChildren(
      ...pages.map((p) =>
        el(
          'div',
          { className: 'page' },
          el('div', {}, el('strong', {}, p.title ?? '(no title)')),
          el('div', { className: 'meta' }, `${p.url} · version ${p.version} · ${p.status} · ${p.bytes} bytes · fetched ${new Date(p.fetchedAt).toLocaleString()} · by ${p.crawler}`),
          el('pre', {}, (p.text ?? '').slice(0, 2000)),
        ),
      ),
    );
  } catch (err) {
    box.replaceChildren(el('p', { className: 'msg error' }, err.message));
  }
}

function numOrUndef(v) {
  return v.trim() === '' ? undefined : Number(v);
}

function wire() {
  $('token-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, $('token-input').value.trim());
    $('token-input').value = '';
    $('token-form').hidden = true;
    void tick();
    void refreshChannels().catch((err) => console.error(err));
  });
  $('add-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const body = { url: $('add-url').value.trim() };
    const depth = numOrUndef($('add-depth').value);
    const group = numOrUndef($('add-group').value);
    if (depth !== undefined) body.depth = depth;
    if (group !== undefined) body.group = group;
    try {
      const ch = await api('/api/channels', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      msg('add-msg', `added ${ch.id}: ${channelLabel(ch)}`, true);
      $('add-url').value = '';
    } catch (err) {
      msg('add-msg', err.message, false);
    }
    await refreshChannels();
  });
  $('import-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    try {
      const r = await api('/api/channels/import', { method: 'POST', headers: { 'content-type': 'text/uri-list' }, body: $('import-text').value });
      const skipped = r.skipped.length ? `; skipped ${r.skipped.length}: ${r.skipped.slice(0, 5).map((s) => (typeof s === 'string' ? s : JSON.stringify(s))).join('; ')}` : '';
      msg('import-msg', `added ${r.added}${skipped}`, r.skipped.length === 0);
    } catch (err) {
      msg('import-msg', err.message, false);
    }
    await refreshChannels();
  });
  $('edit-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (editing === null) return;
    const patch = { group: Number($('edit-group').value), pinnedGroup: $('edit-pinned').checked, depth: Number($('edit-depth').value), maxPages: Number($('edit-maxpages').value), delayMs: Number($('edit-delay').value) };
    const note = $('edit-note').value;
    if (note !== '') patch.note = note;
    try {
      await api(`/api/channels/${encodeURIComponent(editing)}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify(patch) });
      msg('edit-msg', `saved ${editing}`, true);
    } catch (err) {
      msg('edit-msg', err.message, false);
    }
    await refreshChannels();
  });
  $('edit-cancel').addEventListener('click', () => {
    editing = null;
    $('edit-section').hidden = true;
  });
}

async function tick() {
  try {
    await refreshSummary();
  } catch (err) {
    $('updated').textContent = `not updated: ${err.message}`;
  }
}

takeTokenFromFragment();
wire();
void tick();
void refreshChannels().catch((err) => console.error(err));
setInterval(tick, REFRESH_MS);
setInterval(() => {
  if (editing === null) void refreshChannels().catch((err) => console.error(err));
}, REFRESH_MS * 3);
