// The lineage canvas: dataset cards with column rows, laid out by ELK's layered algorithm (levels sized to the
// labels), drawn in SVG with pan, zoom, fit, expand/collapse and column focus. Shared by `lineage ui` and the
// offline `trace --format html` page. Needs the global ELK (elk.bundled.js) loaded before it.

const SVG = "http://www.w3.org/2000/svg";
const FONT = "13px system-ui, sans-serif";
const SMALL = "11px system-ui, sans-serif";
const HEADER = 44;
const ROW = 20;
const BADGE_ROW = 20;
const PAD = 10;
export const TRANSFORM_COLORS = {
  IDENTITY: "#2e7d32", TRANSFORMATION: "#1565c0", AGGREGATION: "#ad1457", JOIN: "#6a1b9a",
  GROUP_BY: "#ef6c00", FILTER: "#5d4037", SORT: "#00838f", WINDOW: "#283593", CONDITIONAL: "#c62828",
};
const TABLE_EDGE = "#607d8b";
const BIG = 300;  // cards from which the layout takes its faster settings
const DRAW_SLICE = 250;  // cards (and edges) drawn per task

const measurer = document.createElement("canvas").getContext("2d");
function textWidth(text, font = FONT) {
  measurer.font = font;
  return measurer.measureText(text).width;
}

function el(name, attrs = {}, parent = null) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (parent) parent.appendChild(node);
  return node;
}

export function edgeColor(edge) {
  return edge.transform ? TRANSFORM_COLORS[edge.transform] || TABLE_EDGE : TABLE_EDGE;
}

export function edgeTitle(edge) {
  const parts = [`${edge.source} → ${edge.target}`, `strength: ${edge.strength}`];
  if (edge.transform) parts.push(`transform: ${edge.transform}`);
  if (edge.operation) parts.push(`operation: ${edge.operation}`);
  parts.push(`process: ${edge.process}`);
  return parts.join("\n");
}

// The card a column edge end belongs to: its longest card-name prefix.
function splitEnd(name, cards) {
  if (cards.has(name)) return [name, null];
  const dot = name.lastIndexOf(".");
  return [name.slice(0, dot), name.slice(dot + 1)];
}

export class LineageCanvas {
  // `workerUrl` (elk-worker.min.js) runs the layout off the page's thread; without it ELK runs in the page.
  constructor(svg, handlers = {}, workerUrl = null) {
    this.svg = svg;
    this.handlers = handlers;  // onCard(card), onColumn(card, column), onEdge(edge), onExpand(card), onLayout(ms)
    this.cards = new Map();  // name -> card
    this.edges = new Map();  // key -> edge
    this.addedBy = new Map();  // card name -> the card whose expansion added it
    this.focus = null;
    this.transform = { x: 20, y: 20, k: 1 };
    this.elk = workerUrl ? new ELK({ workerUrl, workerFactory: (url) => new Worker(url) }) : new ELK();
    el("defs", {}, svg).innerHTML =
      `<marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">` +
      `<path d="M0,0 L10,5 L0,10 z" fill="context-stroke"/></marker>`;
    this.viewport = el("g", { class: "viewport" }, svg);
    this.edgeLayer = el("g", { class: "edges" }, this.viewport);
    this.cardLayer = el("g", { class: "cards" }, this.viewport);
    this._panZoom();
  }

  // Replace the picture with a lineage view ({cards, edges, level, root_card}).
  async show(view) {
    this.cards.clear();
    this.edges.clear();
    this.addedBy.clear();
    this.focus = null;
    this.level = view.level;
    this.root = view.root_card;
    this._merge(view, null);
    await this.layout();
    this.fit();
  }

  // Add an expansion (one more hop around `from`) to the picture; returns how many cards it added.
  async merge(view, from) {
    const before = this.cards.size;
    this._merge(view, from);
    await this.layout();
    return this.cards.size - before;
  }

  // Remove the cards that expanding `name` added (and, in turn, those they added).
  async collapse(name) {
    const removed = new Set();
    const visit = (parent) => {
      for (const [child, by] of this.addedBy) if (by === parent && !removed.has(child)) { removed.add(child); visit(child); }
    };
    visit(name);
    for (const card of removed) { this.cards.delete(card); this.addedBy.delete(card); }
    for (const [key, edge] of this.edges) {
      if (removed.has(edge.sourceCard) || removed.has(edge.targetCard)) this.edges.delete(key);
    }
    await this.layout();
    return removed.size;
  }

  _merge(view, from) {
    for (const card of view.cards) {
      const known = this.cards.get(card.name);
      if (known) {
        const names = new Set(known.columns.map((c) => c.name));
        for (const column of card.columns) if (!names.has(column.name)) known.columns.push(column);
      } else {
        this.cards.set(card.name, structuredClone(card));
        if (from) this.addedBy.set(card.name, from);
      }
    }
    for (const edge of view.edges) {
      const [sourceCard, sourceColumn] = splitEnd(edge.source, this.cards);
      const [targetCard, targetColumn] = splitEnd(edge.target, this.cards);
      const key = `${edge.source}|${edge.target}|${edge.process}|${edge.strength}|${edge.transform}`;
      this.edges.set(key, { ...edge, key, sourceCard, sourceColumn, targetCard, targetColumn });
    }
  }

  _size(card) {
    const badges = card.labels.join("  ");
    const width = Math.max(
      textWidth(card.name, "bold " + FONT),
      textWidth(`${card.kind} · ${card.layer}`, SMALL) + 40,
      badges ? textWidth(badges, SMALL) + card.labels.length * 10 : 0,
      ...card.columns.map((c) => textWidth(c.name) + (c.labels.length ? textWidth(c.labels.join(" "), SMALL) + 16 : 0)),
    ) + 2 * PAD + 24;
    const height = HEADER + (card.labels.length ? BADGE_ROW : 0) + card.columns.length * ROW + 6;
    return { width: Math.ceil(width), height };
  }

  _rowY(card, index) {
    return HEADER + (card.labels.length ? BADGE_ROW : 0) + index * ROW + ROW / 2;
  }

  // Lay out every card with ELK and redraw. Column rows with column edges become fixed ports on the card's sides,
  // so those edges end at their rows; big pictures trade some crossing reduction for speed.
  async layout() {
    const started = performance.now();
    const linked = new Set();
    for (const edge of this.edges.values()) {
      if (edge.sourceColumn) linked.add(edge.source);
      if (edge.targetColumn) linked.add(edge.target);
    }
    const children = [];
    for (const card of this.cards.values()) {
      const size = this._size(card);
      card.width = size.width;
      card.height = size.height;
      const ports = [  // table edges meet the card at its header
        { id: `${card.name}#in`, x: -1, y: HEADER / 2, width: 1, height: 1, layoutOptions: { "elk.port.side": "WEST" } },
        { id: `${card.name}#out`, x: card.width, y: HEADER / 2, width: 1, height: 1, layoutOptions: { "elk.port.side": "EAST" } },
      ];
      card.columns.forEach((column, index) => {
        if (!linked.has(`${card.name}.${column.name}`)) return;
        const y = this._rowY(card, index);
        ports.push({ id: `${card.name}.${column.name}#in`, x: -1, y, width: 1, height: 1,
          layoutOptions: { "elk.port.side": "WEST" } });
        ports.push({ id: `${card.name}.${column.name}#out`, x: card.width, y, width: 1, height: 1,
          layoutOptions: { "elk.port.side": "EAST" } });
      });
      children.push({ id: card.name, width: card.width, height: card.height, ports,
        layoutOptions: { "elk.portConstraints": "FIXED_POS" } });
    }
    const edges = [];
    for (const edge of this.edges.values()) {
      if (!this.cards.has(edge.sourceCard) || !this.cards.has(edge.targetCard)) continue;
      const source = `${edge.sourceColumn ? edge.source : edge.sourceCard}#out`;
      const target = `${edge.targetColumn ? edge.target : edge.targetCard}#in`;
      edges.push({ id: edge.key, sources: [source], targets: [target] });
    }
    const big = children.length > BIG;
    const graph = await this.elk.layout({
      id: "root",
      layoutOptions: {
        "elk.algorithm": "layered",
        "elk.direction": "RIGHT",
        "elk.edgeRouting": big ? "POLYLINE" : "SPLINES",
        "elk.layered.spacing.nodeNodeBetweenLayers": "90",
        "elk.spacing.nodeNode": "28",
        "elk.layered.nodePlacement.strategy": big ? "BRANDES_KOEPF" : "NETWORK_SIMPLEX",
        "elk.layered.thoroughness": big ? "1" : "7",
        "elk.layered.crossingMinimization.greedySwitch.type": big ? "OFF" : "TWO_SIDED",
        "elk.separateConnectedComponents": "true",
      },
      children,
      edges,
    });
    for (const node of graph.children) Object.assign(this.cards.get(node.id), { x: node.x, y: node.y });
    this.routes = new Map(graph.edges.map((e) => [e.id, e.sections || []]));
    await this.draw();
    if (this.handlers.onLayout) this.handlers.onLayout(performance.now() - started);
  }

  // Draw the laid-out cards and edges, a slice at a time so that the page keeps answering input meanwhile.
  async draw() {
    this.edgeLayer.replaceChildren();
    this.cardLayer.replaceChildren();
    const cards = [...this.cards.values()];
    const edges = [...this.edges.values()].filter((edge) => this.routes.get(edge.key)?.length);
    for (let start = 0; start < Math.max(cards.length, edges.length); start += DRAW_SLICE) {
      if (start) await new Promise((resolve) => setTimeout(resolve, 0));
      const cardSlice = document.createDocumentFragment();
      for (const card of cards.slice(start, start + DRAW_SLICE)) cardSlice.appendChild(this._card(card));
      this.cardLayer.appendChild(cardSlice);
      const edgeSlice = document.createDocumentFragment();
      for (const edge of edges.slice(start, start + DRAW_SLICE)) edgeSlice.appendChild(this._edge(edge, this.routes.get(edge.key)));
      this.edgeLayer.appendChild(edgeSlice);
    }
    this._applyFocus();
  }

  _card(card) {
    const g = el("g", { class: "card", "data-name": card.name, transform: `translate(${card.x},${card.y})` });
    if (card.name === this.root) g.classList.add("root");
    el("rect", { class: "card-box", width: card.width, height: card.height, rx: 6 }, g);
    el("rect", { class: `card-head layer-${card.layer}`, width: card.width, height: HEADER - 4, rx: 6 }, g);
    const title = el("text", { class: "card-name", x: PAD, y: 18 }, g);
    title.textContent = card.name;
    const sub = el("text", { class: "card-layer", x: PAD, y: 34 }, g);
    sub.textContent = `${card.kind} · ${card.layer}`;
    const expand = el("text", { class: "card-expand", x: card.width - 34, y: 34 }, g);
    expand.textContent = "+";
    el("title", {}, expand).textContent = "expand one more hop";
    const collapse = el("text", { class: "card-collapse", x: card.width - 18, y: 34 }, g);
    collapse.textContent = "−";
    el("title", {}, collapse).textContent = "collapse what this card expanded";
    expand.addEventListener("click", (event) => { event.stopPropagation(); this.handlers.onExpand?.(card); });
    collapse.addEventListener("click", (event) => { event.stopPropagation(); this.collapse(card.name); });
    let x = PAD;
    for (const label of card.labels) {
      const width = textWidth(label, SMALL) + 8;
      el("rect", { class: "badge", x, y: HEADER - 2, width, height: 15, rx: 3 }, g);
      const text = el("text", { class: "badge-text", x: x + 4, y: HEADER + 9 }, g);
      text.textContent = label;
      x += width + 4;
    }
    card.columns.forEach((column, index) => {
      const y = this._rowY(card, index);
      const row = el("g", { class: "column", "data-column": `${card.name}.${column.name}` }, g);
      el("rect", { class: "column-row", x: 1, y: y - ROW / 2, width: card.width - 2, height: ROW }, row);
      const text = el("text", { class: "column-name", x: PAD, y: y + 4 }, row);
      text.textContent = column.name;
      if (column.labels.length) {
        const badge = el("text", { class: "column-badge", x: card.width - PAD, y: y + 4, "text-anchor": "end" }, row);
        badge.textContent = column.labels.join(" ");
      }
      row.addEventListener("click", (event) => { event.stopPropagation(); this.handlers.onColumn?.(card, column); });
    });
    g.addEventListener("click", () => this.handlers.onCard?.(card));
    return g;
  }

  _edge(edge, sections) {
    let d = "";
    for (const s of sections) {
      const points = [s.startPoint, ...(s.bendPoints || []), s.endPoint];
      d += `M${points[0].x},${points[0].y}`;
      if (points.length === 4 || (points.length - 1) % 3 === 0) {
        for (let i = 1; i + 2 < points.length; i += 3) {
          d += ` C${points[i].x},${points[i].y} ${points[i + 1].x},${points[i + 1].y} ${points[i + 2].x},${points[i + 2].y}`;
        }
      } else {
        for (const p of points.slice(1)) d += ` L${p.x},${p.y}`;
      }
    }
    const path = el("path", {
      class: `edge ${edge.strength}`, d, stroke: edgeColor(edge), "marker-end": "url(#arrow)",
      "data-source": edge.source, "data-target": edge.target, "data-transform": edge.transform || "",
      "data-strength": edge.strength,
    });
    el("title", {}, path).textContent = edgeTitle(edge);
    path.addEventListener("click", (event) => { event.stopPropagation(); this.handlers.onEdge?.(edge); });
    return path;
  }

  // Highlight only the path through one column (`db.table.column`): its upstream and downstream column edges.
  focusColumn(name) {
    this.focus = name;
    this._applyFocus();
  }

  _applyFocus() {
    const on = new Set();
    const keys = new Set();
    if (this.focus) {
      on.add(this.focus);
      for (const forward of [true, false]) {
        const queue = [this.focus];
        const seen = new Set(queue);
        while (queue.length) {
          const at = queue.pop();
          for (const edge of this.edges.values()) {
            const [from, to] = forward ? [edge.source, edge.target] : [edge.target, edge.source];
            if (from !== at) continue;
            keys.add(`${edge.source}|${edge.target}`);
            on.add(to);
            if (!seen.has(to)) { seen.add(to); queue.push(to); }
          }
        }
      }
    }
    this.svg.classList.toggle("focused", Boolean(this.focus));
    for (const path of this.edgeLayer.children) {
      path.classList.toggle("on-path", keys.has(`${path.dataset.source}|${path.dataset.target}`));
    }
    for (const row of this.cardLayer.querySelectorAll(".column")) row.classList.toggle("on-path", on.has(row.dataset.column));
  }

  _panZoom() {
    let drag = null;
    this.svg.addEventListener("pointerdown", (event) => {
      if (event.target.closest(".card") || event.target.closest(".edge")) return;
      drag = { x: event.clientX - this.transform.x, y: event.clientY - this.transform.y };
      this.svg.setPointerCapture(event.pointerId);
    });
    this.svg.addEventListener("pointermove", (event) => {
      if (!drag) return;
      this.transform.x = event.clientX - drag.x;
      this.transform.y = event.clientY - drag.y;
      this._apply();
    });
    this.svg.addEventListener("pointerup", () => { drag = null; });
    this.svg.addEventListener("wheel", (event) => {
      event.preventDefault();
      const box = this.svg.getBoundingClientRect();
      const factor = Math.exp(-event.deltaY * 0.0015);
      this.zoomAt(event.clientX - box.left, event.clientY - box.top, factor);
    }, { passive: false });
  }

  zoomAt(x, y, factor) {
    const t = this.transform;
    const k = Math.min(4, Math.max(0.02, t.k * factor));
    t.x = x - ((x - t.x) * k) / t.k;
    t.y = y - ((y - t.y) * k) / t.k;
    t.k = k;
    this._apply();
  }

  // Scale and move the picture so that every card is visible.
  fit() {
    const cards = [...this.cards.values()];
    if (!cards.length) return;
    const box = this.svg.getBoundingClientRect();
    const maxX = Math.max(...cards.map((c) => c.x + c.width));
    const maxY = Math.max(...cards.map((c) => c.y + c.height));
    const k = Math.min(1.2, (box.width - 40) / maxX, (box.height - 40) / maxY);
    this.transform = { x: 20, y: 20, k };
    this._apply();
  }

  _apply() {
    const t = this.transform;
    this.viewport.setAttribute("transform", `translate(${t.x},${t.y}) scale(${t.k})`);
  }
}
