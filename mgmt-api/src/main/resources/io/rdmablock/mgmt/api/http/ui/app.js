// The rdmablock dashboard: reads /v1/nodes, /v1/volumes and /v1/stats/volumes of the management server that serves
// this page, every few seconds, with the token the operator typed in (kept in sessionStorage, sent as Bearer on every
// call; a URL fragment #token=T sets it and is then removed from the address). The read token shows the cluster; the
// cluster token (answers say X-Rdmablock-Token-Scope: admin) also enables create, resize and delete of volumes and
// drain of nodes. Everything is built with DOM calls and textContent (no HTML from data).
"use strict";

const REFRESH_MS = 2000;
const TOKEN_KEY = "rdmablock.token";
const $ = id => document.getElementById(id);

function token() { return sessionStorage.getItem(TOKEN_KEY) || ""; }
// scope of the token as the server last answered: "admin", "read" or "" (none, or refused)
let scope = "";

function fmtBytes(n) {
  if (n === null || n === undefined || isNaN(n)) return "-";
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let i = 0, v = Number(n);
  while (Math.abs(v) >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return (i === 0 ? v.toFixed(0) : v.toFixed(v >= 100 ? 0 : 1)) + " " + units[i];
}
function fmtRate(n) { return fmtBytes(n) + "/s"; }
function fmtNum(n) { return n >= 1000 ? (n / 1000).toFixed(n >= 10000 ? 0 : 1) + "k" : n.toFixed(0); }
function fmtUs(n) { return n >= 1000 ? (n / 1000).toFixed(2) + " ms" : n.toFixed(0) + " µs"; }

function parseSize(s) {
  const m = /^\s*(\d+)\s*([KMGT]?)(i?B)?\s*$/i.exec(s);
  if (!m) throw new Error("invalid size: " + s + " (bytes or K/M/G/T)");
  const mul = {"": 1, K: 2 ** 10, M: 2 ** 20, G: 2 ** 30, T: 2 ** 40}[m[2].toUpperCase()];
  return Number(m[1]) * mul;
}

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}
function cell(tr, text, cls) { const td = el("td", text, cls); tr.appendChild(td); return td; }
function stateCell(tr, state) { return cell(tr, state, "state state-" + state); }

async function api(method, path, body) {
  const headers = {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token()) headers["Authorization"] = "Bearer " + token();
  const r = await fetch(path, {method, headers, body: body === undefined ? undefined : JSON.stringify(body),
                               cache: "no-store"});
  const answered = r.status === 401 ? "" : r.headers.get("X-Rdmablock-Token-Scope");
  if (answered !== null && answered !== scope) { scope = answered; applyMode(); }
  const text = await r.text();
  const data = text ? JSON.parse(text) : null;
  if (!r.ok) {
    const why = data && data.detail ? data.title + ": " + data.detail : "HTTP " + r.status;
    throw new Error(method + " " + path + ": " + why);
  }
  return data;
}

function showError(e) {
  const p = $("error");
  if (e) { p.textContent = String(e.message || e); p.hidden = false; } else { p.hidden = true; }
}

async function act(what) {
  try { await what(); showError(null); } catch (e) { showError(e); }
  refresh();
}

function button(label, onClick) {
  const b = el("button", label);
  b.type = "button";
  b.addEventListener("click", onClick);
  return b;
}

// usage: {nodeId: {usedBytes, provisionedBytes}} from /v1/stats/volumes (the nodes' metrics)
function renderNodes(nodes, usage) {
  const body = $("nodes").tBodies[0];
  body.replaceChildren();
  if (nodes.length === 0) {
    const tr = el("tr"); const td = cell(tr, "no storage node registered", "empty"); td.colSpan = 8;
    body.appendChild(tr);
  }
  for (const n of nodes) {
    const tr = el("tr");
    tr.dataset.node = n.nodeId;
    cell(tr, n.nodeId);
    stateCell(tr, n.state);
    cell(tr, fmtBytes(n.capacityBytes), "num");
    const u = usage[n.nodeId];
    const usedCell = cell(tr, u && u.usedBytes >= 0 ? fmtBytes(u.usedBytes) : "-", "num");
    if (u && u.provisionedBytes >= 0) usedCell.title = fmtBytes(u.provisionedBytes) + " provisioned in volumes";
    cell(tr, fmtBytes(n.freeBytes), "num");
    cell(tr, n.fabricAddress);
    cell(tr, n.lastHeartbeat || "-");
    const a = cell(tr, null, "act");
    if (n.state !== "draining") {
      a.appendChild(button("drain", () => {
        if (confirm("Drain node " + n.nodeId + "? It gets no new volumes."))
          act(() => api("POST", "/v1/nodes/" + encodeURIComponent(n.nodeId) + "/drain"));
      }));
    }
    body.appendChild(tr);
  }
}

// copies: the REST answer's copies when it has them (replication), else the one copy on nodeId
function copiesOf(v) {
  if (Array.isArray(v.copies) && v.copies.length > 0) return v.copies;
  return [{nodeId: v.nodeId, state: v.state, role: "primary"}];
}

function resyncOf(v) {
  const parts = [];
  if (v.resync && typeof v.resync.progress === "number") parts.push({node: v.resync.nodeId || "", p: v.resync.progress});
  for (const c of copiesOf(v)) {
    const p = c.resyncProgress !== undefined ? c.resyncProgress : (c.resync && c.resync.progress);
    if (typeof p === "number") parts.push({node: c.nodeId, p});
    else if (c.state === "syncing" && typeof c.syncedBytes === "number" && c.totalBytes > 0) // REST shape
      parts.push({node: c.nodeId, p: Math.min(1, c.syncedBytes / c.totalBytes),
        text: fmtBytes(c.syncedBytes) + " / " + fmtBytes(c.totalBytes)
          + (typeof c.etaSeconds === "number" ? ", ETA " + c.etaSeconds + " s" : "")});
    else if (c.state === "syncing") parts.push({node: c.nodeId, p: 0, text: "syncing"});
  }
  return parts;
}

// snaps: the volume's snapshots (GET /v1/volumes/{name}/snapshots): "N (X exclusive)", each listed in the title
function snapshotsCell(tr, snaps) {
  const td = cell(tr, null, "snaps");
  if (!snaps || snaps.length === 0) { td.textContent = "-"; return; }
  const exclusive = snaps.reduce((sum, s) => sum + (s.exclusiveBytes || 0), 0);
  td.textContent = snaps.length + " (" + fmtBytes(exclusive) + " exclusive)";
  td.dataset.count = snaps.length;
  td.title = snaps.map(s => s.name + " " + s.state + " " + fmtBytes(s.exclusiveBytes || 0)
    + " exclusive, taken " + new Date(s.createdAtMs).toISOString()).join("\n");
}

// used: {volume: bytes written at least once} from /v1/stats/volumes; snapshots: {volume: [Snapshot]}
function renderVolumes(volumes, used, snapshots) {
  const body = $("volumes").tBodies[0];
  body.replaceChildren();
  if (volumes.length === 0) {
    const tr = el("tr"); const td = cell(tr, "no volume", "empty"); td.colSpan = 12;
    body.appendChild(tr);
  }
  for (const v of volumes) {
    const tr = el("tr");
    tr.dataset.volume = v.name;
    cell(tr, v.name);
    cell(tr, fmtBytes(v.sizeBytes), "num");
    cell(tr, used[v.name] >= 0 ? fmtBytes(used[v.name]) : "-", "num");
    cell(tr, v.lbaSize, "num");
    stateCell(tr, v.state);
    const copies = cell(tr, null, "copies");
    copiesOf(v).forEach((c, i) => {
      if (i > 0) copies.appendChild(document.createTextNode(", "));
      copies.appendChild(document.createTextNode(c.nodeId + " "));
      copies.appendChild(el("span", c.state, "state-" + c.state));
    });
    const primary = v.primary || (copiesOf(v).find(c => c.role === "primary" || c.primary) || {}).nodeId || v.nodeId;
    cell(tr, primary);
    cell(tr, v.epoch !== undefined ? v.epoch : "-", "num");
    cell(tr, v.connectedHosts.length ? v.connectedHosts.join(", ") : "-");
    const rs = cell(tr, null);
    const parts = resyncOf(v);
    if (parts.length === 0) rs.textContent = "-";
    for (const part of parts) {
      const pr = el("progress"); pr.max = 1; pr.value = part.p;
      rs.appendChild(pr);
      rs.appendChild(document.createTextNode(" " + part.node + " " + (part.p * 100).toFixed(0) + "%"
        + (part.text ? " (" + part.text + ")" : "")));
    }
    snapshotsCell(tr, snapshots[v.name]);
    const a = cell(tr, null, "act");
    a.appendChild(button("resize", () => {
      const s = prompt("New size of " + v.name + " (grow only), e.g. 2G:", fmtBytes(v.sizeBytes).replace(/ |iB/g, ""));
      if (s) act(() => api("PATCH", "/v1/volumes/" + encodeURIComponent(v.name), {sizeBytes: parseSize(s)}));
    }));
    a.appendChild(button("delete", () => {
      if (confirm("Delete volume " + v.name + "? Its data is gone."))
        act(() => api("DELETE", "/v1/volumes/" + encodeURIComponent(v.name)));
    }));
    a.appendChild(button("snapshot", () => {
      const n = prompt("Name of the new snapshot of " + v.name + ":", "snap-" + new Date().toISOString().slice(0, 10));
      if (n) act(() => api("POST", "/v1/volumes/" + encodeURIComponent(v.name) + "/snapshots", {name: n}));
    }));
    body.appendChild(tr);
  }
}

// The QoS limits of volume v as dashed lines: IOPS ({iops, readIops, writeIops}, the size-scaled iopsPerGiB as
// docs/qos.md computes it) and bandwidth ({bytesPerSec, readBytesPerSec, writeBytesPerSec}); 0 or absent = none.
function qosLines(v) {
  const q = (v && v.qos) || {};
  const iops = [], bytes = [];
  let total = q.iops || 0;
  if (q.iopsPerGiB > 0) {
    let scaled = Math.max(1, Math.floor(q.iopsPerGiB * v.sizeBytes / (1 << 30)));
    if (q.iopsPerGiBMin > 0) scaled = Math.max(scaled, q.iopsPerGiBMin);
    if (q.iopsPerGiBMax > 0) scaled = Math.min(scaled, q.iopsPerGiBMax);
    total = total > 0 ? Math.min(total, scaled) : scaled;
  }
  if (total > 0) iops.push({value: total, label: "limit " + fmtNum(total)});
  if (q.readIops > 0) iops.push({value: q.readIops, label: "read limit " + fmtNum(q.readIops)});
  if (q.writeIops > 0) iops.push({value: q.writeIops, label: "write limit " + fmtNum(q.writeIops)});
  if (q.bytesPerSec > 0) bytes.push({value: q.bytesPerSec, label: "limit " + fmtRate(q.bytesPerSec)});
  if (q.readBytesPerSec > 0) bytes.push({value: q.readBytesPerSec, label: "read limit " + fmtRate(q.readBytesPerSec)});
  if (q.writeBytesPerSec > 0) bytes.push({value: q.writeBytesPerSec, label: "write limit " + fmtRate(q.writeBytesPerSec)});
  return {iops, bytes};
}

function renderPlots(stats, volumes) {
  $("interval").textContent = String(stats.intervalMs / 1000);
  const box = $("plots");
  const known = new Set(volumes.map(v => v.name));
  const series = stats.volumes.filter(s => known.has(s.volume));
  if (series.length === 0) {
    box.replaceChildren(el("p", "no I/O statistics yet (they appear a few seconds after a node reports a volume)",
                           "empty"));
    return;
  }
  box.replaceChildren();
  const byName = {};
  for (const v of volumes) byName[v.name] = v;
  for (const s of series) {
    const lines = qosLines(byName[s.volume]);
    const times = s.samples.map(x => x.timeMs);
    const last = s.samples.length ? s.samples[s.samples.length - 1] : null;
    const div = el("div", null, "plot");
    div.dataset.volume = s.volume;
    div.dataset.samples = String(s.samples.length);
    div.dataset.ops = String(s.samples.reduce((sum, x) => sum + x.readIops + x.writeIops, 0));
    div.appendChild(el("h3", s.volume + " (" + s.nodeId + ")"));
    box.appendChild(div); // in the page before drawing: the canvas needs its laid-out size
    const charts = [
      ["IOPS", [s.samples.map(x => x.readIops), s.samples.map(x => x.writeIops)], fmtNum,
        last ? "read " + fmtNum(last.readIops) + ", write " + fmtNum(last.writeIops) : "-", lines.iops],
      ["bandwidth", [s.samples.map(x => x.readBytesPerSec), s.samples.map(x => x.writeBytesPerSec)], fmtRate,
        last ? "read " + fmtRate(last.readBytesPerSec) + ", write " + fmtRate(last.writeBytesPerSec) : "-",
        lines.bytes],
      ["latency (mean, in target)", [s.samples.map(x => x.latencyUs)], fmtUs, last ? fmtUs(last.latencyUs) : "-", []],
    ];
    for (const [title, values, fmt, now, limits] of charts) {
      div.appendChild(el("div", title + ": " + now, "label"));
      const c = el("canvas");
      c.dataset.chart = title.split(" ")[0];
      c.dataset.points = String(times.length);
      c.dataset.limits = limits.map(l => String(l.value)).join(",");
      div.appendChild(c);
      const colors = values.length === 2 ? ["#1f77b4", "#e4572e"] : ["#6a4c93"];
      drawPlot(c, values.map((v, i) => ({values: v, color: colors[i]})), times, fmt, limits);
    }
  }
}

let readFailed = false;

async function refresh() {
  try {
    const [nodes, volumes, stats] = await Promise.all([api("GET", "/v1/nodes"), api("GET", "/v1/volumes"),
                                                       api("GET", "/v1/stats/volumes")]);
    const usage = {}, used = {};
    for (const n of stats.nodes || []) usage[n.nodeId] = n;
    for (const s of stats.volumes) used[s.volume] = s.usedBytes;
    const snapshots = {}; // one request per volume: a volume's snapshots are not in the volume list
    await Promise.all(volumes.map(v => api("GET", "/v1/volumes/" + encodeURIComponent(v.name) + "/snapshots")
      .then(list => { snapshots[v.name] = list; }, () => { snapshots[v.name] = null; })));
    renderNodes(nodes, usage);
    renderVolumes(volumes, used, snapshots);
    renderPlots(stats, volumes);
    const up = nodes.filter(n => n.state === "up").length;
    $("summary").textContent = nodes.length + " nodes (" + up + " up), " + volumes.length + " volumes, updated "
      + new Date().toLocaleTimeString();
    document.body.dataset.rendered = String(Number(document.body.dataset.rendered || 0) + 1);
    if (readFailed) { readFailed = false; showError(null); } // e.g. the 401 before a token was typed in
  } catch (e) {
    readFailed = true;
    showError(e);
    // a refresh that ended in an error (e.g. 401 without a token) is rendered too: the error is what the page shows
    document.body.dataset.rendered = String(Number(document.body.dataset.rendered || 0) + 1);
  }
}

function applyMode() {
  const rw = scope === "admin";
  document.body.classList.toggle("ro", !rw);
  $("mode").textContent = rw ? "cluster token: actions enabled"
    : scope === "read" ? "read token: read-only"
    : token() ? "token refused" : "no token: enter the read or cluster token";
  $("mode").className = "badge " + (rw ? "rw" : "ro");
}

// #token=T in the address: keep T like a typed-in token, then drop it from the address (and the history entry)
function tokenFromFragment() {
  const m = /^#token=([^&]+)$/.exec(location.hash);
  if (!m) return;
  sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(m[1]));
  history.replaceState(null, "", location.pathname + location.search);
}

document.addEventListener("DOMContentLoaded", () => {
  $("token-form").addEventListener("submit", e => {
    e.preventDefault();
    const t = $("token").value.trim();
    if (t) sessionStorage.setItem(TOKEN_KEY, t);
    $("token").value = "";
    scope = "";
    applyMode();
    refresh();
  });
  $("forget-token").addEventListener("click", () => {
    sessionStorage.removeItem(TOKEN_KEY); scope = ""; applyMode(); refresh();
  });
  $("create-form").addEventListener("submit", e => {
    e.preventDefault();
    act(async () => {
      await api("POST", "/v1/volumes", {name: $("create-name").value.trim(), sizeBytes: parseSize($("create-size").value),
                                        lbaSize: Number($("create-lba").value)});
      $("create-name").value = ""; $("create-size").value = "";
    });
  });
  tokenFromFragment();
  applyMode();
  refresh();
  setInterval(refresh, REFRESH_MS);
});
