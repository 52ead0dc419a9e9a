// The review page of `staged ui`: no framework, no build step. It polls /api/state, draws
// the pending previews, the agent sessions, the selected preview's or session's files and
// hunks (HTML highlighted and escaped by the server), and the resolve log; every change is a
// POST with the page's CSRF token.
'use strict';

const csrf = document.querySelector('meta[name="staged-csrf"]').content;
const $ = (id) => document.getElementById(id);
const state = { revision: null, pending: [], sessions: [], log: [], redo: null, view: null, split: false, shown: null };

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'onclick') node.addEventListener('click', value);
    else if (key === 'text') node.textContent = value;
    else if (key === 'html') node.innerHTML = value; // server-escaped HTML only
    else node.setAttribute(key, value === true ? '' : value);
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

function say(text) { $('message').textContent = text; }

async function getJson(url) {
  const res = await fetch(url, { credentials: 'same-origin', cache: 'no-store' });
  const body = await res.json().catch(() => ({ error: res.statusText }));
  if (!res.ok) throw new Error(body.error || res.statusText);
  return body;
}

async function post(url, body) {
  const res = await fetch(url, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json', 'X-Staged-CSRF': csrf },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  let json;
  try { json = JSON.parse(text); } catch { json = { error: text }; }
  if (!res.ok) return { isError: true, text: json.error || text };
  return json;
}

async function refresh(force) {
  let fresh;
  try { fresh = await getJson('/api/state'); } catch (err) { $('live').textContent = 'Not connected: ' + err.message; return; }
  $('live').textContent = 'Live';
  $('root').textContent = fresh.root;
  if (!force && fresh.revision === state.revision) return;
  state.revision = fresh.revision;
  state.pending = fresh.pending;
  state.sessions = fresh.sessions || [];
  state.log = fresh.log;
  state.redo = fresh.redo;
  drawLists();
  if (!state.view && state.pending.length) state.view = { kind: 'preview', id: state.pending[0].id };
  await drawView(force);
}

function drawLists() {
  const pending = $('pending');
  pending.replaceChildren();
  for (const p of state.pending) {
    const current = state.view && state.view.kind === 'preview' && state.view.id === p.id;
    pending.append(el('li', {}, el('button', {
      type: 'button', 'aria-current': current ? 'true' : 'false', 'data-id': p.id,
      onclick: () => show({ kind: 'preview', id: p.id }),
    }, `${p.label} (${p.id})${p.newest ? ' — newest' : ''}`)));
  }
  if (!state.pending.length) pending.append(el('li', { class: 'muted', text: 'None.' }));
  const sessions = $('sessions');
  sessions.replaceChildren();
  for (const s of state.sessions) {
    const current = state.view && state.view.kind === 'session' && state.view.id === s.id;
    const title = s.title ? ` "${s.title}"` : '';
    sessions.append(el('li', {}, el('button', {
      type: 'button', 'aria-current': current ? 'true' : 'false', 'data-session': s.id,
      title: `client id: ${s.clientSessionId}`,
      onclick: () => show({ kind: 'session', id: s.id }),
    }, `${s.id} ${s.client}${title} — ${s.error ? s.error : `${s.files} file${s.files === 1 ? '' : 's'}, ${s.reviewed} of ${s.hunks} hunk${s.hunks === 1 ? '' : 's'} reviewed`}`)));
  }
  if (!state.sessions.length) sessions.append(el('li', { class: 'muted', text: 'None.' }));
  const log = $('log');
  log.replaceChildren();
  for (const e of state.log) {
    const current = state.view && state.view.kind === 'log' && state.view.entry === e.entry;
    const reverted = e.revertedBy ? ` (reverted by ${e.revertedBy})` : '';
    log.append(el('li', {}, el('button', {
      type: 'button', 'aria-current': current ? 'true' : 'false', 'data-entry': String(e.entry),
      onclick: () => show({ kind: 'log', entry: e.entry }),
    }, `${e.entry}: ${e.outcome}${reverted} — ${e.label}`)));
  }
  if (!state.log.length) log.append(el('li', { class: 'muted', text: 'Empty.' }));
  $('redo').disabled = !state.redo;
}

async function show(view) {
  state.view = view;
  state.shown = null;
  drawLists();
  await drawView(true);
  $('main').focus();
}

// Redraws the main view; a preview already shown is only checked for staleness.
async function drawView(force) {
  const main = $('main');
  const view = state.view;
  if (!view) { main.replaceChildren(el('p', { id: 'empty', text: 'No pending previews.' })); return; }
  if (view.kind === 'preview') {
    const row = state.pending.find((p) => p.id === view.id);
    if (state.shown && state.shown.id === view.id && !force) {
      markStale(row);
      return;
    }
    if (!row) { markStale(row); return; }
    // First the diff unhighlighted (fast on a big diff), then its highlighting.
    const url = '/api/preview?id=' + encodeURIComponent(view.id);
    let preview;
    try { preview = await getJson(url + '&plain=1'); } catch (err) { markStale(null); return; }
    for (const f of preview.files || []) { f.picked = f.hunks.map(() => true); f.fileOn = true; }
    preview.budget = LINES_PAINT;
    state.shown = preview;
    main.dataset.lit = preview.files ? 'no' : 'yes';
    main.replaceChildren(...previewNodes(preview));
    markStale(row);
    if (preview.files) highlightLater(preview, url);
  } else if (view.kind === 'session') {
    await drawSession(view, force);
  } else {
    let entry;
    try { entry = await getJson('/api/log?entry=' + view.entry); } catch (err) { main.replaceChildren(el('p', { text: err.message })); return; }
    state.shown = null;
    main.replaceChildren(...logNodes(entry));
  }
}

// Fetches the highlighted lines of `preview` and draws them in, keeping the picks, the
// reason typed and the scroll position, if it is still the preview shown.
async function highlightLater(preview, url) {
  let lit;
  try { lit = await getJson(url); } catch (err) { return; }
  if (state.shown !== preview || !lit.files || lit.files.length !== preview.files.length) return;
  preview.files.forEach((f, i) => f.hunks.forEach((h, j) => h.lines.forEach((l, k) => {
    const line = lit.files[i].hunks[j] && lit.files[i].hunks[j].lines[k];
    if (line) l.html = line.html;
  })));
  const reason = $('reason') ? $('reason').value : '';
  const focused = document.activeElement && document.activeElement.id === 'reason';
  const y = window.scrollY;
  preview.budget = Math.max(preview.budget, LINES_FIRST);
  $('main').replaceChildren(...previewNodes(preview));
  markStale(state.pending.find((r) => r.id === preview.id));
  $('reason').value = reason;
  if (focused) $('reason').focus();
  window.scrollTo(0, y);
  $('main').dataset.lit = 'yes';
}

// Tells the person when what they look at changed under them.
function markStale(row) {
  const banner = $('stale');
  if (!banner) return;
  let text = '';
  if (!row) text = 'This preview is no longer pending: it was applied, discarded or dropped (perhaps by another process). Nothing here can be resolved.';
  else if (!row.newest) text = 'A newer preview is pending on top of this one: only the newest preview can be resolved. Resolve the newer ones first.';
  banner.textContent = text;
  banner.hidden = !text;
  for (const button of document.querySelectorAll('#main .resolve')) button.disabled = !!text;
}

function previewNodes(p) {
  const nodes = [el('h2', { text: `${p.label} (${p.id})` }), el('p', { class: 'muted', text: `from ${p.source}` }),
    el('div', { id: 'stale', class: 'banner', role: 'alert', hidden: true })];
  if (!p.files) {
    nodes.push(el('pre', { text: JSON.stringify(p.details, null, 2) }));
  } else {
    const tree = el('ul', { class: 'tree', 'aria-label': 'Files' });
    for (const [i, f] of p.files.entries()) {
      tree.append(el('li', {}, el('a', { href: '#file-' + i, text: `${f.path}${f.from ? ' (from ' + f.from + ')' : ''} — ${f.kind}` })));
    }
    nodes.push(el('h3', { text: `${p.files.length} file${p.files.length === 1 ? '' : 's'}` }), tree);
    budget = p.budget;
    for (const [i, f] of p.files.entries()) nodes.push(fileNode(f, i, p.partial));
    if (budget <= 0 && p.files.some((f) => f.hunks.length)) {
      const total = p.files.reduce((n, f) => n + f.hunks.reduce((m, h) => m + h.lines.length, 0), 0);
      if (total > p.budget) {
        nodes.push(el('button', { type: 'button', id: 'more', onclick: () => {
          p.budget += LINES_MORE;
          $('main').replaceChildren(...previewNodes(p));
          markStale(state.pending.find((r) => r.id === p.id));
        } }, `Show more lines (${total - p.budget} not drawn)`));
      }
    }
  }
  nodes.push(el('label', { class: 'reason', for: 'reason', text: 'Reason (required)' }),
    el('textarea', { id: 'reason', name: 'reason', required: true, 'aria-required': 'true' }),
    el('div', { class: 'bar' },
      el('button', { type: 'button', class: 'resolve', id: 'apply', onclick: () => resolve('apply') }, 'Apply'),
      el('button', { type: 'button', class: 'resolve', id: 'discard', onclick: () => resolve('discard') }, 'Discard'),
      p.partial ? el('span', { class: 'muted', text: 'Apply writes the ticked files and hunks.' }) : null));
  return nodes;
}

// How many diff lines a view draws before it offers to draw more: a 10,000-line diff stays
// usable, and what is picked lives in the preview, not in the drawn checkboxes.
const LINES_FIRST = 3000;
// The first, plain draw holds a screenful and some, so a big diff paints at once; the
// highlighted draw that follows it draws LINES_FIRST.
const LINES_PAINT = 200;
const LINES_MORE = 10000;
let budget = 0;

function fileNode(f, i, partial, verb) {
  const box = el('section', { class: 'file', id: 'file-' + i, 'aria-label': f.path });
  const head = el('h3', {});
  const redrawTicks = () => {
    for (const c of box.querySelectorAll('.pick-hunk')) c.checked = f.picked[Number(c.dataset.hunk) - 1];
    const fileBox = box.querySelector('.pick-file');
    if (fileBox) fileBox.checked = f.byHunk ? f.picked.some(Boolean) : f.fileOn;
  };
  if (partial) {
    head.append(el('input', { type: 'checkbox', class: 'pick-file', checked: f.byHunk ? f.picked.some(Boolean) : f.fileOn,
      'data-path': f.path, 'aria-label': `${verb || 'Apply'} ${f.path}`,
      onclick: (ev) => { f.fileOn = ev.target.checked; f.picked = f.picked.map(() => ev.target.checked); redrawTicks(); } }));
  }
  head.append(`${f.path}${f.from ? ' (moved from ' + f.from + ')' : ''}`);
  box.append(head);
  for (const h of f.hunks) {
    if (budget <= 0) {
      const left = f.hunks.slice(h.number - 1).reduce((n, k) => n + k.lines.length, 0);
      box.append(el('p', { class: 'muted', text: `${left} more lines of this file are not drawn yet.` }));
      break;
    }
    const drawn = h.lines.length > budget ? h.lines.slice(0, budget) : h.lines;
    budget -= h.lines.length;
    const hh = el('div', { class: 'hunk-head' });
    if (partial && f.byHunk) {
      hh.append(el('input', { type: 'checkbox', class: 'pick-hunk', checked: f.picked[h.number - 1], 'data-path': f.path,
        'data-hunk': String(h.number), 'aria-label': `hunk ${h.number} of ${h.of} of ${f.path}`,
        onclick: (ev) => { f.picked[h.number - 1] = ev.target.checked; if (!ev.target.checked) f.fileOn = false; redrawTicks(); } }));
    }
    hh.append(h.header);
    if (h.changedSince) hh.dataset.changed = 'yes';
    box.append(hh, state.split ? splitTable(drawn) : unifiedTable(drawn));
    if (drawn.length < h.lines.length) {
      box.append(el('p', { class: 'muted', text: `${h.lines.length - drawn.length} more lines of this hunk are not drawn yet.` }));
      break;
    }
  }
  return box;
}

function cell(cls, text) { return el('td', { class: cls, text: text === null || text === undefined ? '' : String(text) }); }

function unifiedTable(lines) {
  const table = el('table', { class: 'diff' });
  for (const l of lines) {
    const cls = l.t === '+' ? 'add' : l.t === '-' ? 'del' : '';
    table.append(el('tr', { class: cls }, cell('no', l.old), cell('no', l.new), cell('m', l.t), el('td', { class: 'code', html: l.html })));
  }
  return table;
}

function splitTable(lines) {
  const table = el('table', { class: 'diff' });
  const row = (left, right) => table.append(el('tr', {},
    cell('no', left ? left.old : ''), el('td', { class: 'code' + (left && left.t === '-' ? ' del' : ''), html: left ? left.html : '' }),
    cell('no', right ? right.new : ''), el('td', { class: 'code' + (right && right.t === '+' ? ' add' : ''), html: right ? right.html : '' })));
  let i = 0;
  while (i < lines.length) {
    if (lines[i].t === '-' || lines[i].t === '+') {
      const dels = []; const adds = [];
      while (i < lines.length && lines[i].t === '-') dels.push(lines[i++]);
      while (i < lines.length && lines[i].t === '+') adds.push(lines[i++]);
      for (let k = 0; k < Math.max(dels.length, adds.length); k++) row(dels[k], adds[k]);
    } else {
      row(lines[i], lines[i]);
      i++;
    }
  }
  return table;
}

async function resolve(action) {
  const p = state.shown;
  if (!p || p.kind) return;
  const reason = $('reason').value;
  if (!reason.trim()) { say('Type a reason first: it is required.'); $('reason').focus(); return; }
  const body = { id: p.id, action, reason };
  if (action === 'apply' && p.partial && p.files) {
    const files = []; const hunks = {}; let all = true;
    for (const f of p.files) {
      if (f.byHunk) {
        const numbers = f.hunks.filter((h) => f.picked[h.number - 1]).map((h) => h.number);
        if (numbers.length === f.hunks.length) files.push(f.path);
        else { all = false; if (numbers.length) hunks[f.path] = numbers; }
      } else if (f.fileOn) files.push(f.path);
      else all = false;
    }
    if (!all) { body.files = files; body.hunks = hunks; }
  }
  const res = await post('/api/resolve', body);
  say(res.text);
  state.view = null;
  await refresh(true);
}

// A session's net change: drawn plain at once, then highlighted. Drawn again when it changes
// (another process kept, reverted or wrote into it): the picks and the reason typed stay on
// the hunks still there, and a hunk the person saw that is gone is named in a banner.
async function drawSession(view, force) {
  const main = $('main');
  const url = '/api/session?id=' + encodeURIComponent(view.id);
  let s;
  try { s = await getJson(url + '&plain=1'); } catch (err) { main.replaceChildren(el('p', { text: err.message })); state.shown = null; return; }
  s.kind = 'session';
  const before = state.shown && state.shown.kind === 'session' && state.shown.id === s.id ? state.shown : null;
  // Nothing of it changed: the view stays as it is (the ticks, the focus, the elements).
  const shape = (x) => JSON.stringify([x.reviewed, x.files.map((f) => [f.path, f.keys, f.hunks.map((h) => [h.review, h.changedSince])])]);
  if (before && !force && shape(before) === shape(s)) return;
  const picked = new Set(); const gone = [];
  if (before) {
    const now = new Set(s.files.flatMap((f) => f.keys));
    for (const f of before.files) {
      f.hunks.forEach((h, j) => {
        if (f.picked[j]) picked.add(h.key);
        if (!now.has(h.key)) gone.push(f.byHunk ? `hunk ${h.number} of ${h.of} of ${f.path}` : f.path);
      });
    }
  }
  for (const f of s.files) { f.picked = f.hunks.map((h) => picked.has(h.key)); f.fileOn = f.picked.length > 0 && f.picked.every(Boolean); }
  s.changedUnder = gone.length ? `This session's change changed while you were looking at it: ${gone.join(', ')} ${gone.length === 1 ? 'is' : 'are'} no longer what you saw (another process kept, reverted or changed it). The page shows it as it is now; look again before you keep or revert.` : (before && before.changedUnder) || '';
  const reason = $('reason') && before ? $('reason').value : '';
  const y = window.scrollY;
  state.shown = s;
  main.dataset.lit = 'no';
  main.replaceChildren(...sessionNodes(s));
  if ($('reason')) $('reason').value = reason;
  if (before) window.scrollTo(0, y);
  let lit;
  try { lit = await getJson(url); } catch (err) { return; }
  if (state.shown !== s || lit.files.length !== s.files.length) return;
  s.files.forEach((f, i) => f.hunks.forEach((h, j) => h.lines.forEach((l, k) => {
    const line = lit.files[i].hunks[j] && lit.files[i].hunks[j].lines[k];
    if (line) l.html = line.html;
  })));
  const typed = $('reason') ? $('reason').value : '';
  const focused = document.activeElement && document.activeElement.id === 'reason';
  const y2 = window.scrollY;
  main.replaceChildren(...sessionNodes(s));
  $('reason').value = typed;
  if (focused) $('reason').focus();
  window.scrollTo(0, y2);
  main.dataset.lit = 'yes';
}

function sessionNodes(s) {
  const title = s.title ? ` "${s.title}"` : '';
  const nodes = [el('h2', { text: `Session ${s.id} ${s.client}${title}` }),
    el('p', { class: 'muted client-id', text: `client id: ${s.clientSessionId}` }),
    el('p', { class: 'muted', text: `${s.reviewed} of ${s.hunks} hunk${s.hunks === 1 ? '' : 's'} reviewed` }),
    el('div', { id: 'changed', class: 'banner', role: 'alert', hidden: !s.changedUnder, text: s.changedUnder })];
  if (!s.files.length) {
    nodes.push(el('p', { text: `${s.id} changed nothing that is still in the files (or everything it changed was reverted).` }));
    return nodes;
  }
  const tree = el('ul', { class: 'tree', 'aria-label': 'Files' });
  for (const [i, f] of s.files.entries()) {
    tree.append(el('li', {}, el('a', { href: '#file-' + i, text: `${f.path}${f.from ? ' (from ' + f.from + ')' : ''} — ${f.change}` })));
  }
  nodes.push(el('h3', { text: `${s.files.length} file${s.files.length === 1 ? '' : 's'}` }), tree);
  budget = LINES_MORE;
  for (const [i, f] of s.files.entries()) nodes.push(fileNode(f, i, true, 'Select all of'));
  nodes.push(el('label', { class: 'reason', for: 'reason', text: 'Reason (required to revert)' }),
    el('textarea', { id: 'reason', name: 'reason' }),
    el('div', { class: 'bar' },
      el('button', { type: 'button', class: 'act', id: 'keep', onclick: () => sessionAct('keep') }, 'Keep'),
      el('button', { type: 'button', class: 'act', id: 'revert', onclick: () => sessionAct('revert') }, 'Revert'),
      el('span', { class: 'muted', text: 'Keep or Revert acts on the ticked files and hunks.' })));
  return nodes;
}

async function sessionAct(action) {
  const s = state.shown;
  if (!s || s.kind !== 'session') return;
  const reason = $('reason').value;
  if (action === 'revert' && !reason.trim()) { say('Type a reason first: a revert says why.'); $('reason').focus(); return; }
  const files = []; const hunks = {}; const seen = {};
  for (const f of s.files) {
    const numbers = f.hunks.filter((h) => f.picked[h.number - 1]).map((h) => h.number);
    if (!f.byHunk ? !f.fileOn : !numbers.length) continue;
    // The file's box ticked: the whole file, as `--only FILE`; else its hunks, as `--only FILE:N`.
    if (!f.byHunk || (f.fileOn && numbers.length === f.hunks.length)) files.push(f.path);
    else hunks[f.path] = numbers;
    seen[f.path] = f.keys;
  }
  if (!files.length && !Object.keys(hunks).length) { say('Tick the files or hunks to keep or revert first.'); return; }
  const res = await post('/api/session', { session: s.id, action, reason, files, hunks, seen });
  say(res.text);
  if (!res.isError) state.shown = null;
  await refresh(true);
}

function logNodes(e) {
  const r = e.row;
  const nodes = [el('h2', { text: `Log entry ${r.entry}: ${r.outcome} — ${r.label}` }),
    el('p', { text: `${r.id}, by ${r.frontEnd}, ${new Date(r.at * 1000).toLocaleString()}` }),
    el('p', { text: `Reason: ${r.reason}` }), el('p', { class: 'muted', text: e.result })];
  if (r.revertedBy) nodes.push(el('p', { text: `Reverted by entry ${r.revertedBy}.` }));
  budget = LINES_MORE;
  for (const [i, f] of (e.files || []).entries()) nodes.push(fileNode(f, 'log-' + i, false));
  nodes.push(el('label', { class: 'reason', for: 'reason', text: 'Reason (optional)' }), el('textarea', { id: 'reason', name: 'reason' }),
    el('div', { class: 'bar' }, el('button', { type: 'button', id: 'undo', disabled: !r.undoable, onclick: () => undo(r.entry) }, 'Undo')));
  return nodes;
}

async function undo(entry) {
  const reason = $('reason') ? $('reason').value : '';
  const res = await post('/api/undo', { entry, reason });
  say(res.text);
  await refresh(true);
}

$('redo').addEventListener('click', async () => {
  const reason = $('reason') ? $('reason').value : '';
  const res = await post('/api/redo', { reason });
  say(res.text);
  await refresh(true);
});

$('layout').addEventListener('click', () => {
  state.split = !state.split;
  $('layout').setAttribute('aria-pressed', String(state.split));
  if (state.shown && state.shown.kind === 'session') $('main').replaceChildren(...sessionNodes(state.shown));
  else if (state.shown) $('main').replaceChildren(...previewNodes(state.shown));
  markStale(state.pending.find((p) => state.shown && p.id === state.shown.id));
});

// Keys as in `staged review`: on a preview, `a` or `d` opens the reason for that action; on a
// session, `K` keeps and `r` reverts (as its sessions view does; elsewhere `r` reloads). Enter
// on the reason acts (apply and discard, and revert, need one that is not blank); Esc cancels.
let chosen = null;

function choose(ev, action) {
  ev.preventDefault();
  chosen = action;
  $('reason').focus();
  say(`Type a reason, then Enter to ${action} (Esc cancels).`);
}

document.addEventListener('keydown', (ev) => {
  if (ev.target.id === 'reason' && chosen && state.shown) {
    if (ev.key === 'Escape') { chosen = null; say('Cancelled.'); ev.target.blur(); return; }
    if (ev.key === 'Enter' && !ev.shiftKey) {
      ev.preventDefault();
      const action = chosen;
      chosen = null;
      if (state.shown.kind === 'session') sessionAct(action); else if (!state.shown.kind) resolve(action);
      return;
    }
  }
  // Keys act unless the person is typing (a ticked box keeps the focus, and keys still act).
  if (ev.target.closest('textarea, input:not([type=checkbox])') || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const at = state.pending.findIndex((p) => state.view && p.id === state.view.id);
  switch (ev.key) {
    case 'n': if (state.pending.length) show({ kind: 'preview', id: state.pending[Math.min(at + 1, state.pending.length - 1)].id }); break;
    case 'p': if (state.pending.length) show({ kind: 'preview', id: state.pending[Math.max(at - 1, 0)].id }); break;
    case 'a': case 'd':
      if ($('reason') && state.shown && !state.shown.kind) choose(ev, ev.key === 'a' ? 'apply' : 'discard');
      break;
    case 'K':
      if ($('reason') && state.shown && state.shown.kind === 'session') choose(ev, 'keep');
      break;
    case 'l': if (state.log.length) show({ kind: 'log', entry: state.log[0].entry }); break;
    case 's': $('layout').click(); break;
    case 'r':
      if ($('reason') && state.shown && state.shown.kind === 'session') choose(ev, 'revert');
      else refresh(true);
      break;
    default: return;
  }
});

// A link to a preview (`/?preview=ID`, from the approval question of `--approve human`) opens
// it; the address bar goes back to `/`.
const linked = new URLSearchParams(location.search).get('preview');
if (linked) { state.view = { kind: 'preview', id: linked }; history.replaceState(null, '', '/'); }

refresh(true);
setInterval(() => refresh(false), 1000);
