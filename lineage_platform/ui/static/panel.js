// The side panel: SQL with the column's expression highlighted, runs newest first, labels with their
// propagation path, TTL advice and the resource block a reader needs. Also the impact report.

function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "text") node.textContent = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

function section(title, ...children) {
  return h("section", { class: `panel-${title.toLowerCase().replace(/\W+/g, "-")}` }, h("h3", { text: title }), ...children);
}

// The SQL text with the span [start, end) wrapped in <mark>.
export function sqlBlock(sql, highlight) {
  const pre = h("pre", { class: "sql" });
  if (highlight) {
    pre.append(sql.slice(0, highlight.start), h("mark", { text: sql.slice(highlight.start, highlight.end) }),
      sql.slice(highlight.end));
  } else {
    pre.textContent = sql;
  }
  return pre;
}

function table(columns, rows) {
  const head = h("tr", {}, ...columns.map((c) => h("th", { text: c })));
  const body = rows.map((row) => h("tr", {}, ...row.map((value) => h("td", { text: value ?? "" }))));
  return h("table", {}, h("thead", {}, head), h("tbody", {}, ...body));
}

export function renderDetails(panel, details, onOpen) {
  panel.replaceChildren();
  panel.append(h("h2", { class: "panel-title", text: details.name }), h("div", { class: "panel-kind", text: details.kind }));
  if (details.kind !== "process") {
    const link = h("a", { href: `/impact/${encodeURIComponent(details.name)}`, text: "impact of a change →" });
    link.addEventListener("click", (event) => { event.preventDefault(); onOpen(`/impact/${encodeURIComponent(details.name)}`); });
    panel.append(link);
  }
  if (details.labels.length) {
    panel.append(section("Labels", ...details.labels.map((explanation) =>
      h("div", { class: "label-explanation" }, h("span", { class: "badge", text: explanation.label }),
        h("ol", {}, ...explanation.path.map((step) => h("li", { text: step.text })))))));
  }
  for (const process of details.processes) panel.append(processSection(process));
  if (!details.processes.length && details.kind !== "process") {
    panel.append(section("Processes", h("p", { text: "no process writes it (a source)" })));
  }
  if (details.ttl) {
    const ttl = details.ttl;
    const verdict = ttl.recommended_ttl_days != null ? `keep ${ttl.recommended_ttl_days} days` : ttl.no_advice_reason;
    const evidence = ttl.columns.flatMap((c) => c.uses.map((u) => [c.column, (u.jobs || []).join(", ") || u.process, u.predicate]));
    panel.append(section("TTL advice", h("p", { text: verdict }), evidence.length ? table(["column", "read by", "predicate"], evidence) : null));
  }
  if (details.resource) {
    const r = details.resource;
    panel.append(section("Resource block",
      h("p", { text: `to run: ${r.sql}` }),
      r.error ? h("p", { class: "error", text: r.error }) :
        table(["database", "table", "columns", "rows"], r.blocks.map((b) => [b.database, b.table, b.columns.join(", "), b.rows]))));
  }
}

export function renderImpact(container, report, csvHref) {
  container.replaceChildren(
    h("h2", { text: `Impact of a change to ${report.root}` }),
    h("a", { href: csvHref, class: "csv", download: "", text: "download CSV" }),
  );
  if (!report.layers.length) container.append(h("p", { text: "nothing downstream" }));
  for (const group of report.layers) {
    container.append(section(`${group.layer} (${group.datasets.length})`,
      table(["hops", "kind", "dataset", "jobs", "users", "last run"], group.datasets.map((d) =>
        [d.hops, d.kind, d.qualified_name, d.jobs.join(", "), d.users.join(", "), d.last_run]))));
  }
  for (const note of report.notes) container.append(h("p", { class: "note", text: note }));
}

export function renderEdge(panel, edge, details) {
  panel.replaceChildren(
    h("h2", { class: "panel-title", text: `${edge.source} → ${edge.target}` }),
    h("div", { class: "panel-kind", text: `${edge.strength} · ${edge.transform || "table"} · ${edge.operation || ""}` }),
  );
  for (const process of details?.processes || []) panel.append(processSection(process));
}

// A process: its SQL (the expression of the focused column marked) and its runs, newest first.
function processSection(process) {
  return section(`${process.operation || "process"} ${process.name}`, sqlBlock(process.sql, process.highlight),
    h("h4", { text: `runs (${process.runs.length}, newest first)` }),
    table(["when", "who", "job", "where", "status"], process.runs.map((r) =>
      [r.startTime, r.user, r.job, [r.host, r.cluster, r.engine].filter(Boolean).join(" / "), r.status])));
}
