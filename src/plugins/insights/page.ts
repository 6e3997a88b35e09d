// The insights page: one HTML file, one script, one style sheet, served as they are (no build step,
// nothing from a CDN). The script asks /api/insights every 2 s and draws with the DOM and a canvas;
// every name is set as text, never as markup (pods choose the names they ask for).

export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>clusterdns insights</title>
<link rel="stylesheet" href="/insights.css">
<script src="/insights.js" defer></script>
</head>
<body>
<header>
  <h1>clusterdns insights</h1>
  <label>window <select id="window"><option>1m</option><option>10m</option><option>1h</option></select></label>
  <span id="status">loading</span>
</header>
<section class="tiles">
  <div class="tile"><b id="qps">-</b><span>queries/s</span></div>
  <div class="tile"><b id="hit">-</b><span>cache hits</span></div>
  <div class="tile"><b id="nx">-</b><span>NXDOMAIN</span></div>
  <div class="tile"><b id="wasted">-</b><span>wasted on search lists</span></div>
  <div class="tile"><b id="servfail">-</b><span>SERVFAIL</span></div>
</section>
<section><h2>Queries per second, last 5 minutes</h2>
  <canvas id="chart" width="900" height="160"></canvas>
  <p class="legend"><i class="lq"></i>all <i class="ln"></i>NXDOMAIN <i class="lw"></i>wasted on search lists</p>
</section>
<section><h2>Workloads by wasted queries <span class="window"></span></h2>
  <table id="workloads"><thead><tr><th>workload</th><th>queries</th><th>NXDOMAIN</th><th>wasted</th>
  <th>cache hits</th><th>fix</th></tr></thead><tbody></tbody></table></section>
<section><h2>Names that cost search-list walks <span class="window"></span></h2><ul id="wasted-names"></ul></section>
<div class="cols">
<section><h2>Top names <span class="window"></span></h2><table id="top-names"><tbody></tbody></table></section>
<section><h2>Top NXDOMAIN names <span class="window"></span></h2><table id="top-nx"><tbody></tbody></table></section>
<section><h2>Top clients <span class="window"></span></h2><table id="top-clients"><tbody></tbody></table></section>
</div>
<div class="cols">
<section><h2>Upstreams, last minute</h2><table id="upstreams"><thead><tr><th>upstream</th><th>plugin</th><th>queries</th>
  <th>failures</th><th>SERVFAIL</th><th>mean ms</th></tr></thead><tbody></tbody></table></section>
<section><h2>SERVFAIL causes</h2><ul id="servfail-causes"></ul></section>
<section><h2>Namespaces</h2><table id="namespaces"><thead><tr><th>namespace</th><th>queries</th>
  <th>wasted</th></tr></thead><tbody></tbody></table></section>
</div>
<footer id="attribution"></footer>
</body>
</html>
`;

export const PAGE_CSS = `body{font:14px system-ui,sans-serif;margin:0 1.5em 2em;color:#1d2330;background:#f6f7f9}
header{display:flex;gap:1.5em;align-items:baseline}h1{font-size:1.3em}h2{font-size:1em;margin:1.2em 0 .4em}
.tiles{display:flex;gap:1em;flex-wrap:wrap}.tile{background:#fff;border-radius:6px;padding:.6em 1em;min-width:9em;
box-shadow:0 1px 2px #0002}.tile b{display:block;font-size:1.6em}.tile span{color:#667}
canvas{background:#fff;border-radius:6px;width:100%;max-width:900px}table{border-collapse:collapse;background:#fff}
td,th{padding:.25em .6em;text-align:left;border-bottom:1px solid #eee}td.n{text-align:right;font-variant-numeric:tabular-nums}
.cols{display:flex;gap:2em;flex-wrap:wrap}.legend i{display:inline-block;width:1em;height:.6em;margin:0 .3em 0 1em}
.lq{background:#2a6fdb}.ln{background:#d9822b}.lw{background:#c23b3b}tr.spike td{background:#fde8e8}
#status.err{color:#c23b3b}footer{margin-top:2em;color:#667}
`;

export const PAGE_JS = `"use strict";
const $ = (id) => document.getElementById(id);
const pct = (r) => (r * 100).toFixed(1) + "%";
const token = new URLSearchParams(location.hash.slice(1)).get("token");

function rows(id, list, cells, cls) {
  const body = $(id).tBodies[0];
  body.replaceChildren();
  for (const item of list) {
    const tr = body.insertRow();
    if (cls) tr.className = cls(item);
    for (const c of cells(item)) {
      const td = tr.insertCell();
      td.textContent = String(c);
      if (typeof c === "number") td.className = "n";
    }
  }
}

function items(id, list) {
  const ul = $(id);
  ul.replaceChildren();
  for (const text of list) {
    const li = document.createElement("li");
    li.textContent = text;
    ul.append(li);
  }
}

function chart(c) {
  const cv = $("chart");
  const g = cv.getContext("2d");
  g.clearRect(0, 0, cv.width, cv.height);
  const max = Math.max(1, ...c.queries);
  const line = (data, color) => {
    g.strokeStyle = color;
    g.lineWidth = 1.5;
    g.beginPath();
    data.forEach((v, i) => {
      const x = (i / (data.length - 1)) * (cv.width - 40) + 35;
      const y = cv.height - 10 - (v / max) * (cv.height - 25);
      if (i === 0) g.moveTo(x, y);
      else g.lineTo(x, y);
    });
    g.stroke();
  };
  g.fillStyle = "#667";
  g.fillText(String(max), 2, 14);
  g.fillText("0", 2, cv.height - 10);
  line(c.queries, "#2a6fdb");
  line(c.nxdomain, "#d9822b");
  line(c.wasted, "#c23b3b");
}

function show(r) {
  const t = r.totals;
  $("qps").textContent = String(t.qps);
  $("hit").textContent = pct(t.cacheHitRatio);
  $("nx").textContent = pct(t.nxdomainRatio);
  $("wasted").textContent = pct(t.wastedRatio);
  $("servfail").textContent = pct(t.servfailRatio);
  chart(r.chart);
  for (const e of document.querySelectorAll("span.window")) e.textContent = "(last " + r.window + ")";
  rows("workloads", r.workloads, (w) => [w.workload, w.queries, w.nxdomain, w.wasted, w.cacheHits, w.fix],
    (w) => (w.spike ? "spike" : ""));
  items("wasted-names", r.wastedNames.map((w) => w.name + " cost " + w.nxdomain + " NXDOMAIN from " + w.workload));
  rows("top-names", r.topNames, (n) => [n.name, n.count - n.error]);
  rows("top-nx", r.topNxdomain, (n) => [n.name, n.count - n.error]);
  rows("top-clients", r.topClients, (c) => [c.address, c.workload, c.count - c.error]);
  rows("upstreams", r.upstreams, (u) => [u.to, u.plugin, u.requests, u.failures, u.servfail, u.latencyMs ?? "-"]);
  items("servfail-causes", r.servfailCauses.map((s) => s.count + " from " + s.plugin + ": " + s.cause));
  rows("namespaces", r.namespaces, (n) => [n.namespace, n.queries, n.wasted]);
  const a = r.attribution;
  $("attribution").textContent = (a.synced ? "" : "pods not synced yet; ") + a.pods + " pods, " + a.workloads +
    " of " + a.capacity + " workload rows in use" + (a.overflow ? ", " + a.overflow + " pods counted as (other)" : "") +
    "; insights hold " + Math.round(r.memoryBytes / 1024) + " KiB; up " + r.uptimeSeconds + " s" +
    (r.topSampledEvery > 1 ? "; top lists count 1 query in " + r.topSampledEvery : "");
}

async function refresh() {
  try {
    const headers = token ? { Authorization: "Bearer " + token } : {};
    const res = await fetch("/api/insights?window=" + $("window").value, { headers });
    if (!res.ok) throw new Error("HTTP " + res.status);
    show(await res.json());
    $("status").textContent = "live";
    $("status").className = "";
  } catch (err) {
    $("status").textContent = "cannot read the API: " + err.message;
    $("status").className = "err";
  }
}

$("window").addEventListener("change", refresh);
refresh();
setInterval(refresh, 2000);
`;
