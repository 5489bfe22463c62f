// gauntlet report page: the case table (virtualised, sortable, filterable, keyboard driven)
// and a case's page (turns, verdicts with their evidence marked, the trace as a timeline).
//
// Model output is data. Every node is built with createElement and text nodes; nothing is
// ever parsed as HTML. The page's Content Security Policy backs this up: scripts only by hash,
// no connection anywhere, and Trusted Types with no policy, so an HTML sink would throw.
'use strict';
(function () {
  const $ = (id) => document.getElementById(id);
  const ROW_H = 30;
  const SEVERITY = { FAIL: 0, ERROR: 1, NOT_ASSESSED: 2, CONDITIONAL: 3, BLOCKED: 4, SKIPPED: 5, PASS: 6 };
  const TRIAL = { P: 'PASS', F: 'FAIL', C: 'CONDITIONAL', E: 'ERROR', B: 'BLOCKED', S: 'SKIPPED', N: 'NOT_ASSESSED' };
  const CHANGE = {
    new_failure: 'new failure', fixed: 'fixed', still_failing: 'still failing', pass: 'pass in both',
    not_comparable: 'not comparable', new: 'not in baseline',
  };
  const FILTERS = ['status', 'owasp', 'technique', 'pack', 'tag', 'kind', 'mark', 'change'];
  const root = document.documentElement;

  // Builds an element. Attributes that could run or fetch anything are refused outright.
  function h(tag, attrs, ...kids) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (/^on/i.test(k) || /^(style|src|srcdoc|action|formaction)$/i.test(k)) {
        throw new Error('refused attribute ' + k);
      }
      if (k === 'href' && !String(v).startsWith('#')) throw new Error('refused link');
      if (k === 'cls') el.className = v;
      else el.setAttribute(k, v === true ? '' : String(v));
    }
    for (const kid of kids.flat(Infinity)) {
      if (kid === null || kid === undefined || kid === false) continue;
      el.append(kid instanceof Node ? kid : String(kid));
    }
    return el;
  }

  function clear(el) {
    while (el.firstChild) el.firstChild.remove();
  }

  function bytes(b64url) {
    const b64 = b64url.trim().replace(/-/g, '+').replace(/_/g, '/');
    const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  }

  async function inflate(id) {
    const el = $(id);
    if (!el) throw new Error('missing data block ' + id);
    const stream = new Blob([bytes(el.textContent)]).stream()
      .pipeThrough(new DecompressionStream('deflate-raw'));
    return JSON.parse(await new Response(stream).text());
  }

  const meta = JSON.parse($('gx-meta').textContent);
  const rows = [];
  const byId = new Map();
  const state = { q: '', f: {}, sort: 'status', dir: 1, view: [], viewKey: null, active: 0, open: null };

  // Details are inflated per chunk when one of its cases is opened; a few stay decoded.
  const chunkCache = new Map();
  function detail(r) {
    let p = chunkCache.get(r._c);
    if (!p) {
      p = inflate('gx-d-' + r._c);
      chunkCache.set(r._c, p);
      if (chunkCache.size > 4) chunkCache.delete(chunkCache.keys().next().value);
    }
    return p.then((list) => list[r._p]);
  }

  function flaky(r) {
    return r.tr.length > 1 && r.tr.includes('P') && /[^P]/.test(r.tr);
  }

  function matches(r) {
    const f = state.f;
    if (f.status && r.s !== f.status) return false;
    if (f.owasp && (r.o || '(none)') !== f.owasp) return false;
    if (f.technique && r.t !== f.technique) return false;
    if (f.pack && (r.p || '(no pack)') !== f.pack) return false;
    if (f.tag && !(r.g || []).includes(f.tag)) return false;
    if (f.kind && r.k !== f.kind) return false;
    if (f.change && r.ch !== f.change) return false;
    if (f.mark === 'quarantined' && !r.q) return false;
    if (f.mark === 'flaky' && !flaky(r)) return false;
    if (f.mark === 'hard' && !r.h) return false;
    if (f.mark === 'blocking' && !r.b) return false;
    if (f.mark === 'quality' && r.b) return false;
    if (state.q) {
      const words = state.q.toLowerCase().split(/\s+/).filter(Boolean);
      for (const w of words) if (!r._hay.includes(w)) return false;
    }
    return true;
  }

  const SORTS = {
    status: (a, b) => SEVERITY[a.s] - SEVERITY[b.s] || a.n.localeCompare(b.n),
    name: (a, b) => a.n.localeCompare(b.n),
    kind: (a, b) => a.k.localeCompare(b.k) || a.n.localeCompare(b.n),
    owasp: (a, b) => (a.o || '~').localeCompare(b.o || '~') || a.n.localeCompare(b.n),
    technique: (a, b) => (a.t || '~').localeCompare(b.t || '~') || a.n.localeCompare(b.n),
    pack: (a, b) => (a.p || '~').localeCompare(b.p || '~') || a.n.localeCompare(b.n),
    score: (a, b) => (a.sc ?? Infinity) - (b.sc ?? Infinity) || a.n.localeCompare(b.n),
    trials: (a, b) => passShare(a) - passShare(b) || a.n.localeCompare(b.n),
    ms: (a, b) => a.ms - b.ms || a.n.localeCompare(b.n),
    tok: (a, b) => a.tok - b.tok || a.n.localeCompare(b.n),
    base: (a, b) => (a.ch || '').localeCompare(b.ch || '') || a.n.localeCompare(b.n),
    why: (a, b) => (a.r || '~').localeCompare(b.r || '~') || a.n.localeCompare(b.n),
  };
  function passShare(r) {
    return r.tr.length ? r.tr.split('').filter((c) => c === 'P').length / r.tr.length : 0;
  }

  function applyFilters() {
    const cmp = SORTS[state.sort] || SORTS.status;
    const view = [];
    for (let i = 0; i < rows.length; i++) if (matches(rows[i])) view.push(i);
    view.sort((x, y) => state.dir * cmp(rows[x], rows[y]));
    state.view = view;
    state.active = Math.min(state.active, Math.max(0, view.length - 1));
    $('gx-count').textContent = view.length === rows.length
      ? rows.length + ' cases'
      : view.length + ' of ' + rows.length + ' cases match';
    $('gx-count').dataset.shown = String(view.length);
    for (const th of document.querySelectorAll('.gx-hrow [data-sort]')) {
      const cell = th.parentElement;
      if (th.dataset.sort === state.sort) cell.setAttribute('aria-sort', state.dir > 0 ? 'ascending' : 'descending');
      else cell.removeAttribute('aria-sort');
    }
    $('gx-grid').setAttribute('aria-rowcount', String(view.length + 1));
    state.viewKey = filterParams().toString();
    renderRows();
  }

  // The table: a spacer as tall as every row, and a small pool of row elements moved to
  // where the viewport is.
  const viewport = $('gx-viewport');
  const spacer = $('gx-spacer');
  const pool = [];
  const COLS = meta.baseline
    ? ['st', 'name', 'kind', 'owasp', 'tech', 'pack', 'score', 'trials', 'ms', 'tok', 'base', 'why']
    : ['st', 'name', 'kind', 'owasp', 'tech', 'pack', 'score', 'trials', 'ms', 'tok', 'why'];

  function makeRow() {
    const el = h('div', { cls: 'gx-row', role: 'row' });
    for (const c of COLS) {
      el.append(h('div', { role: 'gridcell', 'data-col': c, cls: c === 'ms' || c === 'tok' || c === 'score' ? 'gx-num' : null }));
    }
    spacer.append(el);
    return el;
  }

  function fmtMs(ms) {
    if (ms < 1000) return ms + ' ms';
    if (ms < 60000) return (ms / 1000).toFixed(1) + ' s';
    return (ms / 60000).toFixed(1) + ' min';
  }

  function trialChips(r) {
    const k = r.tr.length;
    const passed = r.tr.split('').filter((c) => c === 'P').length;
    const chips = r.tr.split('').map((c) => h('span', { cls: 'gx-t-' + c, title: TRIAL[c] }, c));
    return [h('span', { cls: 'gx-trials' }, chips), k > 1 ? ' ' + passed + '/' + k : ''];
  }

  function fillRow(el, r, vi) {
    el.hidden = false;
    el.style.transform = 'translateY(' + vi * ROW_H + 'px)';
    el.id = 'gx-row-' + vi;
    el.dataset.vi = String(vi);
    el.dataset.id = r.id;
    el.setAttribute('aria-rowindex', String(vi + 2));
    const active = vi === state.active;
    el.classList.toggle('gx-active', active);
    el.setAttribute('aria-selected', active ? 'true' : 'false');
    const cells = el.children;
    for (let i = 0; i < COLS.length; i++) {
      const cell = cells[i];
      clear(cell);
      switch (COLS[i]) {
        case 'st': cell.append(h('span', { cls: 'gx-st gx-st-' + r.s }, r.s)); break;
        case 'name':
          cell.append(r.n);
          if (r.q) cell.append(h('span', { cls: 'gx-tag gx-tag-q', title: 'quarantined' }, 'quarantined'));
          if (flaky(r)) cell.append(h('span', { cls: 'gx-tag gx-tag-flaky', title: 'trials disagree' }, 'flaky'));
          if (r.h) cell.append(h('span', { cls: 'gx-tag gx-tag-hard', title: 'hard policy failure' }, 'hard'));
          cell.title = r.n;
          break;
        case 'kind': cell.append(r.k); break;
        case 'owasp': cell.append(r.o || ''); break;
        case 'tech': cell.append(r.t || ''); cell.title = r.t || ''; break;
        case 'pack': cell.append(r.p || ''); break;
        case 'score': cell.append(r.st); break;
        case 'trials': cell.append(...trialChips(r)); break;
        case 'ms': cell.append(fmtMs(r.ms)); break;
        case 'tok': cell.append(String(r.tok) + (r.c ? ' · ' + r.c : '') + (r.rp ? ' · replay' : '')); break;
        case 'base': cell.append(r.ch ? CHANGE[r.ch] : ''); cell.title = r.bl ? 'baseline: ' + r.bl : ''; break;
        case 'why': cell.append(r.r || ''); cell.title = r.r || ''; break;
      }
    }
  }

  function renderRows() {
    const n = state.view.length;
    spacer.style.height = n * ROW_H + 'px';
    $('gx-empty').hidden = n > 0;
    const top = viewport.scrollTop;
    const height = viewport.clientHeight || 600;
    const first = Math.max(0, Math.floor(top / ROW_H) - 4);
    const last = Math.min(n, Math.ceil((top + height) / ROW_H) + 4);
    let used = 0;
    for (let vi = first; vi < last; vi++, used++) {
      const el = pool[used] || (pool[used] = makeRow());
      fillRow(el, rows[state.view[vi]], vi);
    }
    for (let j = used; j < pool.length; j++) pool[j].hidden = true;
    const grid = $('gx-grid');
    if (n > 0) grid.setAttribute('aria-activedescendant', 'gx-row-' + state.active);
    else grid.removeAttribute('aria-activedescendant');
  }

  function moveTo(vi) {
    const n = state.view.length;
    if (n === 0) return;
    state.active = Math.max(0, Math.min(n - 1, vi));
    const y = state.active * ROW_H;
    if (y < viewport.scrollTop) viewport.scrollTop = y;
    else if (y + ROW_H > viewport.scrollTop + viewport.clientHeight) viewport.scrollTop = y + ROW_H - viewport.clientHeight;
    renderRows();
  }

  // Location: filters, sort and the open case live in the fragment, so a link or a reload
  // shows the same thing, and Back leaves a case.
  function filterParams() {
    const p = new URLSearchParams();
    if (state.q) p.set('q', state.q);
    for (const k of FILTERS) if (state.f[k]) p.set(k, state.f[k]);
    if (state.sort !== 'status' || state.dir !== 1) {
      p.set('sort', state.sort);
      p.set('dir', String(state.dir));
    }
    return p;
  }
  function saveFilters() {
    try { history.replaceState(null, '', '#' + filterParams().toString()); } catch (e) { /* file: URLs may refuse */ }
  }
  function readLocation() {
    const p = new URLSearchParams(location.hash.slice(1));
    state.q = p.get('q') || '';
    state.f = {};
    for (const k of FILTERS) if (p.get(k)) state.f[k] = p.get(k);
    state.sort = SORTS[p.get('sort')] ? p.get('sort') : 'status';
    state.dir = p.get('dir') === '-1' ? -1 : 1;
    $('gx-q').value = state.q;
    for (const k of FILTERS) {
      const sel = $('gx-f-' + k);
      if (sel) sel.value = state.f[k] || '';
    }
    return { id: p.get('case'), trial: p.get('trial') };
  }
  function caseLink(id, trial) {
    const p = filterParams();
    p.set('case', id);
    if (trial !== undefined && trial !== null) p.set('trial', String(trial));
    return '#' + p.toString();
  }

  async function route() {
    const { id, trial } = readLocation();
    if (filterParams().toString() !== state.viewKey) applyFilters();
    if (id) {
      await showCase(id, trial === null ? null : Number(trial));
    } else {
      const wasOpen = state.open;
      state.open = null;
      $('gx-case').hidden = true;
      $('gx-overview').hidden = false;
      if (wasOpen) window.scrollTo(0, state.listScroll || 0);
      $('gx-grid').focus({ preventScroll: true });
      moveTo(state.active);
    }
  }

  // ---- A case's page ----

  // Strings the verdicts point at: excerpts in their details, quoted text in their evidence.
  // Checks whose evidence names what was missing: their quotes are not in the text.
  const ABSENCE = new Set(['contains', 'regex', 'equals', 'json_schema', 'json_path', 'tool_called',
    'tool_args', 'call_order', 'min_chars', 'max_chars']);

  function needles(verdicts) {
    const out = [];
    const one = (t, vi) => {
      t = t.replace(/…$/, '').trim();
      if (t.length >= 3 && !out.some((n) => n.text === t && n.v === vi)) out.push({ text: t, v: vi });
    };
    // Evidence quotes text the way Rust's Debug format does (\n, \", \\): look for both forms.
    const add = (text, vi) => {
      if (typeof text !== 'string') return;
      one(text, vi);
      const plain = text.replace(/\\(n|t|"|\\)/g, (_, c) => ({ n: '\n', t: '\t', '"': '"', '\\': '\\' })[c]);
      if (plain !== text) one(plain, vi);
    };
    verdicts.forEach((v, vi) => {
      if (v.passed || ABSENCE.has(v.check)) return;
      const d = v.details || {};
      for (const l of d.leaks || []) add(l.excerpt, vi);
      for (const f of d.findings || []) add(f.excerpt, vi);
      for (const e of Array.isArray(d.evidence) ? d.evidence : []) add(e, vi);
      const ev = v.evidence || '';
      for (const m of ev.matchAll(/"([^"\n]{3,400})"/g)) add(m[1], vi);
      for (const m of ev.matchAll(/`([^`\n]{3,200})`/g)) add(m[1], vi);
    });
    return out;
  }

  // The text with every occurrence of the needles wrapped in <mark>, as nodes.
  function marked(text, ns, verdicts) {
    text = text || '';
    const ranges = [];
    for (const n of ns) {
      let from = 0;
      for (let hits = 0; hits < 50; hits++) {
        const at = text.indexOf(n.text, from);
        if (at < 0) break;
        ranges.push([at, at + n.text.length, n.v]);
        from = at + n.text.length;
      }
    }
    ranges.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
    const out = [];
    let pos = 0;
    for (const [s, e, vi] of ranges) {
      if (s < pos) continue;
      if (s > pos) out.push(text.slice(pos, s));
      const v = verdicts[vi];
      out.push(h('mark', { 'data-v': vi, title: (v.label || v.check) + ': ' + v.evidence }, text.slice(s, e)));
      pos = e;
    }
    if (pos < text.length) out.push(text.slice(pos));
    return out;
  }

  function pre(text, ns, verdicts, cls) {
    return h('pre', { cls: cls || null }, ns ? marked(text, ns, verdicts) : text || '');
  }

  function json(v) {
    return JSON.stringify(v, null, 2);
  }

  function kv(pairs) {
    const dl = h('dl', { cls: 'gx-kv' });
    for (const [k, v] of pairs) {
      if (v === null || v === undefined || v === '') continue;
      dl.append(h('dt', null, k), h('dd', null, v));
    }
    return dl;
  }

  function firstNotPassing(trials) {
    const i = trials.findIndex((t) => t.status !== 'PASS');
    return i < 0 ? 0 : i;
  }

  function renderVerdicts(t, ns) {
    const list = h('ul', { cls: 'gx-verdicts' });
    t.verdicts.forEach((v, vi) => {
      const cls = v.gating === false ? 'gx-v-triage' : v.passed ? 'gx-v-pass' : 'gx-v-fail';
      const head = h('div', { cls: 'gx-vhead' },
        h('span', { cls: 'gx-st gx-st-' + (v.passed ? 'PASS' : 'FAIL') }, v.passed ? 'passed' : 'failed'),
        h('strong', null, v.label || v.check),
        h('span', { cls: 'gx-muted' }, v.check + ' · ' + v.dimension + ' · ' + v.score + '/3'),
        v.hard_fail ? h('span', { cls: 'gx-tag gx-tag-hard' }, 'hard policy failure') : null,
        v.gating === false ? h('span', { cls: 'gx-tag' }, 'triage: does not gate') : null);
      const li = h('li', { cls: cls, id: 'gx-v-' + vi }, head, h('div', { cls: 'gx-evidence' }, v.evidence));
      if (ns.some((n) => n.v === vi)) li.append(h('button', { type: 'button', 'data-show': vi, hidden: true }));
      if (v.details !== undefined && v.details !== null) {
        li.append(h('details', null, h('summary', null, 'details'), h('pre', null, json(v.details))));
      }
      list.append(li);
    });
    return list;
  }

  function renderTimeline(t, ns) {
    const spans = t.trace.spans || [];
    const durs = spans.map((s) => (s.kind === 'llm_call' ? s.latency_ms : s.kind === 'tool_call' ? s.duration_ms : 0) || 0);
    const total = Math.max(1, durs.reduce((a, b) => a + b, 0));
    const ol = h('ol', { cls: 'gx-timeline' });
    let at = 0;
    spans.forEach((s, i) => {
      const dur = durs[i];
      const lane = h('div', { cls: 'gx-lane', title: 'at ' + at + ' ms for ' + dur + ' ms' });
      const bar = h('span');
      bar.style.left = (100 * at / total).toFixed(2) + '%';
      bar.style.width = Math.max(0.5, 100 * dur / total).toFixed(2) + '%';
      lane.append(bar);
      at += dur;
      if (s.kind === 'llm_call') {
        const out = s.message_out || {};
        const li = h('li', { cls: 'gx-sp-llm' },
          h('div', { cls: 'gx-sphead' }, h('strong', null, 'model call'), h('span', { cls: 'gx-muted' },
            [s.model, (s.usage ? s.usage.input_tokens + ' in / ' + s.usage.output_tokens + ' out tokens' : ''),
              s.latency_ms + ' ms', s.finish_reason, s.attempts > 1 ? s.attempts + ' attempts' : null,
              s.agent ? 'agent ' + s.agent : null].filter(Boolean).join(' · '))),
          lane);
        if (out.content) li.append(pre(out.content, ns, t.verdicts));
        for (const c of out.tool_calls || []) {
          li.append(h('div', { cls: 'gx-muted' }, 'asks for ' + c.name + (c.malformed ? ' (arguments are not JSON)' : '')),
            pre(typeof c.arguments === 'string' ? c.arguments : json(c.arguments)));
        }
        const msgs = s.messages_in || [];
        if (msgs.length) {
          const d = h('details', null, h('summary', null, msgs.length + ' message(s) sent'));
          for (const m of msgs) {
            d.append(h('div', { cls: 'gx-muted' }, m.role + (m.name ? ' ' + m.name : '')), pre(m.content, ns, t.verdicts));
          }
          li.append(d);
        }
        ol.append(li);
      } else if (s.kind === 'tool_call') {
        const fx = s.side_effect;
        const li = h('li', { cls: 'gx-sp-tool' },
          h('div', { cls: 'gx-sphead' }, h('strong', null, 'tool ' + s.name),
            h('span', { cls: 'gx-muted' }, [s.duration_ms + ' ms', 'approval ' + String(s.approval).replace('_', ' '),
              s.agent ? 'agent ' + s.agent : null].filter(Boolean).join(' · ')),
            s.injected ? h('span', { cls: 'gx-inj' }, 'injected: ' + s.injected) : null),
          lane,
          kv([['arguments', pre(typeof s.arguments === 'string' ? s.arguments : json(s.arguments))],
            ['result', s.output !== undefined ? pre(s.output, ns, t.verdicts) : null],
            ['error', s.error ? pre(s.error, ns, t.verdicts) : null],
            ['side effect', fx ? fx.class + ', ' + fx.disposition + ': ' + fx.description : null]]));
        ol.append(li);
      } else if (s.kind === 'decision') {
        ol.append(h('li', { cls: 'gx-sp-decision' },
          h('div', { cls: 'gx-sphead' }, h('strong', null, 'decision: ' + s.branch), s.agent ? h('span', { cls: 'gx-muted' }, 'agent ' + s.agent) : null),
          s.reason ? h('div', null, s.reason) : null));
      }
    });
    for (const e of t.trace.transport || []) {
      ol.append(h('li', { cls: 'gx-sp-transport' },
        h('div', { cls: 'gx-sphead' }, h('strong', null, 'transport: ' + e.kind.replace('_', ' ')),
          h('span', { cls: 'gx-muted' }, 'at ' + e.at_ms + ' ms' + (e.status ? ' · HTTP ' + e.status : ''))),
        h('div', null, e.detail)));
    }
    if (!ol.firstChild) ol.append(h('li', null, 'The trace is empty.'));
    return ol;
  }

  // report.json leaves out the turns that follow from the model calls (see docs/report-format.md):
  // a turn starts at each call whose last message in is the user's; its answer is the last
  // call's reply before the next turn.
  function derivedTurns(spans) {
    const out = [];
    for (const s of spans) {
      if (s.kind !== 'llm_call') continue;
      const msgs = s.messages_in || [];
      const last = msgs[msgs.length - 1];
      const out_ = s.message_out || {};
      const reply = { answer: out_.content || '', truncated: s.finish_reason === 'length' };
      if (last && last.role === 'user') out.push(Object.assign({ user: last.content }, reply));
      else if (out.length) Object.assign(out[out.length - 1], reply);
    }
    return out;
  }

  // A tree of attacks (trace.strategy's tree_node events) as nested lists, each node under
  // the node it grew from: its prompt, score, the start of the reply, why it was pruned. All
  // of it is text: the prompts and replies are the models'.
  function renderTree(t) {
    const nodes = (t.trace.strategy || []).filter((e) => e.kind === 'tree_node');
    if (!nodes.length) return null;
    const kids = new Map();
    for (const n of nodes) {
      const k = n.parent === undefined || n.parent === null ? 0 : n.parent;
      if (!kids.has(k)) kids.set(k, []);
      kids.get(k).push(n);
    }
    const seen = new Set();
    const list = (parent) => {
      const ol = h('ol', { cls: 'gx-tree' });
      for (const n of kids.get(parent) || []) {
        if (seen.has(n.id)) continue;
        seen.add(n.id);
        const cls = n.achieved ? 'gx-tn-hit' : n.pruned ? 'gx-tn-pruned' : 'gx-tn';
        const head = h('div', { cls: 'gx-sphead' }, h('strong', null, 'node ' + n.id),
          h('span', { cls: 'gx-muted' }, ['level ' + n.depth, n.score !== undefined ? 'score ' + n.score + '/10' : null,
            n.verdict, n.achieved ? 'objective reached' : null].filter(Boolean).join(' · ')));
        const j = n.judge;
        const li = h('li', { cls: cls }, head, pre(n.prompt),
          n.reply_excerpt !== undefined ? h('div', { cls: 'gx-muted' }, 'reply: ' + n.reply_excerpt) : null,
          j && j.fault ? h('div', { cls: 'gx-muted' }, 'judge ' + j.check + ' gave no verdict (scored by attack_success): ' + j.fault) : null,
          n.pruned ? h('div', { cls: 'gx-muted' }, 'pruned: ' + n.pruned) : null);
        if (kids.has(n.id)) li.append(list(n.id));
        ol.append(li);
      }
      return ol;
    };
    // Who ranked the tree: its judge where one answered (triage ranks, only a gating one
    // decides), else the objective reading.
    const judged = nodes.map((n) => n.judge).filter((j) => j && !j.fault);
    const by = judged.length
      ? 'Ranked by judge ' + judged[0].check + ' (' + judged[0].gate + (judged[0].gate === 'gating' ? '' : ': it ranks, attack_success decides') + ')'
      : 'Ranked by attack_success';
    return h('div', null, h('p', { cls: 'gx-muted' }, by), list(0));
  }

  function renderTrial(panel, r, d, ti) {
    clear(panel);
    const t = d.r.trials[ti];
    if (!t) { panel.append(h('p', null, 'No trial ' + (ti + 1) + '.')); return; }
    const ns = needles(t.verdicts);
    panel.append(h('h3', null, 'Trial ' + (ti + 1) + ' · ' + t.outcome + ' · ' + t.status + ' · ' + fmtMs(t.duration_ms)));
    if (t.error) panel.append(h('p', { cls: 'gx-error' }, t.error));
    panel.append(h('h3', null, 'Conversation'));
    const turns = t.trace.turns || derivedTurns(t.trace.spans || []);
    if (!turns.length) panel.append(h('p', { cls: 'gx-muted' }, 'No turn was recorded.'));
    turns.forEach((turn, i) => {
      panel.append(h('div', { cls: 'gx-turn' },
        h('div', { cls: 'gx-who' }, 'user ' + (i + 1)), pre(turn.user),
        h('div', { cls: 'gx-who' }, 'agent' + (turn.truncated ? ' (cut)' : '')),
        pre(turn.answer, ns, t.verdicts, 'gx-answer')));
    });
    const tree = renderTree(t);
    if (tree) panel.append(h('h3', null, 'Tree of attacks'), tree);
    panel.append(h('h3', null, 'Verdicts'), renderVerdicts(t, ns));
    panel.append(h('h3', null, 'Timeline'), renderTimeline(t, ns));
    // Now that the text is drawn, say how many places each verdict's evidence was found in.
    for (const b of panel.querySelectorAll('[data-show]')) {
      const n = panel.querySelectorAll('mark[data-v="' + b.dataset.show + '"]').length;
      if (n > 0) {
        b.textContent = 'show in the text (' + n + ')';
        b.hidden = false;
      } else {
        b.remove();
      }
    }
  }

  async function showCase(id, trial) {
    const r = byId.get(id);
    const view = $('gx-case');
    if (!state.open) state.listScroll = window.scrollY;
    $('gx-overview').hidden = true;
    view.hidden = false;
    clear(view);
    const back = h('a', { href: '#' + filterParams().toString(), cls: 'gx-back' }, '← all cases');
    if (!r) {
      view.append(h('div', { cls: 'gx-case-nav' }, back), h('p', { cls: 'gx-error' }, 'No case with id ' + id + ' in this run.'));
      return;
    }
    state.open = r;
    const vi = state.view.indexOf(r.i);
    if (vi >= 0) state.active = vi;
    const d = await detail(r);
    const cr = d.r;
    const ti = trial === null || Number.isNaN(trial) ? firstNotPassing(cr.trials) : Math.max(0, trial - 1);
    const prev = vi > 0 ? rows[state.view[vi - 1]] : null;
    const next = vi >= 0 && vi + 1 < state.view.length ? rows[state.view[vi + 1]] : null;
    const nav = h('div', { cls: 'gx-case-nav' }, back,
      prev ? h('a', { href: caseLink(prev.id), 'data-key': 'k' }, '↑ previous') : null,
      next ? h('a', { href: caseLink(next.id), 'data-key': 'j' }, '↓ next') : null,
      h('span', { cls: 'gx-muted' }, vi >= 0 ? 'case ' + (vi + 1) + ' of ' + state.view.length : ''));
    const c = cr.case;
    const head = h('div', { cls: 'gx-case-head' },
      h('span', { cls: 'gx-st gx-st-' + cr.status, id: 'gx-case-status' }, cr.status),
      h('h2', { id: 'gx-case-name' }, c.name || c.id),
      h('span', null, r.st),
      r.q ? h('span', { cls: 'gx-tag gx-tag-q' }, 'quarantined') : null,
      flaky(r) ? h('span', { cls: 'gx-tag gx-tag-flaky' }, 'flaky') : null);
    const facts = kv([['id', c.id], ['suite', c.suite], ['kind', c.kind], ['pack', c.pack], ['OWASP', c.owasp],
      ['technique', c.technique], ['tags', (c.tags || []).join(', ')],
      ['gates', c.blocking ? 'blocking (worst trial counts)' : 'quality (mean of trials)'],
      ['trials', cr.passed_trials + ' of ' + cr.trials.length + ' passed'],
      ['description', c.description]]);
    const why = h('ul', { cls: 'gx-why gx-why-' + cr.status, id: 'gx-why' }, (d.why.length ? d.why : ['passed every check']).map((w) => h('li', null, w)));
    view.append(nav, head, facts, h('h3', null, 'Why this state'), why);
    if (d.base) {
      view.append(h('h3', null, 'Against the baseline'), kv([
        ['baseline', d.base.status + (d.base.score !== null && d.base.score !== undefined ? ' (' + d.base.score + ')' : '')],
        ['now', cr.status + ' (' + r.st + ')'], ['change', r.ch ? CHANGE[r.ch] : ''],
        ['baseline reason', d.base.reason]]));
    } else if (meta.baseline) {
      view.append(h('h3', null, 'Against the baseline'), h('p', { cls: 'gx-muted' }, 'Not in the baseline run.'));
    }
    const tabs = h('div', { cls: 'gx-tabs', role: 'tablist', 'aria-label': 'Trials' });
    cr.trials.forEach((t, i) => {
      tabs.append(h('a', { href: caseLink(id, i + 1), role: 'tab', 'aria-selected': i === ti ? 'true' : 'false' },
        h('span', { cls: 'gx-st gx-st-' + t.status }, t.status), 'trial ' + (i + 1) + ' · ' + fmtMs(t.duration_ms)));
    });
    const panel = h('div', { role: 'tabpanel', id: 'gx-trial' });
    view.append(h('h3', null, cr.trials.length > 1 ? cr.trials.length + ' trials side by side' : 'Trial'), tabs, panel);
    renderTrial(panel, r, d, ti);
    view.focus({ preventScroll: true });
    window.scrollTo(0, 0);
    root.dataset.caseReady = id;
  }

  function showMarks(vi) {
    const marks = document.querySelectorAll('#gx-trial mark[data-v="' + Number(vi) + '"]');
    for (const m of marks) m.classList.add('gx-flash');
    if (marks[0]) marks[0].scrollIntoView({ block: 'center' });
  }

  // ---- Wiring ----

  function bind() {
    $('gx-q').addEventListener('input', () => { state.q = $('gx-q').value.trim(); state.active = 0; saveFilters(); applyFilters(); });
    for (const k of FILTERS) {
      const sel = $('gx-f-' + k);
      if (sel) sel.addEventListener('change', () => { state.f[k] = sel.value; state.active = 0; saveFilters(); applyFilters(); });
    }
    $('gx-clear').addEventListener('click', () => {
      state.q = ''; state.f = {}; state.active = 0;
      $('gx-q').value = '';
      for (const k of FILTERS) { const sel = $('gx-f-' + k); if (sel) sel.value = ''; }
      saveFilters(); applyFilters();
    });
    for (const b of document.querySelectorAll('.gx-hrow [data-sort]')) {
      b.addEventListener('click', () => {
        const s = b.dataset.sort;
        if (state.sort === s) state.dir = -state.dir; else { state.sort = s; state.dir = 1; }
        saveFilters(); applyFilters();
      });
    }
    viewport.addEventListener('scroll', () => requestAnimationFrame(renderRows), { passive: true });
    spacer.addEventListener('click', (e) => {
      const row = e.target.closest('.gx-row');
      if (row) location.hash = caseLink(row.dataset.id).slice(1);
    });
    $('gx-grid').addEventListener('keydown', (e) => {
      const page = Math.max(1, Math.floor(viewport.clientHeight / ROW_H) - 1);
      const keys = {
        ArrowDown: 1, j: 1, ArrowUp: -1, k: -1, PageDown: page, PageUp: -page,
      };
      if (e.key in keys) { moveTo(state.active + keys[e.key]); e.preventDefault(); }
      else if (e.key === 'Home') { moveTo(0); e.preventDefault(); }
      else if (e.key === 'End') { moveTo(state.view.length - 1); e.preventDefault(); }
      else if ((e.key === 'Enter' || e.key === 'o') && state.view.length) {
        location.hash = caseLink(rows[state.view[state.active]].id).slice(1);
        e.preventDefault();
      }
    });
    $('gx-case').addEventListener('click', (e) => {
      const b = e.target.closest('[data-show]');
      if (b) showMarks(b.dataset.show);
    });
    document.addEventListener('keydown', (e) => {
      const typing = /^(INPUT|SELECT|TEXTAREA)$/.test(e.target.tagName);
      if (e.key === '/' && !typing) { $('gx-q').focus(); e.preventDefault(); return; }
      if (e.key === 'Escape') {
        if (state.open) { location.hash = filterParams().toString(); e.preventDefault(); }
        else if (typing) { e.target.blur(); $('gx-grid').focus(); }
        return;
      }
      // On a case's page, j and k step through the cases as the table lists them.
      if (state.open && !typing && (e.key === 'j' || e.key === 'k')) {
        const a = document.querySelector('#gx-case [data-key="' + e.key + '"]');
        if (a) { location.hash = a.getAttribute('href').slice(1); e.preventDefault(); }
      }
    });
    window.addEventListener('hashchange', () => { route().catch(fail); });
  }

  function fail(err) {
    console.error(err);
    const p = $('gx-load');
    p.hidden = false;
    p.className = 'gx-error';
    p.textContent = 'The report could not be shown: ' + (err && err.message ? err.message : String(err));
  }

  async function main() {
    if (typeof DecompressionStream !== 'function') {
      throw new Error('this browser has no DecompressionStream; open the report in a current Chromium, Firefox or Safari');
    }
    const parts = await Promise.all(Array.from({ length: meta.chunks }, (_, c) => inflate('gx-r-' + c)));
    parts.forEach((part, c) => part.forEach((r, p) => {
      r._c = c;
      r._p = p;
      r.i = rows.length;
      r._hay = [r.id, r.n, r.r || '', (r.fc || []).join(' '), (r.g || []).join(' '), r.t || '', r.o || '', r.p || '', r.s]
        .join('\n').toLowerCase();
      rows.push(r);
      byId.set(r.id, r);
    }));
    $('gx-load').hidden = true;
    bind();
    await route();
    root.dataset.rows = String(rows.length);
    root.dataset.loadMs = String(Math.round(performance.now()));
    root.dataset.ready = '1';
  }

  main().catch(fail);
})();
