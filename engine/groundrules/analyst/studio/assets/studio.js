// groundrules studio: the grids of one table, edited cell by cell; every change is checked by the
// server (lint, the table's examples, the corpus) on an unsaved copy, and Save writes the file.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { file: null, view: null, shape: "", timers: {}, pending: 0 };

async function api(action, body) {
  const res = await fetch("/api/" + action, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body || {}),
  });
  const env = await res.json();
  if (!env.ok) throw new Error(env.error ? env.error.message : "refused");
  return env.data;
}

function say(text, bad) {
  $("status").textContent = text;
  $("status").className = bad ? "bad" : "";
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v; else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

const key = (path) => JSON.stringify(path);

function shapeOf(view) {
  return JSON.stringify(view.grids.map((g) => [g.name, g.columns, g.rows.map((r) => key(r.path))]));
}

function render(view) {
  state.view = view;
  state.shape = shapeOf(view);
  const root = $("grids");
  const openSections = new Set([...root.querySelectorAll("details[open]")].map((d) => d.dataset.section));
  root.replaceChildren();
  for (const g of view.grids) {
    const head = el("tr", {}, el("th", {}, g.shape === "rows" || g.shape === "list" ? "#" : "name"),
      ...g.columns.map((c) => el("th", {}, c)), el("th", {}, ""));
    const body = g.rows.map((row, i) => {
      const cells = g.columns.map((c) => {
        const cell = row.cells[c];
        const path = cell ? cell.path : row.path.concat(c === "value" ? [] : [c]);
        const area = el("textarea", { class: "cell", spellcheck: "false", "data-path": key(path),
          "data-yaml": cell ? String(cell.yaml) : "true", "aria-label": g.name + " " + row.label + " " + c });
        area.value = cell ? cell.text : "";
        area.addEventListener("input", () => changed(area));
        return el("td", { "data-cell": key(path) }, area, el("div", { class: "msg" }));
      });
      const actions = el("td", { class: "actions" });
      if (g.movable && (g.shape === "rows" || g.shape === "list")) {
        actions.append(el("button", { type: "button", title: "move up", onclick: () => rowOp(g, "move", i, i - 1) }, "↑"),
          el("button", { type: "button", title: "move down", onclick: () => rowOp(g, "move", i, i + 1) }, "↓"));
      }
      if (g.shape !== "values") {
        actions.append(el("button", { type: "button", title: "add a row below", onclick: () => rowOp(g, "add", i) }, "+"),
          el("button", { type: "button", title: "delete this row", onclick: () => rowOp(g, "delete", i) }, "✕"));
      }
      return el("tr", { "data-row": key(row.path) }, el("td", { class: "label" }, row.label), ...cells, actions);
    });
    // the rows an analyst edits most are open; settings, names and values fold away
    const box = el("details", { "data-section": g.name }, el("summary", {}, `${g.name} (${g.rows.length})`),
      el("table", { "data-grid": g.name }, el("thead", {}, head), el("tbody", {}, ...body)));
    box.open = g.shape === "rows" || g.shape === "list" || openSections.has(g.name);
    root.append(box);
  }
  mark(view);
}

function mark(view) {
  state.view = view;
  for (const td of document.querySelectorAll("td[data-cell]")) {
    td.classList.remove("bad", "warn");
    td.querySelector(".msg").textContent = "";
  }
  const loose = [];
  const all = view.problems.concat(view.examples ? view.examples.failures : []);
  for (const p of all) {
    const td = p.cell ? document.querySelector(`td[data-cell='${CSS.escape(key(p.cell))}']`) : null;
    const text = `${p.code}: ${p.message}` + (p.hint ? ` (${p.hint})` : "");
    if (td) {
      td.classList.add(p.severity === "warning" ? "warn" : "bad");
      const msg = td.querySelector(".msg");
      msg.textContent = (msg.textContent ? msg.textContent + "\n" : "") + text;
    }
    loose.push(el("li", { class: p.severity || "error" }, `${p.file}:${p.line}: ${text}`));
  }
  $("problems").replaceChildren(...loose);
  const errors = view.problems.filter((p) => p.severity !== "warning").length;
  const ex = view.examples;
  $("checks").textContent = `lint: ${errors} error(s), ${view.problems.length - errors} warning(s)` +
    (ex ? ` · examples: ${ex.passed} passed, ${ex.failed} failed` : " · examples: not run (the tables do not load)") +
    (view.corpus ? ` · corpus: ${view.corpus.changed} of ${view.corpus.cases} case(s) changed` : "");
  $("corpus").textContent = view.corpus ? view.corpus.lines.join("\n") : "";
  say((view.edited ? "edited, not saved" : "saved") + (errors ? ` · ${errors} lint error(s)` : ""), errors > 0);
}

function changed(area) {
  const k = area.dataset.path;
  clearTimeout(state.timers[k]);
  state.timers[k] = setTimeout(() => sendEdit(area), 350);
}

async function sendEdit(area) {
  state.pending++;
  try {
    const view = await api("edit", { file: state.file, path: JSON.parse(area.dataset.path), text: area.value,
      yaml: area.dataset.yaml === "true" });
    if (shapeOf(view) !== state.shape) render(view); else mark(view);
  } catch (e) {
    say(e.message, true);
  } finally {
    state.pending--;
  }
}

async function rowOp(g, op, index, to) {
  if (op === "move" && (to < 0 || to >= g.rows.length)) return;
  try {
    render(await api("rows", { file: state.file, op, section: g.path, index, to }));
  } catch (e) {
    say(e.message, true);
  }
}

async function openFile(file) {
  state.file = file;
  say("checking " + file + " …");
  render(await api("open", { file }));
  const inputs = await api("inputs", { file });
  $("sim-table").replaceChildren(...inputs.tables.map((t) => el("option", { value: t.table }, `${t.table} (${t.kind})`)));
  state.inputs = inputs;
  fillCases();
  $("sim-decision").replaceChildren(el("option", { value: "" }, "(none)"),
    ...inputs.decisions.filter((d) => d.id).map((d) => el("option", { value: d.id }, `${d.at} ${d.tool} ${d.id}`)));
}

function fillCases() {
  const t = (state.inputs.tables || []).find((x) => x.table === $("sim-table").value);
  $("sim-case").replaceChildren(el("option", { value: "" }, "(paste an input below)"),
    ...(t ? t.cases : []).map((c) => el("option", { value: c }, c)));
}

async function simulate() {
  const body = { file: state.file, table: $("sim-table").value };
  if ($("sim-case").value) body.case = $("sim-case").value;
  else if ($("sim-decision").value) body.decision = $("sim-decision").value;
  else {
    try { body.input = JSON.parse($("sim-input").value); } catch (e) { $("sim-out").textContent = "the input is not JSON: " + e.message; return; }
  }
  try {
    const out = await api("simulate", body);
    for (const tr of document.querySelectorAll("tr.fired")) tr.classList.remove("fired");
    const lines = [];
    if (out.refused) lines.push("refused: " + out.refused.join("; "));
    const rowsGrid = [...document.querySelectorAll("table[data-grid]")].filter((t) => t.dataset.grid.endsWith("rows"));
    for (const f of out.fired || []) {
      lines.push(`fired ${f.row} -> ${f.code}  (${f.at})`);
      for (const t of rowsGrid) {
        const tr = [...t.querySelectorAll("tr[data-row]")].find((r) => r.firstChild.textContent === f.row);
        if (tr) tr.classList.add("fired");
      }
    }
    for (const n of out.trace && Array.isArray(out.trace) ? out.trace : []) {
      if (!n.fired) lines.push(`not fired ${n.row}  (${n.at}): ` + (n.skipped || failure(n.failed)));
    }
    if (!out.fired) lines.push(JSON.stringify(out.messages || out.events || out.trace, null, 1));
    $("sim-out").textContent = lines.join("\n");
  } catch (e) {
    $("sim-out").textContent = e.message;
  }
}

// the test that failed, as `eval --trace` says it: field op expected, and what it read
function failure(f) {
  if (!f) return "";
  if (f.failed && !f.field) return (f.op || "") + ": " + f.failed.map(failure).join("; ");
  const inner = f.item && f.item.failed ? ` (item ${f.item.index}: ${failure(f.item.failed)})` : "";
  return `${f.field} ${f.op} ${JSON.stringify(f.expected)}: read ${JSON.stringify(f.read)}` + inner;
}

async function save() {
  try {
    const view = await api("save", { file: state.file });
    mark(view);
    if (view.saved) say(`saved ${state.file}: ${view.diff.length} changed line(s)`);
    else say(view.refusal, true);
  } catch (e) {
    say(e.message, true);
  }
}

async function start() {
  const files = await api("files");
  $("file").replaceChildren(...files.map((f) => el("option", { value: f.file }, `${f.file} (${f.kind})`)));
  const wanted = new URLSearchParams(location.hash.slice(1)).get("file");
  if (wanted && files.some((f) => f.file === wanted)) $("file").value = wanted;
  $("file").addEventListener("change", () => openFile($("file").value));
  $("save").addEventListener("click", save);
  $("revert").addEventListener("click", async () => render(await api("revert", { file: state.file })));
  $("sim-table").addEventListener("change", fillCases);
  $("sim-run").addEventListener("click", simulate);
  await openFile($("file").value);
  document.body.dataset.ready = "true";
}

start().catch((e) => say(e.message, true));
