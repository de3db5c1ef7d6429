// nablog's page: a client of `nablog serve` (plain script, no build step, nothing fetched elsewhere).
"use strict";

const $ = (sel) => document.querySelector(sel);
const state = { version: null, relations: [], proposal: null, request: "", abort: null, watch: null };

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

// -- the token: asked once, kept for this tab (sessionStorage) -----------------------------------

function token() { return sessionStorage.getItem("nablog-token") || ""; }

function askToken(message) {
  return new Promise((resolve) => {
    const dialog = $("#token-dialog");
    $("#token-error").textContent = message || "";
    $("#token-form").onsubmit = () => {
      sessionStorage.setItem("nablog-token", $("#token").value.trim());
      resolve();
    };
    if (!dialog.open) dialog.showModal();
    $("#token").focus();
  });
}

// One API call; a 401 asks for the token again and retries once.
async function api(method, path, body, options = {}) {
  for (let attempt = 0; attempt < 2; attempt++) {
    const headers = { "Authorization": "Bearer " + token() };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: options.signal });
    if (response.status === 401 && attempt === 0) {
      await askToken("That token was refused: " + ((await response.json()).error || "") + ".");
      continue;
    }
    if (options.raw) return response;
    const data = await response.json();
    if (!response.ok) {
      const error = new Error(errorText(data));
      error.status = response.status;
      throw error;
    }
    return data;
  }
}

// The server's error as the CLI prints it: the located message, then the hint.
function errorText(data) { return data.error + (data.hint ? "\nhint: " + data.hint : ""); }

// The pieces of a streamed response body between separators, as they arrive.
async function* pieces(response, separator) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf(separator)) >= 0) {
      yield buffer.slice(0, cut);
      buffer = buffer.slice(cut + separator.length);
    }
  }
}

function showVersion(version) {
  state.version = version;
  $("#version").textContent = version;
}

// -- tabs -------------------------------------------------------------------------------------------

function showTab(name) {
  for (const tab of document.querySelectorAll('[role="tab"]')) {
    const on = tab.getAttribute("aria-controls") === name;
    tab.setAttribute("aria-selected", on);
    tab.tabIndex = on ? 0 : -1;
    $("#" + tab.getAttribute("aria-controls")).hidden = !on;
  }
  if (name === "history") loadHistory();
  if (name === "database") loadOverview();
}

function setUpTabs() {
  const tabs = [...document.querySelectorAll('[role="tab"]')];
  tabs.forEach((tab, i) => {
    tab.addEventListener("click", () => showTab(tab.getAttribute("aria-controls")));
    tab.addEventListener("keydown", (e) => {  // arrow keys move between tabs (WAI-ARIA tabs pattern)
      const step = e.key === "ArrowRight" ? 1 : e.key === "ArrowLeft" ? -1 : 0;
      if (!step) return;
      const next = tabs[(i + step + tabs.length) % tabs.length];
      next.focus();
      showTab(next.getAttribute("aria-controls"));
    });
  });
}

// -- the database -----------------------------------------------------------------------------------

async function loadOverview() {
  const data = await api("GET", "/overview");
  showVersion(data.version);
  state.relations = data.relations;
  const body = $("#relations tbody");
  body.replaceChildren();
  for (const r of data.relations) {
    const row = el("tr", { tabindex: "0", "aria-label": `${r.name}, ${r.kind}, ${r.rows} rows; Enter shows its rows` },
      el("td", { text: r.name }), el("td", { text: r.kind }), el("td", { text: r.arity }), el("td", { text: r.rows }));
    const open = () => showRows(r, row);
    row.addEventListener("click", open);
    row.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); open(); } });
    body.append(row);
  }
  $("#predicates").replaceChildren(...data.relations.map((r) => el("option", { value: `+${r.name}(` + Array(r.arity).fill("").map((_, i) => "X" + (i + 1)).join(", ") + ")." })));
  $("#constraints").replaceChildren(...data.constraints.map((c) => el("li", {}, el("code", { text: c.text }))));
  $("#violations").replaceChildren(data.violations.length ? violationList(data.violations) : el("p", { class: "ok", text: "none: every constraint holds" }));
  $("#program").replaceChildren(...data.program.map((f) => el("figure", {},
    el("figcaption", {}, el("code", { text: f.file })),
    el("pre", {}, ...f.lines.map((line, i) => el("span", { class: "line", id: `line-${i + 1}` }, el("span", { class: "no", "aria-hidden": "true", text: i + 1 }), line + "\n"))))));
  if (state.rowsOf) showRows(data.relations.find((r) => r.name === state.rowsOf.name) || data.relations[0]);
}

function violationList(violations) {
  return el("ul", {}, ...violations.map((v) => el("li", {},
    el("strong", { text: v.constraint }), ` — ${v.count} violated instance${v.count === 1 ? "" : "s"}`,
    el("ul", {}, ...v.witnesses.map((w) => el("li", {}, el("code", { text: w.join(", ") })))))));
}

async function showRows(relation, row) {
  if (!relation) return;
  state.rowsOf = relation;
  for (const tr of document.querySelectorAll("#relations tbody tr")) tr.setAttribute("aria-selected", tr.firstChild.textContent === relation.name);
  $("#rows-of").textContent = relation.name;
  const vars = Array(relation.arity).fill("").map((_, i) => "V" + (i + 1));
  const atom = relation.arity ? `${relation.name}(${vars.join(", ")})` : relation.name;
  const data = await api("GET", "/query?atom=" + encodeURIComponent(atom));
  state.rows = data.rows;
  $("#rows thead").replaceChildren(el("tr", {}, ...vars.map((v, i) => el("th", { scope: "col", text: "column " + (i + 1) })), el("th", { scope: "col", text: "why" })));
  filterRows();
}

function filterRows() {
  const needle = $("#rows-search").value.trim().toLowerCase();
  const rows = (state.rows || []).filter((r) => !needle || r.some((v) => String(v).toLowerCase().includes(needle)));
  const shown = rows.slice(0, 500);
  const name = state.rowsOf.name;
  $("#rows tbody").replaceChildren(...shown.map((r) => {
    const atom = r.length ? `${name}(${r.join(", ")})` : name;
    const why = el("details", {}, el("summary", { text: "why" }));
    why.addEventListener("toggle", () => { if (why.open && why.childElementCount === 1) why.append(whyPicture(atom)); });
    return el("tr", {}, ...r.map((v) => el("td", { text: String(v) })), el("td", {}, why));
  }));
  $("#rows-status").textContent = `${rows.length} of ${(state.rows || []).length} rows` + (rows.length > shown.length ? ` (the first ${shown.length} shown)` : "");
}

// Why (or why not) an atom holds, as nablog's SVG picture (GET /why?format=svg).
function whyPicture(atom) {
  const holder = el("div", { class: "picture", role: "img", "aria-label": `why or why not ${atom}`, text: "Explaining…" });
  api("GET", "/why?format=svg&atom=" + encodeURIComponent(atom), undefined, { raw: true }).then(async (response) => {
    if (!response.ok) { holder.className = "error"; holder.textContent = errorText(await response.json()); return; }
    holder.innerHTML = await response.text();  // nablog's own SVG (explain/render.py escapes every label)
  });
  return holder;
}

function askWhy(event) {
  event.preventDefault();
  const atom = $("#why-atom").value.trim();
  if (atom) $("#why-answer").replaceChildren(whyPicture(atom));
}

// -- propose ----------------------------------------------------------------------------------------

let checkTimer = null;
function checkRequest() {
  clearTimeout(checkTimer);
  checkTimer = setTimeout(async () => {
    const text = $("#request").value;
    const out = $("#request-check");
    if (!text.trim()) { out.textContent = ""; out.className = ""; return; }
    try {
      const data = await api("POST", "/check", { request: text });
      out.className = "ok";
      out.textContent = "✓ " + [...data.insert.map((a) => "+" + a), ...data.delete.map((a) => "-" + a)].join("  ");
      $("#request").setAttribute("aria-invalid", "false");
    } catch (e) {
      out.className = "error";
      out.textContent = e.message;
      $("#request").setAttribute("aria-invalid", "true");
    }
  }, 200);
}

function statusSentence(done) {
  const n = done.realizations.length;
  const count = `${n} realization${n === 1 ? "" : "s"}`;
  return {
    complete: `Complete: ${count}, every minimal one there is.`,
    bounded: `Bounded: ${count}; a bound cut the search, there may be more.`,
    timeout: `Timeout: ${count} found before the time ran out; there may be more.`,
  }[done.status] || `${done.status}: ${count}.`;
}

async function propose(event) {
  event.preventDefault();
  const request = $("#request").value.trim();
  if (!request) return;
  if (state.abort) state.abort.abort();
  const abort = new AbortController();
  state.abort = abort;
  state.request = request;
  state.candidates = $("#candidates").value;
  const list = $("#realizations");
  list.replaceChildren();
  $("#propose-status").textContent = "Searching…";
  $("#stop-button").disabled = false;
  $("#propose-button").disabled = true;
  const found = [];
  const version = state.version;
  try {
    const response = await api("POST", "/propose/stream", { request, candidates: state.candidates }, { raw: true, signal: abort.signal });
    if (!response.ok) throw new Error(errorText(await response.json()));
    for await (const text of pieces(response, "\n")) {
      const line = JSON.parse(text);
      if (line.realization) {
        found.push(line.realization);
        list.append(realizationItem(line.realization, found.length, version));
        $("#propose-status").textContent = `Searching… ${found.length} found so far.`;
      } else if (line.progress) {
      $("#propose-status").textContent = `Searching… ${found.length} found so far (${line.progress}).`;
    } else if (line.done) {
        // The final list, numbered as the CLI numbers it (smallest first).
        showVersion(line.done.version);
        state.proposedAt = line.done.version;
        list.replaceChildren(...line.done.realizations.map((r, i) => realizationItem(r, i + 1, line.done.version)));
        $("#propose-status").textContent = statusSentence(line.done) + (line.done.realizations.length ? "" : " " + (line.done.message || ""));
      } else if (line.error) {
        throw new Error(line.error);
      }
    }
  } catch (e) {
    if (e.name === "AbortError") $("#propose-status").textContent = `Stopped: ${found.length} realization${found.length === 1 ? "" : "s"} found before you stopped the search.`;
    else $("#propose-status").textContent = e.message;
  } finally {
    if (state.abort === abort) state.abort = null;
    $("#stop-button").disabled = true;
    $("#propose-button").disabled = false;
  }
}

function changeList(items) {
  return el("ul", { class: "changes" }, ...items.map(([sign, atom]) => el("li", { class: sign === "+" ? "ins" : "del", text: sign + atom })));
}

function signed(part) {
  return [...part.insert.map((a) => ["+", a]), ...part.delete.map((a) => ["-", a])];
}

function realizationItem(r, number, version) {
  const item = el("li", { id: `realization-${number}`, "aria-label": `Realization ${number}` });
  const size = r.insert.length + r.delete.length;
  item.append(el("h3", { text: `Realization ${number}: ${size} change${size === 1 ? "" : "s"}` }));
  item.append(changeList(signed(r)));
  const effects = signed(r.side_effects);
  item.append(el("p", { class: "effects", text: effects.length ? "Side effects on views:" : "No side effects on other views." }));
  if (effects.length) item.append(changeList(effects));
  const inputs = {};
  const values = el("div", { class: "value-row" });
  if (r.family) {
    const id = `family-${number}`;
    const select = el("select", { id }, ...r.family.members.map((m, i) => el("option", { value: i, text: r.family.variables.map((v, j) => `${v}=${m[j]}`).join(", ") })));
    values.append(el("div", {}, el("label", { for: id, text: `Which member (${r.family.count}, where ${r.family.condition || "any"})` }), select));
    inputs.family = select;
  }
  for (const name of r.fresh) {
    const id = `value-${number}-${name}`;
    const input = el("input", { id, required: "", placeholder: "a value" });
    values.append(el("div", {}, el("label", { for: id, text: `Value for the new constant ${name}` + (r.family ? " (when the member uses it)" : "") }), input));
    inputs[name] = input;
  }
  if (values.childElementCount) item.append(values);
  const message = el("p", { class: "message", role: "status" });
  const apply = el("button", { type: "button", class: "primary", text: `Apply realization ${number}` });
  apply.addEventListener("click", () => applyRealization(r, inputs, message, version));
  const why = el("details", {}, el("summary", { text: "Why these changes" }));
  why.addEventListener("toggle", () => { if (why.open && why.childElementCount === 1) explainRealization(r, why); });
  item.append(why, apply, message);
  return item;
}

async function explainRealization(r, details) {
  const box = el("div", { text: "Explaining…" });
  details.append(box);
  try {
    const data = await api("POST", "/explain", { request: state.request, insert: r.insert, delete: r.delete });
    box.replaceChildren(el("ul", {}, ...data.needs.map((n) => el("li", {}, el("code", { text: n })))));
    for (const p of data.pictures) {
      const picture = el("details", {}, el("summary", { text: `${p.kind} ${p.change}: the proof after the change` }));
      const holder = el("div", { class: "picture", role: "img", "aria-label": `proof of ${p.change}` });
      holder.innerHTML = p.svg;  // nablog's own SVG (explain/render.py escapes every label)
      picture.append(holder);
      box.append(picture);
    }
  } catch (e) {
    box.replaceChildren(el("p", { class: "error", text: e.message }));
  }
}

async function applyRealization(r, inputs, message, version) {
  const values = {};
  let needed = r.fresh;
  if (inputs.family) {
    const member = r.family.members[Number(inputs.family.value)];
    r.family.variables.forEach((v, j) => { values[v] = member[j]; });
    needed = r.fresh.filter((name) => member.includes(name));  // a member without it needs no value
  }
  for (const name of needed) {
    const value = inputs[name].value.trim();
    if (!value) { message.className = "message error"; message.textContent = `Give a value for ${name} first.`; inputs[name].focus(); return; }
    values[name] = value;
  }
  message.className = "message";
  message.textContent = "Applying…";
  try {
    const data = await api("POST", "/choose", { request: state.request, candidates: state.candidates, version, insert: r.insert, delete: r.delete, values });
    showVersion(data.version);
    message.className = "message ok";
    message.textContent = `Applied as version ${data.version}: ` + signed(data).map(([s, a]) => s + a).join("  ");
  } catch (e) {
    message.className = "message error";
    message.textContent = e.status === 409 ? "Not applied: another client changed the data since this was proposed. Propose again.\n" + e.message : e.message;
  }
}

// -- history and undo ------------------------------------------------------------------------------

async function loadHistory() {
  const data = await api("GET", "/history");
  showVersion(data.version);
  $("#undo-button").disabled = !data.undo || !data.commits.length;
  $("#commits").replaceChildren(...data.commits.map((c) => el("li", {},
    el("span", { text: `${c.time || ""}  ${c.request || "(a transaction)"}` }), changeList(c.changes.map((x) => [x[0], x.slice(1)])))));
  $("#history-empty").hidden = data.commits.length > 0;
}

async function undo() {
  try {
    const data = await api("POST", "/undo");
    showVersion(data.version);
    $("#history-status").textContent = data.undone ? `Undone as version ${data.version}: ` + signed(data).map(([s, a]) => s + a).join("  ") : data.message;
  } catch (e) {
    $("#history-status").textContent = e.message;
  }
  loadHistory();
}

// -- watch: the answer of a query, live (Server-Sent Events read over fetch, with the token) -------

async function watch(event) {
  event.preventDefault();
  const query = $("#watch-query").value.trim();
  if (!query) return;
  if (state.watch) state.watch.abort();
  const abort = new AbortController();
  state.watch = abort;
  const rows = new Map();
  let last = null;
  const render = () => {
    const sorted = [...rows.values()].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    $("#watch-rows tbody").replaceChildren(...sorted.map((r) => el("tr", {}, ...r.map((v) => el("td", { text: String(v) })))));
  };
  $("#watch-log").replaceChildren();
  for (let attempt = 0; attempt < 5 && !abort.signal.aborted; attempt++) {
    try {
      const headers = { "Authorization": "Bearer " + token() };
      if (last !== null) headers["Last-Event-ID"] = String(last);  // resume without loss
      const response = await fetch("/subscribe?query=" + encodeURIComponent(query), { headers, signal: abort.signal });
      if (!response.ok) {
        $("#watch-status").textContent = errorText(await response.json());
        return;
      }
      $("#watch-status").textContent = `Watching ${query}.`;
      for await (const block of pieces(response, "\n\n")) {
        const fields = {};
        for (const line of block.split("\n")) {
          const colon = line.indexOf(":");
          if (colon > 0) fields[line.slice(0, colon)] = line.slice(colon + 1).trim();
        }
        if (!fields.data) continue;
        const message = JSON.parse(fields.data);
        if (fields.id !== undefined) last = Number(fields.id);
        if (message.snapshot) { rows.clear(); for (const r of message.snapshot) rows.set(JSON.stringify(r), r); render(); }
        if (message.plus) {
          for (const r of message.minus) rows.delete(JSON.stringify(r));
          for (const r of message.plus) rows.set(JSON.stringify(r), r);
          render();
          showVersion(message.version);
          $("#watch-log").append(el("li", { text: `version ${message.version}: ` + [...message.plus.map((r) => "+(" + r.join(", ") + ")"), ...message.minus.map((r) => "-(" + r.join(", ") + ")")].join("  ") }));
        }
      }
    } catch (e) {
      if (e.name === "AbortError") return;
      $("#watch-status").textContent = "The connection dropped; reconnecting…";
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

// -- repair ----------------------------------------------------------------------------------------

async function loadRepair() {
  $("#repair-status").textContent = "Looking for corrections…";
  try {
    const data = await api("GET", "/repair");
    showVersion(data.version);
    if (!data.violations.length) {
      $("#repair-status").textContent = "Every constraint holds: nothing to repair.";
      for (const id of ["#repair-violations", "#repair-tables", "#repair-cells"]) $(id).replaceChildren();
      return;
    }
    $("#repair-status").textContent = `${data.tables.length} correction table${data.tables.length === 1 ? "" : "s"} (${data.status}).`;
    $("#repair-violations").replaceChildren(el("h3", { text: "Violations" }), violationList(data.violations));
    $("#repair-tables").replaceChildren(...data.tables.map((t, i) => repairChoice(`Table ${i + 1}`, changeList(signed(t)), { kind: "tuples", index: i, version: data.version }, t.fresh.length ? "It inserts new constants: apply it with nablog repair --set." : "")));
    const cells = data.cells;
    $("#repair-cells").replaceChildren(typeof cells === "string" ? el("p", { text: cells }) :
      repairChoice("Cell repair", el("table", {}, el("thead", {}, el("tr", {}, ...["relation", "row", "column", "old", "new"].map((h) => el("th", { scope: "col", text: h })))),
        el("tbody", {}, ...cells.corrections.map((c) => el("tr", {}, ...[c.relation, c.row + 1, c.column, c.old, c.new].map((v) => el("td", { text: String(v) })))))),
        { kind: "cells", index: 0, version: data.version }, cells.consistent ? "" : "Some violations stay after it."));
  } catch (e) {
    $("#repair-status").textContent = e.message;
  }
}

function repairChoice(title, body, choice, note) {
  const message = el("p", { class: "message", role: "status", text: note });
  const button = el("button", { type: "button", class: "primary", text: `Apply ${title.toLowerCase()}` });
  button.addEventListener("click", async () => {
    try {
      const data = await api("POST", "/repair/apply", choice);
      showVersion(data.version);
      message.className = "message ok";
      message.textContent = `Applied as version ${data.version}.`;
    } catch (e) {
      message.className = "message error";
      message.textContent = e.status === 409 ? "Not applied: another client changed the data since. Find corrections again.\n" + e.message : e.message;
    }
  });
  return el("section", { "aria-label": title }, el("h4", { text: title }), body, button, message);
}

// -- start -----------------------------------------------------------------------------------------

async function start() {
  setUpTabs();
  $("#request").addEventListener("input", checkRequest);
  $("#rows-search").addEventListener("input", filterRows);
  $("#propose-form").addEventListener("submit", propose);
  $("#stop-button").addEventListener("click", () => { if (state.abort) state.abort.abort(); });
  $("#undo-button").addEventListener("click", undo);
  $("#watch-form").addEventListener("submit", watch);
  $("#why-form").addEventListener("submit", askWhy);
  $("#repair-load").addEventListener("click", loadRepair);
  if (!token()) await askToken();
  const wanted = location.hash.slice(1);
  showTab(["database", "propose", "history", "watch", "repair"].includes(wanted) ? wanted : "database");
  if (wanted !== "database") loadOverview();
}

start();
