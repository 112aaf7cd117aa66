// Live lock dashboard: reads the starter's actuator endpoint, nothing else.
const ENDPOINT = 'actuator/locks';

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v; else if (k.startsWith('on')) e.addEventListener(k.slice(2), v); else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

function time(iso) {
  return iso ? new Date(iso).toLocaleTimeString() : '';
}

// The server frees the whole grant (every path a request locked together, e.g. a move's source and
// destination) and answers what it freed, in the listing's shape.
function releasedText(d) {
  if (!d.released) return `Nothing released: lock ${d.lockId} was already released or its lease had ended.`;
  const locks = [...d.paths.map(p => `${p.mode} ${p.path}`), ...d.singletons.map(s => `singleton ${s.name}`),
    ...d.semaphores.map(s => `a permit of ${s.name}`)];
  const first = d.paths[0] || d.singletons[0] || d.semaphores[0];
  return `Released (tenant ${first.tenant}):\n${locks.join('\n')}`;
}

function releaseButton(lockId, what) {
  return el('button', {
    class: 'release', 'data-lock-id': lockId,
    onclick: async () => {
      if (!confirm(`Force-release ${what} and all else its request locked with it (its whole grant, e.g. both `
        + `ends of a move)? Its owner may still be working; its handle becomes invalid.`)) return;
      const r = await fetch(`${ENDPOINT}/${lockId}`, { method: 'DELETE', headers: { Accept: 'application/json' } });
      alert(r.ok ? releasedText(await r.json()) : `Force-release failed: HTTP ${r.status}`);
      refresh();
    }
  }, 'force release');
}

// Builds a tree of path segments per tenant, with the locks hanging on the nodes where they are held.
function renderTrees(paths) {
  const root = document.getElementById('trees');
  root.replaceChildren();
  if (paths.length === 0) {
    root.append(el('p', { class: 'empty' }, 'No path is locked.'));
    return;
  }
  const byTenant = new Map();
  for (const p of paths) {
    if (!byTenant.has(p.tenant)) byTenant.set(p.tenant, { children: new Map(), locks: [] });
    let node = byTenant.get(p.tenant);
    for (const segment of p.path.split('/').filter(s => s.length > 0)) {
      if (!node.children.has(segment)) node.children.set(segment, { children: new Map(), locks: [] });
      node = node.children.get(segment);
    }
    node.locks.push(p);
  }
  for (const [tenant, tree] of [...byTenant.entries()].sort()) {
    root.append(el('div', { class: 'tenant' }, `tenant ${tenant}`));
    root.append(renderNode('/', tree, true));
  }
}

function renderNode(name, node, isRoot) {
  const ul = el('ul', { class: 'tree' });
  const li = el('li', {}, el('span', { class: 'segment' }, isRoot ? '/' : name));
  for (const lock of node.locks) {
    li.append(el('span', { class: `lock ${lock.mode}`, 'data-path': lock.path, 'data-tenant': lock.tenant },
      el('strong', {}, lock.mode),
      `${lock.node} / ${lock.thread}`,
      el('span', { class: 'muted' }, `since ${time(lock.since)}, lease until ${time(lock.expiresAt)}, token ${lock.lockId}`),
      releaseButton(lock.lockId, `${lock.mode} ${lock.path} held by ${lock.node}`)));
  }
  for (const [childName, child] of [...node.children.entries()].sort()) {
    li.append(renderNode(childName, child, false));
  }
  ul.append(li);
  return ul;
}

function fillTable(id, rows, toCells, emptyText) {
  const body = document.querySelector(`#${id} tbody`);
  body.replaceChildren();
  if (rows.length === 0) {
    body.append(el('tr', {}, el('td', { colspan: 7, class: 'empty' }, emptyText)));
    return;
  }
  for (const row of rows) body.append(el('tr', {}, ...toCells(row).map(c => el('td', {}, c))));
}

async function refresh() {
  try {
    const r = await fetch(ENDPOINT, { headers: { Accept: 'application/json' } });
    if (!r.ok) throw new Error(`HTTP ${r.status}`);
    const d = await r.json();
    document.getElementById('summary').textContent =
      `node ${d.node} · ${d.heldByThisNode} held here · ${d.waitingOnThisNode} waiting here · ${d.paths.length} path locks in the cluster`;
    renderTrees(d.paths);
    fillTable('waiters', d.waiters || [], w => [w.ticket, w.tenant, w.kind, w.path, w.mode, `${w.node} / ${w.thread}`, time(w.since)],
      'Nobody is waiting.');
    fillTable('semaphores', d.semaphores, s => [s.tenant, s.name, s.permitsInUse, s.permits.map(p => p.node).join(', ')],
      'No permit is in use.');
    fillTable('singletons', d.singletons, s => [s.tenant, s.name, `${s.node} / ${s.thread}`, time(s.since), time(s.expiresAt),
      releaseButton(s.lockId, `singleton ${s.name}`)], 'No singleton is held.');
    document.getElementById('error').textContent = '';
  } catch (e) {
    document.getElementById('error').textContent = `cannot read ${ENDPOINT}: ${e.message}`;
  }
}

refresh();
setInterval(refresh, 1000);
