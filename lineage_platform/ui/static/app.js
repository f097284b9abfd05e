// The explorer page: search with type-ahead, the lineage canvas, the side panel, the impact view and deep links
// (/lineage/NAME?dir=up&depth=3&level=column&column=c, /impact/NAME). Data comes from the JSON API, or, in the
// offline page `trace --format html` writes, from the view and processes embedded in the page (window.LINEAGE_VIEW,
// window.LINEAGE_PROCESSES). Its modules are imported as "lineage/…", which the page's import map resolves.

import { LineageCanvas, TRANSFORM_COLORS } from "lineage/canvas.js";
import { renderDetails, renderEdge, renderImpact } from "lineage/panel.js";

const offline = window.LINEAGE_VIEW !== undefined;
const $ = (selector) => document.querySelector(selector);
const status = (text) => { $("#status").textContent = text; };

async function getJSON(url) {
  const response = await fetch(url);
  const body = await response.json();
  if (!response.ok) throw new Error(body.hint ? `${body.error} (${body.hint})` : body.error);
  return body;
}

const api = (path, params = {}) => {
  const query = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== null && v !== undefined && v !== ""));
  return getJSON(`/api/${path}${query.toString() ? "?" + query : ""}`);
};

const canvas = new LineageCanvas($("#canvas"), {
  onCard: (card) => openPanel(card.name),
  onColumn: (card, column) => openColumn(card, column),
  onEdge: (edge) => openEdge(edge),
  onExpand: (card) => expand(card),
  onLayout: (ms) => { window.lineageLastLayoutMs = ms; },
}, offline ? null : "/static/vendor/elk-worker.min.js");

function controls() {
  return { dir: $("#dir").value, depth: $("#depth").value, level: $("#level").value };
}

// Show the lineage the current URL names.
async function route() {
  const path = decodeURIComponent(location.pathname);
  const params = new URLSearchParams(location.search);
  document.body.classList.toggle("impact-mode", path.startsWith("/impact/"));
  if (path.startsWith("/impact/")) return showImpact(path.slice("/impact/".length));
  if (!path.startsWith("/lineage/")) { status("search a table, column, job or user to start"); return; }
  const name = path.slice("/lineage/".length);
  const column = params.get("column");
  $("#dir").value = params.get("dir") || "both";
  $("#depth").value = params.get("depth") || "2";
  $("#level").value = params.get("level") || (column ? "column" : "table");
  await showLineage(name, column ? `${name}.${column}` : null);
}

async function showLineage(name, focus) {
  document.body.dataset.ready = "false";
  const started = performance.now();
  status(`loading ${name}…`);
  try {
    const view = await api(`lineage/${encodeURIComponent(name)}`, controls());
    await canvas.show(view);
    legend();
    const ms = Math.round(performance.now() - started);
    window.lineageFirstPictureMs = ms;
    status(`${name}: ${view.cards.length} datasets, ${view.edges.length} edges (${ms} ms)` +
      (view.notes.length ? ` — ${view.notes.join("; ")}` : ""));
    if (focus) await focusColumn(focus, true);
    else await openPanel(view.root);
  } catch (error) {
    status(error.message);
  }
  document.body.dataset.ready = "true";
}

async function expand(card) {
  const dir = card.depth > 0 ? "up" : card.depth < 0 ? "down" : $("#dir").value;
  document.body.dataset.ready = "false";
  status(`expanding ${card.name}…`);
  try {
    const view = await api(`expand/${encodeURIComponent(card.name)}`, { dir, level: $("#level").value });
    const added = await canvas.merge(view, card.name);
    legend();
    status(`${card.name}: ${added} more datasets (${canvas.cards.size} shown)`);
  } catch (error) {
    status(error.message);
  }
  document.body.dataset.ready = "true";
}

// A column row clicked: focus its path; at table level (no column edges drawn) open its column lineage first.
function openColumn(card, column) {
  if (offline || canvas.level === "column") return focusColumn(`${card.name}.${column.name}`, !offline);
  const params = new URLSearchParams({ ...controls(), level: "column", column: column.name });
  navigate(`/lineage/${encodeURIComponent(card.name)}?${params}`);
}

async function focusColumn(name, withPanel) {
  canvas.focusColumn(name);
  const url = new URL(location.href);
  const [table, column] = [name.slice(0, name.lastIndexOf(".")), name.slice(name.lastIndexOf(".") + 1)];
  if (url.pathname === `/lineage/${encodeURIComponent(table)}` || url.pathname === `/lineage/${table}`) {
    url.searchParams.set("column", column);
    history.replaceState(null, "", url);
  }
  if (withPanel) await openPanel(name);
}

async function openPanel(name) {
  if (offline) return;
  try {
    renderDetails($("#panel"), await api(`node/${encodeURIComponent(name)}`), navigate);
  } catch (error) {
    $("#panel").textContent = error.message;
  }
}

async function openEdge(edge) {
  const column = edge.targetColumn || null;
  const details = offline
    ? window.LINEAGE_PROCESSES[edge.process]
    : await api(`node/${encodeURIComponent(edge.process)}`, { column });
  renderEdge($("#panel"), edge, details);
}

async function showImpact(name) {
  document.body.dataset.ready = "false";
  status(`impact of ${name}…`);
  try {
    const report = await api(`impact/${encodeURIComponent(name)}`);
    renderImpact($("#impact"), report, `/api/impact/${encodeURIComponent(name)}.csv`);
    status(`${report.impacted.length} datasets and columns downstream of ${name}`);
  } catch (error) {
    status(error.message);
  }
  document.body.dataset.ready = "true";
}

function legend() {
  const used = new Set([...canvas.edges.values()].map((e) => e.transform).filter(Boolean));
  const rows = [`<div><svg width="34" height="8"><line x1="0" y1="4" x2="34" y2="4" class="edge strong" stroke="#607d8b"/></svg> strong (the value flows)</div>`,
    `<div><svg width="34" height="8"><line x1="0" y1="4" x2="34" y2="4" class="edge weak" stroke="#607d8b"/></svg> weak (filter, join, group by…)</div>`];
  for (const [transform, color] of Object.entries(TRANSFORM_COLORS)) {
    if (used.has(transform)) rows.push(`<div><span class="swatch" style="background:${color}"></span>${transform}</div>`);
  }
  $("#legend").innerHTML = rows.join("");
}

function navigate(url) {
  history.pushState(null, "", url);
  route();
}

function applyControls() {
  const name = decodeURIComponent(location.pathname).replace(/^\/lineage\//, "");
  if (!location.pathname.startsWith("/lineage/")) return;
  const params = new URLSearchParams(controls());
  const column = new URLSearchParams(location.search).get("column");
  if (column && $("#level").value === "column") params.set("column", column);
  navigate(`/lineage/${encodeURIComponent(name)}?${params}`);
}

// Type-ahead: ask the API after a short pause, list the hits, open one on click or Enter.
function typeAhead() {
  const input = $("#search");
  const list = $("#hits");
  let timer = null;
  let hits = [];
  const open = (hit) => {
    list.replaceChildren();
    input.value = hit.name;
    const [table, column] = hit.kind === "column"
      ? [hit.open.slice(0, hit.open.lastIndexOf(".")), hit.open.slice(hit.open.lastIndexOf(".") + 1)] : [hit.open, null];
    const params = new URLSearchParams({ dir: $("#dir").value, depth: $("#depth").value });
    if (column) { params.set("level", "column"); params.set("column", column); }
    navigate(`/lineage/${encodeURIComponent(table)}?${params}`);
  };
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      hits = input.value.trim() ? (await api("search", { q: input.value })).hits : [];
      list.replaceChildren(...hits.map((hit) => {
        const item = document.createElement("li");
        item.className = "hit";
        item.innerHTML = `<span class="hit-kind"></span> <span class="hit-name"></span>`;
        item.querySelector(".hit-kind").textContent = hit.kind;
        item.querySelector(".hit-name").textContent = hit.name;
        item.addEventListener("click", () => open(hit));
        return item;
      }));
    }, 150);
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && hits.length) open(hits[0]);
    if (event.key === "Escape") list.replaceChildren();
  });
  input.addEventListener("blur", () => setTimeout(() => list.replaceChildren(), 200));  // after a hit's click
}

async function start() {
  $("#fit").addEventListener("click", () => canvas.fit());
  $("#zoom-in").addEventListener("click", () => canvas.zoomAt(300, 200, 1.25));
  $("#zoom-out").addEventListener("click", () => canvas.zoomAt(300, 200, 0.8));
  if (offline) {
    document.body.classList.add("offline");
    $("#panel").textContent = "Click an edge for its process (SQL, latest runs), a column to focus its path.";
    await canvas.show(window.LINEAGE_VIEW);
    legend();
    status(`${window.LINEAGE_VIEW.root}: ${window.LINEAGE_VIEW.cards.length} datasets (offline picture)`);
    document.body.dataset.ready = "true";
    return;
  }
  for (const id of ["#dir", "#depth", "#level"]) $(id).addEventListener("change", applyControls);
  typeAhead();
  window.addEventListener("popstate", route);
  await route();
}

start();
