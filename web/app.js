// hrm's page: the cluster at a glance, jobs, a job's tasks and logs, live from the event stream.
// Plain browser JavaScript, no libraries.  Every request carries the token from the URL
// fragment (#token=...), which is kept in sessionStorage and taken off the address bar.
'use strict';

const TOKEN_KEY = 'hrm.token';
const POLL_LIVE_MS = 10000;   // a refresh now and then even while events flow (waits, ETAs)
const POLL_DEAD_MS = 3000;    // without the event stream, the page polls
const REFRESH_DEBOUNCE_MS = 250;
const MAX_EVENTS = 200;
const LOG_MAX_CHARS = 1 << 20; // the tail of a larger log is shown

const state = {
  token: null,
  jobs: [],
  nodes: [],
  job: null,          // the job shown in detail (its id)
  task: null,         // the task whose log is shown
  stream: 'stdout',
  live: false,
  lastSeq: 0,
  refreshTimer: null,
  refreshing: false,
  again: false,
};

const $ = (id) => document.getElementById(id);

// el('td', {class: 'num'}, 'text', child...): a DOM node; text is never parsed as HTML.
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null) continue;
    if (k === 'class') e.className = v;
    else if (k === 'style') e.style.cssText = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const k of kids) if (k !== null && k !== undefined) e.append(k);
  return e;
}

function takeToken() {
  const m = /(?:^|[#&])token=([^&]+)/.exec(location.hash);
  if (m) {
    sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(m[1]));
    history.replaceState(null, '', location.pathname + location.search);
  }
  return sessionStorage.getItem(TOKEN_KEY);
}

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function api(path, opts = {}) {
  const headers = Object.assign({ Authorization: 'Bearer ' + state.token }, opts.headers || {});
  const r = await fetch(path, Object.assign({}, opts, { headers }));
  const type = r.headers.get('Content-Type') || '';
  if (!r.ok) {
    let code = 'http_' + r.status, msg = r.status + ' ' + r.statusText;
    if (type.includes('json')) {
      try {
        const e = (await r.json()).error || {};
        code = e.code || code;
        msg = e.message || msg;
      } catch (_) { /* the status says enough */ }
    }
    if (r.status === 401) tokenRefused(msg);
    throw new ApiError(r.status, code, msg);
  }
  return opts.text ? r.text() : type.includes('json') ? r.json() : r.text();
}

function tokenRefused(msg) {
  sessionStorage.removeItem(TOKEN_KEY);
  showError('The server refused this page\'s token (' + msg + '). Open the address that ' +
            'hrm up printed again, with its #token=...');
}

function showError(text) {
  const e = $('error');
  e.textContent = text;
  e.hidden = false;
}

// ---- formatting ----

function dur(s) {
  if (s === null || s === undefined || !isFinite(s)) return '—';
  s = Math.max(0, Math.round(s));
  if (s < 60) return s + 's';
  if (s < 3600) return Math.floor(s / 60) + 'm' + String(s % 60).padStart(2, '0') + 's';
  if (s < 86400) return Math.floor(s / 3600) + 'h' + String(Math.floor(s % 3600 / 60)).padStart(2, '0') + 'm';
  return Math.floor(s / 86400) + 'd' + Math.floor(s % 86400 / 3600) + 'h';
}

function bytes(b) {
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (b >= 1024 && i < u.length - 1) { b /= 1024; i++; }
  return (i ? b.toFixed(b < 10 ? 1 : 0) : b) + ' ' + u[i];
}

function num(x, digits = 1) {
  return Number.isInteger(x) ? String(x) : x.toFixed(digits);
}

const nowS = () => Date.now() / 1000;
const live = (j) => j.state === 'pending' || j.state === 'running';
const list = (d, key) => Array.isArray(d) ? d : (d && (d[key] || d.items)) || [];

// ---- the summary line ----

function renderSummary() {
  const up = state.nodes.filter((n) => n.state === 'up');
  let cores = 0, used = 0, gpus = 0, gused = 0;
  for (const n of up) {
    const a = nodeAlloc(n);
    cores += n.cpus; used += a.cpu; gpus += n.gpus || 0; gused += a.gpu;
  }
  const jobs = state.jobs;
  const count = (s) => jobs.filter((j) => j.state === s).length;
  const running = jobs.reduce((a, j) => a + (live(j) ? (j.running || 0) : 0), 0);
  const s = $('summary');
  s.replaceChildren(
    el('span', {}, 'nodes ', el('b', {}, up.length + '/' + state.nodes.length), ' up'),
    el('span', {}, 'CPU ', el('b', {}, num(used) + '/' + cores), ' cores'),
    gpus ? el('span', {}, 'GPU ', el('b', {}, num(gused) + '/' + gpus)) : null,
    el('span', {}, 'jobs ', el('b', {}, String(count('running'))), ' running, ',
       el('b', {}, String(count('pending'))), ' pending'),
    el('span', {}, 'tasks running ', el('b', {}, String(running))));
}

// ---- nodes ----

// What a node's started tasks hold: cores, bytes, GPUs (shares summed).
function nodeAlloc(n) {
  if (n.state !== 'up') return { cpu: 0, mem: 0, gpu: 0, shares: [] };
  const shares = (n.gpu_shares || []).map((m) => m / 1000);
  const cpu = n.cpu_used !== undefined ? n.cpu_used / 1000 : n.cpus - (n.cpu_free || 0) / 1000;
  const mem = n.mem_used !== undefined ? n.mem_used : n.mem - (n.mem_free || 0);
  const gpu = shares.length ? shares.reduce((a, b) => a + b, 0)
                            : (n.gpus || 0) - (n.gpu_free || 0);
  return { cpu: Math.max(0, cpu), mem: Math.max(0, mem), gpu, shares };
}

function bar(kind, used, total, text) {
  const pct = total > 0 ? Math.min(100, used / total * 100) : 0;
  return el('div', { class: 'bar-row' }, kind.toUpperCase(),
    el('div', { class: 'bar ' + kind, 'data-kind': kind, 'data-used': String(used),
                'data-total': String(total), title: text },
       el('div', { class: 'fill', style: 'width:' + pct.toFixed(1) + '%' })),
    );
}

// One GPU: the shares its tasks hold, one segment per task, stacked (the node gives the share
// held and the number of tasks holding it; the segments split the share evenly).
function gpuBox(n, g, share) {
  const k = n.gpu_tasks ? n.gpu_tasks[g] || 0 : share > 0 ? 1 : 0;
  const box = el('div', { class: 'gpu', 'data-gpu': String(g), 'data-used': String(share),
                          'data-tasks': String(k),
                          title: `GPU ${g}: ${Math.round(share * 100)}% given to ${k} task${k === 1 ? '' : 's'}` });
  for (let i = 0; i < k; i++)
    box.append(el('div', { class: 'share', style: 'width:' + Math.min(100, share / k * 100).toFixed(1) + '%' }));
  return box;
}

function nodeCard(n) {
  const a = nodeAlloc(n);
  const card = el('div', { class: 'node' + (n.state === 'up' ? '' : ' down'), 'data-node': n.name },
    el('div', { class: 'node-head' }, n.name,
       el('span', { class: 'st' }, n.state === 'up' ? (n.tasks || 0) + ' tasks' : n.state)),
    bar('cpu', a.cpu, n.cpus, 'CPU ' + num(a.cpu, 2) + ' of ' + n.cpus + ' cores allocated'),
    bar('mem', a.mem, n.mem, 'memory ' + bytes(a.mem) + ' of ' + bytes(n.mem) + ' allocated'));
  if (n.gpus > 0) {
    const gpus = el('div', { class: 'gpus' });
    for (let g = 0; g < n.gpus; g++) gpus.append(gpuBox(n, g, a.shares[g] || 0));
    card.append(el('div', { class: 'bar-row' }, 'GPU', gpus));
  }
  return card;
}

const byName = (a, b) => a.name.localeCompare(b.name, undefined, { numeric: true });

function renderNodes() {
  const racks = new Map();
  for (const n of state.nodes) {
    if (!racks.has(n.rack)) racks.set(n.rack, []);
    racks.get(n.rack).push(n);
  }
  const box = $('racks');
  box.replaceChildren();
  if (!state.nodes.length) box.append(el('p', { class: 'muted' }, 'No node has registered yet.'));
  for (const rack of [...racks.keys()].sort()) {
    box.append(el('div', { class: 'rack', 'data-rack': rack },
      el('div', { class: 'rack-name' }, 'rack ' + rack),
      el('div', { class: 'rack-nodes' }, ...racks.get(rack).sort(byName).map(nodeCard))));
  }
}

// ---- jobs ----

function progress(j) {
  const t = j.ntasks || 1;
  const seg = (cls, n) => el('div', { class: cls, style: 'width:' + (n / t * 100).toFixed(1) + '%' });
  const ended = (j.done || 0) + (j.failed || 0) + (j.skipped || 0) + (j.cancelled || 0);
  return el('span', { class: 'prog' },
    el('div', { class: 'progress', style: 'display:inline-flex;vertical-align:middle',
                title: `${j.done || 0} done, ${j.running || 0} running, ${j.pending || 0} pending, ` +
                       `${j.failed || 0} failed` },
       seg('d', j.done || 0), seg('f', j.failed || 0), seg('r', j.running || 0)),
    el('span', { class: 'ptext' }, ended + '/' + j.ntasks));
}

// Submit to first start (still counting while pending).
function waitOf(j) {
  const sub = j.submit_us / 1e6;
  if (j.start_us > 0) return j.start_us / 1e6 - sub;
  return live(j) ? nowS() - sub : null;
}

// Pending: the master's estimate of the start; running: its end, extrapolated from the tasks
// done so far; ended: nothing.
function etaOf(j) {
  if (j.state === 'pending' || (j.pending > 0 && j.running === 0 && live(j))) {
    if (j.estimated_start_s === null || j.estimated_start_s === undefined)
      return { text: 'unknown', title: j.pending_reason || 'no estimate yet' };
    return { text: 'start ~' + dur(j.estimated_start_s), title: j.pending_reason || '' };
  }
  if (j.state === 'running' && j.done > 0 && j.start_us > 0 && j.kind !== 'stream') {
    const el_s = nowS() - j.start_us / 1e6;
    return { text: 'end ~' + dur(el_s * (j.ntasks - j.done) / j.done), title: 'extrapolated from the tasks done' };
  }
  return { text: '', title: '' };
}

function cancelButton(j) {
  return el('button', { class: 'cancel', type: 'button', 'data-cancel': String(j.id),
    onclick: (ev) => { ev.stopPropagation(); cancelJob(j, ev.target); } }, 'Cancel');
}

async function cancelJob(j, button) {
  if (!window.confirm(`Cancel job ${j.id} (${j.name})? Its running tasks are killed.`)) return;
  button.disabled = true;
  try {
    await api(`/api/v1/jobs/${j.id}/cancel`, { method: 'POST' });
  } catch (e) {
    showError(`Cancelling job ${j.id} failed: ${e.message}`);
    button.disabled = false;
  }
  scheduleRefresh(0);
}

function renderJobs() {
  const body = $('jobs').tBodies[0];
  body.replaceChildren();
  const jobs = [...state.jobs].sort((a, b) => b.id - a.id);
  $('jobs-empty').hidden = jobs.length > 0;
  for (const j of jobs) {
    const eta = etaOf(j);
    body.append(el('tr', { 'data-job': String(j.id), class: state.job === j.id ? 'sel' : '',
                           onclick: () => openJob(j.id) },
      el('td', { class: 'num' }, String(j.id)),
      el('td', {}, j.name || ''),
      el('td', {}, j.user || ''),
      el('td', {}, j.queue || ''),
      el('td', {}, el('span', { class: 'state ' + j.state, 'data-state': j.state }, j.state)),
      el('td', {}, progress(j)),
      el('td', { class: 'num wait' }, dur(waitOf(j))),
      el('td', { class: 'num eta', title: eta.title }, eta.text),
      el('td', {}, live(j) ? cancelButton(j) : null)));
  }
}

// ---- a job's tasks and a task's log ----

async function openJob(id) {
  if (state.job !== id) { state.task = null; $('log').textContent = ''; }
  state.job = id;
  $('job-panel').hidden = false;
  for (const tr of $('jobs').tBodies[0].rows) tr.classList.toggle('sel', tr.dataset.job === String(id));
  await loadJob();
}

async function loadJob() {
  if (state.job === null) return;
  let d;
  try {
    d = await api(`/api/v1/jobs/${state.job}`);
  } catch (e) {
    $('job-title').textContent = `Job ${state.job}: ${e.message}`;
    return;
  }
  const j = d.job || d;
  const reason = $('job-reason');
  reason.hidden = !j.pending_reason;
  reason.textContent = j.pending_reason
    ? 'Waiting: ' + j.pending_reason + (j.estimated_start_s !== null && j.estimated_start_s !== undefined
        ? ` (estimated start in ${dur(j.estimated_start_s)})` : '') : '';
  $('job-title').replaceChildren(`Job ${j.id} `, el('span', { class: 'muted' }, j.name || ''), ' ',
    el('span', { class: 'state ' + j.state }, j.state), live(j) ? ' ' : null, live(j) ? cancelButton(j) : null);
  const tasks = list(j.tasks, 'tasks');
  const body = $('tasks').tBodies[0];
  body.replaceChildren();
  for (const t of tasks) {
    const run = t.start_us > 0 ? ((t.end_us > 0 ? t.end_us : Date.now() * 1000) - t.start_us) / 1e6 : null;
    body.append(el('tr', { 'data-task': String(t.task), class: state.task === t.task ? 'sel' : '',
                           onclick: () => openLog(t.task) },
      el('td', { class: 'num' }, String(t.task)),
      el('td', {}, el('span', { class: 'state ' + t.state }, t.state)),
      el('td', {}, t.node || ''),
      el('td', { class: 'num' }, String(t.attempt)),
      el('td', { class: 'num', title: t.error || '' },
         t.state === 'done' || t.state === 'failed' ? String(t.signal ? 'sig ' + t.signal : t.exit) : ''),
      el('td', { class: 'num' }, run === null ? '' : dur(run))));
  }
  const more = $('tasks-more');
  const total = j.tasks_matching !== undefined ? j.tasks_matching : j.ntasks;
  more.hidden = tasks.length >= total;
  more.textContent = `${tasks.length} of ${total} tasks shown (hrm job ${j.id} --from N lists the others)`;
  if (state.task !== null) loadLog();
}

function openLog(task) {
  state.task = task;
  for (const tr of $('tasks').tBodies[0].rows) tr.classList.toggle('sel', tr.dataset.task === String(task));
  loadLog();
}

async function loadLog() {
  const job = state.job, task = state.task, stream = state.stream;
  $('log-title').textContent = `job ${job} task ${task}: ${stream}`;
  let text;
  try {
    text = await api(`/api/v1/jobs/${job}/tasks/${task}/log?stream=${stream}`, { text: true });
  } catch (e) {
    text = `(${e.message})`;
  }
  if (job !== state.job || task !== state.task || stream !== state.stream) return; // stale
  if (text.length > LOG_MAX_CHARS) text = '… (the start is cut)\n' + text.slice(-LOG_MAX_CHARS);
  const pre = $('log');
  const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
  pre.textContent = text === '' ? '(empty)' : text;
  if (atEnd) pre.scrollTop = pre.scrollHeight;
}

function pickStream(s) {
  state.stream = s;
  $('log-stdout').classList.toggle('on', s === 'stdout');
  $('log-stderr').classList.toggle('on', s === 'stderr');
  if (state.task !== null) loadLog();
}

// ---- refreshing ----

async function refresh() {
  if (state.refreshing) { state.again = true; return; }
  state.refreshing = true;
  try {
    const [jobs, nodes] = await Promise.all([api('/api/v1/jobs'), api('/api/v1/nodes')]);
    state.jobs = list(jobs, 'jobs');
    state.nodes = list(nodes, 'nodes');
    $('error').hidden = true;
    renderSummary();
    renderNodes();
    renderJobs();
    if (state.job !== null) await loadJob();
  } catch (e) {
    if (!(e instanceof ApiError && e.status === 401)) showError('Cannot reach the master: ' + e.message);
  } finally {
    state.refreshing = false;
    if (state.again) { state.again = false; scheduleRefresh(REFRESH_DEBOUNCE_MS); }
  }
}

function scheduleRefresh(ms = REFRESH_DEBOUNCE_MS) {
  if (state.refreshTimer) return;
  state.refreshTimer = setTimeout(() => { state.refreshTimer = null; refresh(); }, ms);
}

function poll() {
  refresh().finally(() => setTimeout(poll, state.live ? POLL_LIVE_MS : POLL_DEAD_MS));
}

// ---- the event stream (SSE read with fetch, since EventSource cannot send a header) ----

function setLive(on, text) {
  state.live = on;
  const b = $('live');
  b.textContent = text;
  b.className = 'live ' + (on ? 'on' : 'off');
}

function showEvent(e) {
  const ol = $('events');
  const what = [e.kind, e.job ? 'job ' + e.job : '', e.task >= 0 ? 'task ' + e.task : '',
                e.node ? 'on ' + e.node : ''].filter(Boolean).join(' ');
  const when = e.time_us ? new Date(e.time_us / 1000).toLocaleTimeString([], { hour12: false }) : '';
  ol.prepend(el('li', { 'data-seq': String(e.seq || '') },
    el('span', { class: 'seq' }, String(e.seq || '')), when ? when + ' ' : '', what,
    e.detail && Object.keys(e.detail).length ? el('span', { class: 'muted' }, ' ' + JSON.stringify(e.detail)) : null));
  while (ol.children.length > MAX_EVENTS) ol.lastChild.remove();
}

function onEvent(data) {
  let e;
  try { e = JSON.parse(data); } catch (_) { return; }
  if (e.seq) state.lastSeq = Math.max(state.lastSeq, e.seq);
  showEvent(e);
  scheduleRefresh();
  if (state.job !== null && e.job === state.job && state.task !== null && e.task === state.task)
    setTimeout(loadLog, REFRESH_DEBOUNCE_MS);
}

const EVENTS_AT_START = 50;

// The latest events, shown at once; the stream then continues from the last of them.
async function recentEvents() {
  try {
    const end = await api('/api/v1/events?since=' + Number.MAX_SAFE_INTEGER + '&limit=1');
    const last = end.last || 0;
    const page = await api(`/api/v1/events?since=${Math.max(0, last - EVENTS_AT_START)}&limit=${EVENTS_AT_START}`);
    for (const e of list(page, 'events')) {
      showEvent(e);
      state.lastSeq = Math.max(state.lastSeq, e.seq || 0);
    }
  } catch (_) { /* the stream alone then */ }
}

async function followEvents() {
  let delay = 500;
  await recentEvents();
  for (;;) {
    try {
      const q = state.lastSeq ? '?since=' + state.lastSeq : '';
      const r = await fetch('/api/v1/events' + q, {
        headers: { Authorization: 'Bearer ' + state.token, Accept: 'text/event-stream' } });
      if (r.status === 401) { tokenRefused('401'); return; }
      if (!r.ok || !r.body) throw new Error('HTTP ' + r.status);
      setLive(true, 'live');
      delay = 500;
      const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value.replace(/\r\n?/g, '\n');
        let cut;
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const frame = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          const data = frame.split('\n').filter((l) => l.startsWith('data:'))
            .map((l) => l.slice(5).replace(/^ /, '')).join('\n');
          if (data) onEvent(data);
        }
      }
      throw new Error('the stream ended');
    } catch (e) {
      setLive(false, 'reconnecting');
      await new Promise((ok) => setTimeout(ok, delay));
      delay = Math.min(delay * 2, 10000);
    }
  }
}

// ---- start ----

function start() {
  // An address with a new token pasted into this tab changes only the fragment: no page load.
  window.addEventListener('hashchange', () => {
    if (/token=/.test(location.hash)) { takeToken(); location.reload(); }
  });
  state.token = takeToken();
  if (!state.token) {
    $('no-token').hidden = false;
    $('live').textContent = 'no token';
    return;
  }
  $('app').hidden = false;
  $('log-stdout').addEventListener('click', () => pickStream('stdout'));
  $('log-stderr').addEventListener('click', () => pickStream('stderr'));
  poll();
  followEvents();
  setInterval(tick, 1000);
}

// Waits and ETAs move with the clock: their cells change in place (rows stay, clicks land).
function tick() {
  const byId = new Map(state.jobs.map((j) => [String(j.id), j]));
  for (const tr of $('jobs').tBodies[0].rows) {
    const j = byId.get(tr.dataset.job);
    if (!j || !live(j)) continue;
    tr.querySelector('.wait').textContent = dur(waitOf(j));
    const eta = etaOf(j);
    if (j.state === 'running') tr.querySelector('.eta').textContent = eta.text;
  }
}

start();
