// The admin page: listens to /admin/prefetch/stream (one snapshot a second, each carrying the
// per-second history of every running prefetch) and redraws uPlot charts from that history, so a
// page opened late still shows the last minutes. The last few finished prefetches come in the same
// snapshot and are drawn once, below, as they ended. Rebuild progress is polled from /admin/rebuilds,
// process memory from /admin/memory (ten minutes of one-second samples, then only the new ones).
"use strict";

const MiB = 1024 * 1024;
const views = new Map(); // running prefetch name -> { root, charts: Map(chart name -> uPlot) }
const finishedViews = new Map(); // name and end time -> the same; a finished prefetch never changes
let snapshots = 0;

// .NET serialises TimeSpan as "[-][d.]hh:mm:ss[.fffffff]"; the charts need seconds.
function seconds(span) {
  if (span === null || span === undefined) return null;
  const m = /^(-)?(?:(\d+)\.)?(\d+):(\d+):(\d+(?:\.\d+)?)$/.exec(span);
  if (!m) return null;
  const s = (+(m[2] || 0)) * 86400 + (+m[3]) * 3600 + (+m[4]) * 60 + parseFloat(m[5]);
  return m[1] ? -s : s;
}

function formatBytes(bytes) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (bytes >= 1024 && i < units.length - 1) { bytes /= 1024; i++; }
  return (i === 0 ? bytes.toFixed(0) : bytes.toFixed(1)) + " " + units[i];
}

function formatDuration(s) {
  if (s === null) return "-";
  if (s < 60) return s.toFixed(0) + " s";
  if (s < 3600) return Math.floor(s / 60) + " min " + Math.round(s % 60) + " s";
  return Math.floor(s / 3600) + " h " + Math.round((s % 3600) / 60) + " min";
}

// Each chart: its series (label, colour, how to read it from a history point) and axis options.
const chartSpecs = {
  concurrency: { series: [
    { label: "reads running", stroke: "#2f6fdf", value: p => p.concurrency },
    { label: "limit L", stroke: "#d9822b", dash: [6, 4], value: p => p.concurrencyLimit },
  ] },
  throughput: { series: [
    { label: "MB/s", stroke: "#1b7f3b", fill: "rgba(27,127,59,0.12)", value: p => p.megabytesPerSecond },
  ] },
  budget: { series: [
    { label: "in flight", stroke: "#2f6fdf", fill: "rgba(47,111,223,0.12)", value: p => p.inFlightBytes / MiB },
    { label: "buffered", stroke: "#8e44ad", fill: "rgba(142,68,173,0.10)", value: p => p.bufferedBytes / MiB },
    { label: "budget", stroke: "#b3261e", dash: [6, 4], value: (p, pressure) => pressure.budgetBytes / MiB },
  ] },
  sizes: { log: true, series: [
    { label: "p50", stroke: "#2f6fdf", value: p => p.documentSizeP50Bytes / 1024 || null },
    { label: "p99", stroke: "#d9822b", value: p => p.documentSizeP99Bytes / 1024 || null },
    { label: "max", stroke: "#b3261e", value: p => p.documentSizeMaxBytes / 1024 || null },
  ] },
  wait: { range: [0, 100], series: [
    { label: "wait %", stroke: "#8a6d00", fill: "rgba(138,109,0,0.10)", value: p => p.consumerWaitPercent },
  ] },
  foreground: { series: [
    { label: "p99 ms", stroke: "#b3261e", value: p => { const s = seconds(p.foregroundP99); return s === null ? null : s * 1000; } },
  ] },
};

function makeChart(figure, spec) {
  const width = Math.max(200, figure.clientWidth - 12);
  const opts = {
    width, height: 170,
    legend: { show: true },
    cursor: { drag: { x: false, y: false } },
    scales: { x: { time: false }, y: spec.log ? { distr: 3 } : (spec.range ? { range: spec.range } : { range: (u, min, max) => [0, Math.max(1, max * 1.1)] }) },
    axes: [{ label: "seconds since start", size: 36 }, { size: 50 }],
    series: [{ label: "t (s)" }, ...spec.series.map(s => ({ label: s.label, stroke: s.stroke, fill: s.fill, dash: s.dash, width: s.width || 1.5, spanGaps: false }))],
  };
  const empty = [[], ...spec.series.map(() => [])];
  return new uPlot(opts, empty, figure);
}

function createView(name, container) {
  const root = document.getElementById("prefetch-template").content.firstElementChild.cloneNode(true);
  root.dataset.prefetch = name;
  root.querySelector(".name").textContent = name;
  container.appendChild(root);
  const charts = new Map();
  for (const figure of root.querySelectorAll("figure[data-chart]")) {
    charts.set(figure.dataset.chart, makeChart(figure, chartSpecs[figure.dataset.chart]));
  }
  return { root, charts };
}

function removeView(view) {
  view.charts.forEach(c => c.destroy());
  view.root.remove();
}

// A finished prefetch: marked so, with how and when it ended; its MB/s is the run's mean (the last
// second's rate of a run that ended says nothing).
function markFinished(root, prefetch) {
  const p = prefetch.pressure;
  const ran = seconds(p.elapsed);
  root.classList.add("finished");
  root.querySelector(".state").classList.add("finished");
  root.querySelector(".state").textContent = `finished: ${p.state}`;
  root.querySelector(".ended").textContent =
    `at ${new Date(prefetch.finishedAt).toLocaleTimeString("en-GB")}${ran === null ? "" : ", after " + formatDuration(ran)}`;
  root.querySelector('[data-label="mbps"]').textContent = "MB/s (mean)";
  root.querySelector('[data-figure="mbps"]').textContent = ran ? (p.bytesDone / 1e6 / ran).toFixed(1) : "-";
  root.querySelector('[data-figure="eta"]').textContent = "-";
  root.querySelector(".last-decision").textContent = p.failure ? `Failed: ${p.failure}`
    : p.lastDecision ? `Last: ${p.lastDecisionReason}`
    : p.strategy === "adaptive" ? "The reads ended before the controller's first decision." : "Fixed strategy: no controller.";
}

function render(prefetch, view) {
  const p = prefetch.pressure;
  const root = view.root;
  root.querySelector(".strategy").textContent = p.strategy;
  root.querySelector(".state").textContent = p.state;
  // One read feeding several rebuilds (a shared pass): the read figures are the pass's, the counts this rebuild's.
  const shared = root.querySelector(".shared");
  shared.hidden = !p.sharedBy;
  shared.textContent = p.sharedBy ? `Shared pass: one read of the collection feeds ${p.sharedBy.join(", ")}` : "";
  const figure = name => root.querySelector(`[data-figure="${name}"]`);
  figure("mbps").textContent = p.megabytesPerSecondLastSecond.toFixed(1);
  figure("concurrency").textContent = `${p.concurrency} / ${p.concurrencyLimit}`;
  figure("budget").textContent = `${formatBytes(p.inFlightBytes + p.bufferedBytes)} / ${formatBytes(p.budgetBytes)}`;
  figure("wait").textContent = p.consumerWaitPercent.toFixed(1) + " %";
  figure("done").textContent = p.documentsDone.toLocaleString("en-US");
  figure("eta").textContent = formatDuration(seconds(p.eta));

  // The total is counted within seconds of the start; until then, what is planned so far.
  const total = p.bytesKnown;
  const fraction = total > 0 ? Math.min(1, p.bytesDone / total) : 0;
  root.querySelector(".progress .bar").style.width = (fraction * 100).toFixed(1) + "%";
  root.querySelector(".progress-text").textContent =
    `${formatBytes(p.bytesDone)} of ${formatBytes(total)}${p.bytesTotal != null ? "" : " planned so far"} (${(fraction * 100).toFixed(1)} %)`;

  const history = p.history || [];
  const xs = history.map(point => seconds(point.elapsed));
  for (const [name, chart] of view.charts) {
    const spec = chartSpecs[name];
    chart.setData([xs, ...spec.series.map(s => history.map(point => s.value(point, p)))]);
  }

  root.querySelector(".last-decision").textContent = p.lastDecision ? `Now: ${p.lastDecisionReason}` : "Fixed strategy: no controller.";
  const body = root.querySelector(".decisions tbody");
  body.replaceChildren(...(p.recentDecisions || []).slice(-12).reverse().map(d => {
    const row = document.createElement("tr");
    for (const [text, cls] of [[formatDuration(seconds(d.elapsed)), ""], [String(d.concurrencyLimit), ""], [d.kind, "kind-" + d.kind], [d.reason, ""]]) {
      const cell = document.createElement("td");
      cell.textContent = text;
      if (cls) cell.className = cls;
      row.appendChild(cell);
    }
    return row;
  }));
}

function onSnapshot(list) {
  const names = new Set(list.prefetches.map(p => p.name));
  for (const [name, view] of views) {
    if (!names.has(name)) { removeView(view); views.delete(name); }
  }
  for (const prefetch of list.prefetches) {
    let view = views.get(prefetch.name);
    if (!view) { view = createView(prefetch.name, document.getElementById("prefetches")); views.set(prefetch.name, view); }
    render(prefetch, view);
  }
  document.getElementById("prefetches-empty").hidden = list.prefetches.length > 0;

  // Finished ones, newest first: drawn once when they appear, removed when they drop off the list.
  const finished = list.finished || [];
  const finishedSection = document.getElementById("finished-prefetches");
  finishedSection.hidden = finished.length === 0; // shown before its charts are made, which size to it
  const keys = finished.map(f => `${f.name} ${f.finishedAt}`);
  for (const [key, view] of finishedViews) {
    if (!keys.includes(key)) { removeView(view); finishedViews.delete(key); }
  }
  finished.forEach((prefetch, i) => {
    let view = finishedViews.get(keys[i]);
    if (!view) {
      view = createView(prefetch.name, finishedSection);
      finishedViews.set(keys[i], view);
      render(prefetch, view);
      markFinished(view.root, prefetch);
    }
    finishedSection.appendChild(view.root); // keeps the list's order: a new one goes on top
  });
  snapshots++;
  document.body.dataset.snapshots = String(snapshots);
}

function connect() {
  const badge = document.getElementById("connection");
  const source = new EventSource("/admin/prefetch/stream");
  source.addEventListener("pressure", e => onSnapshot(JSON.parse(e.data)));
  source.onopen = () => { badge.textContent = "live"; badge.className = "badge live"; };
  source.onerror = () => { badge.textContent = "reconnecting"; badge.className = "badge down"; };
}

async function pollRebuilds() {
  try {
    const response = await fetch("/admin/rebuilds");
    if (response.ok) {
      const list = await response.json();
      const bars = document.getElementById("rebuild-bars");
      bars.replaceChildren(...list.rebuilds.map(r => {
        const queued = r.phase === "queued";
        const item = document.createElement("div");
        item.className = queued ? "rebuild queued" : "rebuild";
        const fraction = r.documentsTotal ? Math.min(1, r.documentsDone / r.documentsTotal) : 0;
        item.innerHTML = `<div><strong></strong> <span class="badge"></span> <span class="muted"></span></div><div class="progress"><div class="bar"></div><span class="progress-text"></span></div>`;
        item.querySelector("strong").textContent = r.index;
        item.querySelector(".badge").textContent = r.phase;
        const resumed = r.resumedAfter
          ? `resumed after ${r.resumedAfter} (${r.documentsSkipped.toLocaleString("en-US")} documents skipped)`
          : "";
        // What a crash would cost: the bulk phase commits this often, and a restart resumes from the last commit.
        const cadence = r.bulkCommitInterval ? `commits every ${seconds(r.bulkCommitInterval).toFixed(1)} s` : "";
        // A queued rebuild reads nothing until a slot frees (Indexes:MaxConcurrentRebuilds): its place, not a bar.
        const waiting = queued ? `waiting for a rebuild slot${r.queuePosition ? ` (#${r.queuePosition} in the queue)` : ""}` : "";
        item.querySelector(".muted").textContent = [waiting, r.eta && !queued ? "ETA " + formatDuration(seconds(r.eta)) : "", resumed, cadence].filter(Boolean).join(" · ");
        item.querySelector(".bar").style.width = queued ? "0%" : (fraction * 100).toFixed(1) + "%";
        item.querySelector(".progress-text").textContent = queued
          ? "queued"
          : r.documentsTotal
            ? `${r.documentsDone.toLocaleString("en-US")} of ${r.documentsTotal.toLocaleString("en-US")} documents`
            : `${r.documentsDone.toLocaleString("en-US")} documents`;
        return item;
      }));
      document.getElementById("rebuilds-empty").hidden = list.rebuilds.length > 0;
    }
  } finally {
    setTimeout(pollRebuilds, 2000);
  }
}

// Process memory: the whole history once, then only the samples after the last one seen.
const memorySeries = [
  { label: "RSS", stroke: "#b3261e", width: 2, value: s => s.residentBytes },
  { label: "private", stroke: "#6b1a14", value: s => s.privateBytes },
  { label: "mapped files", stroke: "#c9a227", dash: [2, 3], value: s => s.mappedFileBytes },
  { label: "bound", stroke: "#b3261e", dash: [6, 4], value: (s, bound) => bound.totalBytes },
  { label: "GC heap", stroke: "#2f6fdf", value: s => s.gcHeapBytes },
  { label: "GC committed", stroke: "#7aa6ef", dash: [2, 3], value: s => s.gcCommittedBytes },
  { label: "block cache", stroke: "#1b7f3b", value: s => s.store.blockCacheUsageBytes },
  { label: "memtables", stroke: "#8e44ad", value: s => s.store.memtableBytes },
  { label: "table readers", stroke: "#8a6d00", value: s => s.store.tableReadersBytes },
  { label: "row cache", stroke: "#16a085", value: s => s.store.rowCacheUsageBytes },
  { label: "Lucene buffer", stroke: "#d9822b", value: s => s.luceneRamBufferBytes },
  { label: "prefetch held", stroke: "#555555", value: s => s.prefetchHeldBytes },
];
const memory = { samples: [], bound: null, chart: null };

function renderMemory(body) {
  memory.bound = body.bound;
  const last = memory.samples.length ? seconds(memory.samples[memory.samples.length - 1].elapsed) : -1;
  for (const sample of body.history) if (seconds(sample.elapsed) > last) memory.samples.push(sample);
  if (memory.samples.length > 600) memory.samples.splice(0, memory.samples.length - 600);
  const latest = body.latest;
  const figure = name => document.querySelector(`[data-memory="${name}"]`);
  figure("rss").textContent = formatBytes(latest.residentBytes);
  figure("private").textContent = formatBytes(latest.privateBytes);
  figure("bound").textContent = formatBytes(body.bound.totalBytes);
  figure("gc").textContent = formatBytes(latest.gcHeapBytes);
  figure("cache").textContent = formatBytes(latest.store.blockCacheUsageBytes);
  figure("memtables").textContent = formatBytes(latest.store.memtableBytes);
  const hits = latest.store.foregroundBlockCache;
  figure("hits").textContent = hits.hitRate === null ? "-" : (hits.hitRate * 100).toFixed(1) + " %";
  document.getElementById("memory-malloc").textContent = body.malloc;
  if (!memory.chart) {
    const host = document.querySelector('[data-memory-chart="memory"]');
    memory.chart = makeChart(host, { series: memorySeries });
  }
  const xs = memory.samples.map(s => seconds(s.elapsed));
  memory.chart.setData([xs, ...memorySeries.map(spec => memory.samples.map(s => spec.value(s, memory.bound) / MiB))]);
  document.body.dataset.memorySamples = String(memory.samples.length);
}

async function pollMemory() {
  try {
    const last = memory.samples.length ? seconds(memory.samples[memory.samples.length - 1].elapsed) : null;
    const response = await fetch(last === null ? "/admin/memory" : `/admin/memory?after=${last}`);
    if (response.ok) renderMemory(await response.json());
  } finally {
    setTimeout(pollMemory, 2000);
  }
}

// Cluster mode only (GET /cluster is not mapped on a single node: the section stays hidden and polling
// stops): the nodes of the shard map, and for each cluster index its generations and every shard's
// build of the newest one, as the shards report it in etcd.
function cell(row, text) {
  const td = document.createElement("td");
  td.textContent = text;
  row.appendChild(td);
}

function renderCluster(status, indexes) {
  document.getElementById("cluster").hidden = false;
  const etcd = status.etcdReachable ? "etcd reachable" : `etcd unreachable since ${status.etcdUnreachableSince}: ${status.etcdError}`;
  const writes = status.acceptingWrites ? "accepting writes" : `not accepting writes: ${status.notAcceptingWritesBecause}`;
  document.getElementById("cluster-summary").textContent = `this node ${status.node} · ${status.buckets} buckets · ${etcd} · ${writes}`;
  document.querySelector("#cluster-nodes tbody").replaceChildren(...status.nodes.map(n => {
    const row = document.createElement("tr");
    [n.node, n.up ? "up" : "down", String(n.buckets), n.url ?? ""].forEach(text => cell(row, text));
    return row;
  }));
  document.getElementById("cluster-indexes").replaceChildren(...indexes.map(index => {
    const article = document.createElement("article");
    article.className = "cluster-index";
    const title = document.createElement("h3");
    title.textContent = index.pendingGeneration
      ? `${index.name}: generation ${index.activeGeneration} serves, ${index.pendingGeneration} building on every shard`
      : `${index.name}: generation ${index.activeGeneration}`;
    const table = document.createElement("table");
    table.innerHTML = "<thead><tr><th>shard</th><th>up</th><th>generation</th><th>phase</th><th>ready</th><th>documents</th><th>lag (etags)</th><th>error</th></tr></thead><tbody></tbody>";
    table.querySelector("tbody").replaceChildren(...index.shards.map(shard => {
      const row = document.createElement("tr");
      const documents = shard.documentsTotal
        ? `${shard.documentsDone.toLocaleString("en-US")} of ${shard.documentsTotal.toLocaleString("en-US")}`
        : shard.documentsDone.toLocaleString("en-US");
      [shard.node, shard.up ? "up" : "down", String(shard.generation), shard.phase, shard.ready ? "yes" : "no", documents, String(shard.lagEtags), shard.error ?? ""]
        .forEach(text => cell(row, text));
      return row;
    }));
    article.append(title, table);
    return article;
  }));
}

async function pollCluster() {
  let again = true;
  try {
    const response = await fetch("/cluster");
    if (response.status === 404) {
      again = false;
      return;
    }
    const indexes = await fetch("/indexes");
    if (response.ok && indexes.ok) renderCluster(await response.json(), (await indexes.json()).indexes);
  } finally {
    if (again) setTimeout(pollCluster, 2000);
  }
}

connect();
pollRebuilds();
pollMemory();
pollCluster();
