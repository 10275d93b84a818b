// The inspector of sluice-agent: the captured requests, live, and one in
// detail. Everything a capture holds is attacker-controlled: it is only
// ever inserted as text (textContent), never as markup.
'use strict';

(function () {
  const maxShown = 500;
  const state = { captures: [], ids: new Set(), selected: null, polling: null, fresh: new Set() };
  const $ = (id) => document.getElementById(id);

  function el(tag, className, text) {
    const e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  // labelText is a labeled tunnel's labels, name=value, by name.
  function labelText(labels) {
    return Object.keys(labels || {}).sort().map((k) => k + '=' + labels[k]).join(', ');
  }

  async function api(method, path, body) {
    const init = { method, headers: {} };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const res = await fetch(path, init);
    if (res.status === 204) return null;
    let data = null;
    try { data = await res.json(); } catch (e) { data = null; }
    if (!res.ok) {
      const msg = data && (data.details && data.details.err ? data.msg + ': ' + data.details.err : data.msg);
      throw new Error(msg || res.status + ' ' + res.statusText);
    }
    return data;
  }

  let toastTimer = null;
  function toast(text, isError) {
    const t = $('toast');
    t.textContent = text;
    t.className = isError ? 'toast error' : 'toast';
    t.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { t.hidden = true; }, 3000);
  }

  function formatDuration(ns) {
    if (typeof ns !== 'number' || !isFinite(ns)) return '';
    if (ns < 1e6) return (ns / 1e3).toFixed(0) + ' µs';
    if (ns < 1e9) return (ns / 1e6).toFixed(ns < 1e7 ? 1 : 0) + ' ms';
    return (ns / 1e9).toFixed(2) + ' s';
  }

  function formatTime(iso) {
    const d = new Date(iso);
    return isNaN(d) ? '' : d.toLocaleTimeString();
  }

  function statusClass(code) {
    return 's' + Math.floor((code || 0) / 100);
  }

  // The list.

  function setCaptures(list) {
    state.captures = list.slice(0, maxShown);
    state.ids = new Set(state.captures.map((c) => c.id));
    renderList();
  }

  function addCapture(c) {
    if (!c || state.ids.has(c.id)) return;
    state.captures.unshift(c);
    state.ids.add(c.id);
    while (state.captures.length > maxShown) state.ids.delete(state.captures.pop().id);
    state.fresh.add(c.id);
    scheduleRender();
  }

  // scheduleRender renders the list once a frame at most, however fast
  // captures come.
  let renderPending = false;
  function scheduleRender() {
    if (renderPending) return;
    renderPending = true;
    requestAnimationFrame(() => {
      renderPending = false;
      renderList();
    });
  }

  function renderList() {
    const ol = $('requests');
    const rows = state.captures.map(renderRow);
    ol.replaceChildren(...rows);
    state.fresh.clear();
    $('empty').hidden = state.captures.length > 0;
    $('count').textContent = state.captures.length ? String(state.captures.length) : '';
  }

  function renderRow(c) {
    const li = el('li');
    const row = el('button', 'row');
    row.type = 'button';
    row.dataset.id = c.id;
    if (c.id === state.selected) row.classList.add('selected');
    if (state.fresh.has(c.id)) row.classList.add('fresh');
    const req = c.request || {};
    const res = c.response || {};
    row.append(
      el('span', 'method', req.method),
      el('span', 'path', req.uri),
      el('span', 'code ' + statusClass(res.status_code), res.status_code || '—'),
      el('span', 'duration', formatDuration(c.duration)),
    );
    const meta = el('span', 'meta');
    meta.append(el('span', 'time', formatTime(c.start)), el('span', 'tunnel', c.tunnel_name));
    row.append(meta);
    row.title = (req.method || '') + ' ' + (req.uri || '');
    row.addEventListener('click', () => select(c.id));
    li.append(row);
    return li;
  }

  async function loadList() {
    try {
      const data = await api('GET', '/api/requests/http?limit=' + maxShown);
      setCaptures(data.requests || []);
    } catch (e) {
      toast('Could not list the requests: ' + e.message, true);
    }
  }

  // The detail of one capture.

  async function select(id) {
    state.selected = id;
    for (const row of document.querySelectorAll('.row')) {
      row.classList.toggle('selected', row.dataset.id === id);
    }
    let c;
    try {
      c = await api('GET', '/api/requests/http/' + encodeURIComponent(id));
    } catch (e) {
      toast('Could not load the request: ' + e.message, true);
      return;
    }
    if (state.selected !== id) return;
    renderDetail(c);
    if (window.matchMedia('(max-width: 860px)').matches) {
      // Scroll the page itself (scrollIntoView may move only the
      // visual viewport of a phone).
      window.scrollTo(0, $('detail').getBoundingClientRect().top + window.scrollY);
    }
  }

  function decodeBase64(b64) {
    const bin = atob(b64 || '');
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return bytes;
  }

  // bodyOf returns the bytes after the head of a raw HTTP message.
  function bodyOf(raw) {
    const bytes = decodeBase64(raw);
    for (let i = 0; i + 3 < bytes.length; i++) {
      if (bytes[i] === 13 && bytes[i + 1] === 10 && bytes[i + 2] === 13 && bytes[i + 3] === 10) {
        return bytes.subarray(i + 4);
      }
    }
    return new Uint8Array(0);
  }

  function asText(bytes) {
    let text;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch (e) {
      return null;
    }
    // Control characters other than tab, newline and return: binary.
    if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text)) return null;
    return text;
  }

  function hexDump(bytes, limit) {
    const lines = [];
    const n = Math.min(bytes.length, limit);
    for (let off = 0; off < n; off += 16) {
      const chunk = bytes.subarray(off, Math.min(off + 16, n));
      const hex = Array.from(chunk, (b) => b.toString(16).padStart(2, '0')).join(' ');
      const ascii = Array.from(chunk, (b) => (b >= 32 && b < 127 ? String.fromCharCode(b) : '.')).join('');
      lines.push(off.toString(16).padStart(6, '0') + '  ' + hex.padEnd(48) + ' ' + ascii);
    }
    return lines.join('\n');
  }

  function headerValue(headers, name) {
    for (const key of Object.keys(headers || {})) {
      if (key.toLowerCase() === name) return (headers[key] || []).join(', ');
    }
    return '';
  }

  function renderPart(title, line, part) {
    const box = el('section', 'part');
    const h = el('h3', null, title);
    h.append(el('span', 'line', line));
    box.append(h);
    const table = el('table', 'headers');
    const tbody = el('tbody');
    for (const name of Object.keys(part.headers || {}).sort()) {
      for (const value of part.headers[name] || []) {
        const tr = el('tr');
        tr.append(el('th', null, name), el('td', null, value));
        tbody.append(tr);
      }
    }
    table.append(tbody);
    box.append(table);

    const body = bodyOf(part.raw);
    const size = typeof part.body_size === 'number' ? part.body_size : body.length;
    if (size === 0 && body.length === 0) {
      box.append(el('p', 'note', 'No body.'));
      return box;
    }
    const text = asText(body);
    let shown;
    if (text !== null) {
      shown = text;
      if (/json/i.test(headerValue(part.headers, 'content-type'))) {
        try { shown = JSON.stringify(JSON.parse(text), null, 2); } catch (e) { shown = text; }
      }
      box.append(el('p', 'note', size + ' bytes'));
    } else {
      shown = hexDump(body, 256);
      box.append(el('p', 'note', size + ' bytes, binary' + (body.length > 256 ? ' (the first 256 shown)' : '')));
    }
    box.append(el('pre', 'body', shown));
    if (part.truncated) {
      box.append(el('p', 'note', 'Truncated: only the first ' + body.length + ' bytes were captured.'));
    }
    return box;
  }

  function renderDetail(c) {
    const pane = $('detail');
    const req = c.request || {};
    const res = c.response || {};
    const head = el('div', 'detail-head');
    head.append(el('span', 'title', (req.method || '') + ' ' + (req.uri || '')));
    const code = el('span', 'code ' + statusClass(res.status_code), res.status || '');
    const replay = el('button', 'button primary', 'Replay');
    replay.type = 'button';
    replay.id = 'replay';
    replay.addEventListener('click', () => doReplay(c, replay));
    head.append(code, replay);

    const facts = el('dl', 'facts');
    const fact = (k, v) => facts.append(el('dt', null, k), el('dd', null, v));
    fact('Tunnel', c.tunnel_name);
    fact('From', c.remote_addr);
    fact('Started', new Date(c.start).toLocaleString());
    fact('Duration', formatDuration(c.duration));
    fact('ID', c.id);

    const exchange = el('div', 'exchange');
    exchange.append(
      renderPart('Request', (req.method || '') + ' ' + (req.uri || '') + ' ' + (req.proto || ''), req),
      renderPart('Response', (res.proto || '') + ' ' + (res.status || ''), res),
    );
    pane.replaceChildren(head, facts, exchange);
  }

  async function doReplay(c, button) {
    button.disabled = true;
    try {
      await api('POST', '/api/requests/http', { id: c.id, tunnel_name: c.tunnel_name });
      toast('Replayed ' + (c.request.method || '') + ' ' + (c.request.uri || ''));
      if (state.polling) loadList();
    } catch (e) {
      toast('Replay failed: ' + e.message, true);
    } finally {
      button.disabled = false;
    }
  }

  async function clearAll() {
    try {
      await api('DELETE', '/api/requests/http');
      setCaptures([]);
      state.selected = null;
      $('detail').replaceChildren(el('p', 'empty', 'Select a request to see its headers and body.'));
    } catch (e) {
      toast('Could not clear: ' + e.message, true);
    }
  }

  // Live updates: server-sent events, or polling when they fail.

  function setLive(text, on) {
    const live = $('live');
    live.textContent = text;
    live.classList.toggle('on', on);
  }

  function startPolling() {
    if (state.polling) return;
    setLive('polling', false);
    loadList();
    state.polling = setInterval(loadList, 2000);
  }

  function stopPolling() {
    if (!state.polling) return;
    clearInterval(state.polling);
    state.polling = null;
  }

  function connect() {
    if (!window.EventSource) {
      startPolling();
      return;
    }
    const events = new EventSource('/api/requests/http/stream');
    // On each (re)connection, read the list: what came while it was
    // down, or before it opened.
    events.addEventListener('open', () => {
      stopPolling();
      setLive('live', true);
      loadList();
    });
    events.addEventListener('capture', (e) => {
      try { addCapture(JSON.parse(e.data)); } catch (err) { loadList(); }
    });
    events.addEventListener('clear', () => setCaptures([]));
    events.addEventListener('resync', loadList);
    events.addEventListener('error', () => {
      if (events.readyState === EventSource.CLOSED) startPolling();
      else setLive('reconnecting', false);
    });
  }

  // The agent's status and tunnels.

  async function loadStatus() {
    try {
      const st = await api('GET', '/api/status');
      $('state').textContent = st.state || 'unknown';
      $('state-dot').className = 'dot ' + (st.state || '');
      $('edge').textContent = st.edge ? 'edge ' + st.edge : (st.last_error || '');
      $('latency').textContent = st.latency_ms ? st.latency_ms.toFixed(1) + ' ms' : '';
      $('version').textContent = st.agent_version ? 'v' + st.agent_version.replace(/^v/, '') : '';
    } catch (e) {
      $('state').textContent = 'agent unreachable';
      $('state-dot').className = 'dot offline';
    }
    try {
      const data = await api('GET', '/api/tunnels');
      const items = (data.tunnels || []).map((t) => {
        const li = el('li', 'tunnel');
        // A labeled tunnel has no URL: its labels say what reaches it.
        li.append(el('span', 'name', t.name), el('span', 'url', t.public_url || labelText(t.labels)),
          el('span', 'muted', '→'), el('span', 'addr', t.config ? t.config.addr : ''));
        return li;
      });
      $('tunnels').replaceChildren(...items);
    } catch (e) {
      $('tunnels').replaceChildren();
    }
  }

  document.addEventListener('DOMContentLoaded', () => {
    $('clear').addEventListener('click', clearAll);
    connect();
    loadStatus();
    setInterval(loadStatus, 5000);
  });
})();
