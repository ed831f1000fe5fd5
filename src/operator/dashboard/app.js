// SPDX-License-Identifier: Apache-2.0
// molt's dashboard: plain JavaScript run by the browser as served (no build step). It reads the
// operator's API on the same origin — the dashboard listener serves reads only — every 2 s and
// whenever the live event stream (server-sent events, /v1/events) reports something.

const phaseColour = {
  Pending: 'var(--idle)',
  InFlight: 'var(--run)',
  Succeeded: 'var(--ok)',
  Failed: 'var(--bad)',
  RolledBack: 'var(--bad)',
  Skipped: 'var(--warn)',
};

/** An element with attributes and children (strings become text: nothing is parsed as HTML). */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v !== undefined && v !== null) node.setAttribute(k, String(v));
  }
  for (const c of children.flat()) node.append(c instanceof Node ? c : String(c));
  return node;
}

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  for (const c of children) node.append(c instanceof Node ? c : String(c));
  return node;
}

async function get(path) {
  const res = await fetch(path, { headers: { accept: 'application/json' } });
  if (!res.ok) throw new Error(`${path}: ${res.status}`);
  return res.json();
}

const time = (iso) => new Date(iso).toLocaleTimeString();

function rolloutCard(r) {
  const c = r.counts;
  const part = (n, colour) =>
    el('span', { style: `width:${(100 * n) / Math.max(1, c.total)}%;background:${colour}` });
  return el(
    'div',
    { class: 'card', 'data-rollout': r.id, 'data-state': r.state, 'data-succeeded': c.Succeeded },
    el('h3', {}, `${r.pool} → ${r.target.version}`),
    el('div', { class: `state-${r.state}` }, r.state),
    el(
      'div',
      { class: 'bar' },
      part(c.Succeeded, 'var(--ok)'),
      part(c.InFlight, 'var(--run)'),
      part(c.Failed + c.RolledBack, 'var(--bad)'),
      part(c.Skipped ?? 0, 'var(--warn)'),
    ),
    el(
      'div',
      { class: 'muted' },
      `${c.Succeeded}/${c.total} done · ${c.InFlight} in flight · ${c.Failed + c.RolledBack} failed${c.Skipped ? ` · ${c.Skipped} quarantined` : ''} · ${r.id}`,
    ),
  );
}

function health(m) {
  const o = m.observed;
  if (m.hold) return 'held';
  if (o === undefined) return 'unknown';
  if (!o.reachable) return 'unreachable';
  if (o.last?.result === 'Failed') return 'failed';
  if (o.bootedSlot !== undefined && o.committedSlot !== o.bootedSlot) return 'verifying';
  return 'healthy';
}

function slotCell(m, id) {
  const o = m.observed;
  const s = o?.slots?.find((x) => x.slot === id);
  if (s === undefined) return el('td', {}, '–');
  const marks = `${o.bootedSlot === id ? ' ● booted' : ''}${o.committedSlot === id ? ' ★' : ''}`;
  return el(
    'td',
    { class: o.bootedSlot === id ? 'booted' : '' },
    `${s.version ?? s.status}${marks}`,
  );
}

function fleetRow(m) {
  const o = m.observed;
  const h = health(m);
  return el(
    'tr',
    { 'data-machine': m.id, 'data-version': o?.version ?? '' },
    el('td', {}, m.id),
    el('td', {}, m.role),
    el('td', {}, m.pool),
    slotCell(m, 'A'),
    slotCell(m, 'B'),
    el('td', {}, o?.phase ?? '–', o?.operation ? el('div', { class: 'muted' }, o.operation) : ''),
    el(
      'td',
      { class: `health-${h}` },
      h,
      o?.last?.reason ? el('div', { class: 'muted' }, o.last.reason) : '',
    ),
  );
}

/**
 * Machines against time, one row each, for the rollouts that started machines. Behind each row, its
 * pool's maintenance windows are shaded (`/v1/plan` windows: when starts are allowed); a dashed line
 * marks when waiting machines may start next (the planner's `notBefore`: a window opening, a soak
 * or a rate limit ending).
 */
function timeline(rollouts, now, opens = [], windows = []) {
  const rows = [];
  for (const r of rollouts) {
    for (const m of r.machines) {
      if (m.startedAt === undefined) continue;
      const batch = m.decision?.batch === 0 ? 'canary' : `batch ${m.decision?.batch ?? '?'}`;
      rows.push({
        r,
        m,
        batch,
        start: Date.parse(m.startedAt),
        end: m.finishedAt ? Date.parse(m.finishedAt) : now,
      });
    }
  }
  rows.sort((a, b) => a.start - b.start);
  if (rows.length === 0)
    return el('p', { class: 'muted' }, 'Machines appear here as rollouts start them.');
  const t0 = Math.min(...rows.map((x) => x.start));
  const t1 = Math.max(now, ...rows.map((x) => x.end), ...opens);
  const width = 1000;
  const label = 260;
  const rowH = 22;
  const x = (t) => label + ((width - label - 10) * (t - t0)) / Math.max(1, t1 - t0);
  const chart = svg('svg', {
    viewBox: `0 0 ${width} ${rows.length * rowH + 24}`,
    'data-rows': rows.length,
  });
  const windowsOf = new Map(windows.map((w) => [w.pool, w.open]));
  rows.forEach((row, i) => {
    const y = i * rowH + 4;
    for (const w of windowsOf.get(row.r.pool) ?? []) {
      const from = Math.max(t0, Date.parse(w.from));
      const to = Math.min(t1, Date.parse(w.to));
      if (from >= to) continue;
      chart.append(
        svg('rect', {
          x: x(from),
          y: y - 2,
          width: Math.max(1, x(to) - x(from)),
          height: rowH - 4,
          class: 'window',
          'data-window': row.r.pool,
        }),
      );
    }
    chart.append(
      svg(
        'text',
        { x: 4, y: y + 14 },
        `${row.m.machine} · ${row.r.pool} ${row.r.target.version} · ${row.batch}`,
      ),
      svg('rect', {
        x: x(row.start),
        y,
        width: Math.max(3, x(row.end) - x(row.start)),
        height: rowH - 8,
        rx: 3,
        fill: phaseColour[row.m.phase] ?? 'var(--idle)',
      }),
    );
  });
  for (const t of opens) {
    chart.append(
      svg('line', {
        x1: x(t),
        x2: x(t),
        y1: 0,
        y2: rows.length * rowH + 4,
        stroke: 'var(--warn)',
        'stroke-dasharray': '4 3',
        'data-not-before': new Date(t).toISOString(),
      }),
      svg(
        'text',
        { x: x(t) + 3, y: 12, class: 'axis' },
        `may start ${new Date(t).toLocaleTimeString()}`,
      ),
    );
  }
  const axisY = rows.length * rowH + 18;
  if (rows.some((row) => windowsOf.has(row.r.pool)))
    chart.append(
      svg('text', { x: (label + width) / 2 - 60, y: axisY, class: 'axis' }, '▒ window open'),
    );
  chart.append(
    svg('text', { x: label, y: axisY, class: 'axis' }, new Date(t0).toLocaleTimeString()),
    svg('text', { x: width - 80, y: axisY, class: 'axis' }, new Date(t1).toLocaleTimeString()),
  );
  return chart;
}

function waitingRows(plan) {
  const waiting = plan.decisions.filter((d) => d.action === 'wait' || d.action === 'soaking');
  if (waiting.length === 0)
    return [el('tr', {}, el('td', { colspan: 3, class: 'muted' }, 'Nothing is waiting.'))];
  return waiting.map((d) =>
    el(
      'tr',
      { 'data-waiting': d.machine },
      el('td', {}, d.machine),
      el('td', {}, d.rollout),
      el(
        'td',
        {},
        d.reason ? `${d.reason.message}` : d.action,
        d.notBefore ? el('span', { class: 'muted' }, ` (not before ${time(d.notBefore)})`) : '',
      ),
    ),
  );
}

let refreshing = false;
let again = false;

async function refresh() {
  if (refreshing) {
    again = true;
    return;
  }
  refreshing = true;
  try {
    const [machines, summaries, plan] = await Promise.all([
      get('/v1/machines'),
      get('/v1/rollouts'),
      get('/v1/plan'),
    ]);
    const rollouts = await Promise.all(
      summaries.map((r) => get(`/v1/rollouts/${encodeURIComponent(r.id)}`)),
    );
    const recent = rollouts.slice(-6).reverse();
    document
      .querySelector('#rollouts')
      .replaceChildren(
        ...(recent.length === 0
          ? [el('p', { class: 'muted' }, 'No rollouts yet.')]
          : recent.map(rolloutCard)),
      );
    document.querySelector('#fleet tbody').replaceChildren(...machines.map(fleetRow));
    const opens = [
      ...new Set(plan.decisions.filter((d) => d.notBefore).map((d) => Date.parse(d.notBefore))),
    ];
    document
      .querySelector('#timeline')
      .replaceChildren(timeline(recent, Date.now(), opens, plan.windows ?? []));
    document.querySelector('#waiting tbody').replaceChildren(...waitingRows(plan));
    const leader = document.querySelector('#leader');
    leader.textContent = plan.leader ? 'leader' : 'standby';
    leader.className = `pill ${plan.leader ? 'ok' : ''}`;
    document.querySelector('#updated').textContent = `updated ${new Date().toLocaleTimeString()}`;
  } catch (e) {
    const leader = document.querySelector('#leader');
    leader.textContent = `unreachable: ${e.message}`;
    leader.className = 'pill bad';
  } finally {
    refreshing = false;
    if (again) {
      again = false;
      void refresh();
    }
  }
}

const kinds = [
  'rollout-created',
  'rollout-state',
  'machine-start',
  'machine-result',
  'machine-rollback',
  'warning',
];

function follow() {
  const list = document.querySelector('#events');
  const live = document.querySelector('#live');
  const source = new EventSource('/v1/events?follow=true');
  source.onopen = () => {
    live.textContent = 'live';
    live.className = 'pill ok';
  };
  source.onerror = () => {
    live.textContent = 'reconnecting';
    live.className = 'pill bad';
  };
  for (const kind of kinds) {
    source.addEventListener(kind, (message) => {
      const e = JSON.parse(message.data);
      list.prepend(
        el(
          'li',
          { class: `kind-${e.kind}`, 'data-seq': e.seq },
          el('time', {}, time(e.at)),
          e.message,
        ),
      );
      while (list.children.length > 300) list.lastElementChild.remove();
      void refresh();
    });
  }
}

follow();
void refresh();
setInterval(() => void refresh(), 2000);
