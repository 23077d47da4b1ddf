(function () {
"use strict";
var data = JSON.parse(document.getElementById("tz-data").textContent);
var S = data.s, E = data.e, PAGE = 200;
var state = {tutor: "", persona: "", task: "", ep: -1, shown: PAGE};
function s(i) { return i ? S[i] : null; }
function el(tag, cls, text) {
  var n = document.createElement(tag);
  if (cls) n.className = cls;
  if (text !== undefined && text !== null) n.textContent = String(text);
  return n;
}
function pts(x) { return x === null || x === undefined ? "n/a" : (x >= 0 ? "+" : "") + (100 * x).toFixed(1) + " pts"; }
function pct(x) { return x === null || x === undefined ? "n/a" : (100 * x).toFixed(0) + "%"; }
function mark(c) { return c === 1 ? "\u2713" : c === 0 ? "\u2717" : "?"; }
function readHash() {
  var h = location.hash.replace(/^#/, "");
  if (h.indexOf("=") < 0) return false;
  var p = new URLSearchParams(h);
  state.tutor = p.get("tutor") || ""; state.persona = p.get("persona") || ""; state.task = p.get("task") || "";
  state.ep = p.has("ep") ? parseInt(p.get("ep"), 10) : -1;
  if (isNaN(state.ep)) state.ep = -1;
  state.shown = PAGE;
  return true;
}
function writeHash() {
  var p = new URLSearchParams();
  if (state.tutor) p.set("tutor", state.tutor);
  if (state.persona) p.set("persona", state.persona);
  if (state.task) p.set("task", state.task);
  if (state.ep >= 0) p.set("ep", String(state.ep));
  var h = "#" + p.toString();
  try { history.replaceState(null, "", h); } catch (err) { location.hash = h; }
}
function fill(select, values, groups, current) {
  while (select.firstChild) select.removeChild(select.firstChild);
  var all = el("option", null, "all (" + values.length + ")"); all.value = ""; select.appendChild(all);
  var known = false, parents = {};
  values.forEach(function (v) {
    var parent = select;
    if (groups) {
      var g = groups[v];
      if (!parents[g]) { parents[g] = el("optgroup"); parents[g].label = g; select.appendChild(parents[g]); }
      parent = parents[g];
    }
    var o = el("option", null, v); o.value = v; parent.appendChild(o);
    if (v === current) known = true;
  });
  if (current && !known) {
    var extra = el("option", null, current + " (no such value)");
    extra.value = current;
    select.appendChild(extra);
  }
  select.value = current;
}
function distinct(key) {
  var seen = {}, out = [];
  E.forEach(function (e) { var v = s(e[key]); if (v !== null && !seen[v]) { seen[v] = 1; out.push(v); } });
  return out.sort();
}
var families = {};
E.forEach(function (e) { families[s(e.p)] = s(e.f); });
var sel = {tutor: document.getElementById("f-tutor"), persona: document.getElementById("f-persona"),
           task: document.getElementById("f-task")};
function matches(e) {
  return (!state.tutor || s(e.t) === state.tutor) && (!state.persona || s(e.p) === state.persona) &&
         (!state.task || s(e.k) === state.task);
}
function label(e, i) {
  var parts = e.T ? ["#" + i, s(e.t), s(e.p), s(e.k)] : ["#" + i, s(e.t), s(e.K) || s(e.k)];
  if (!e.T && s(e.p) !== "\u2014") parts.push(s(e.p));
  if (e.s !== undefined) parts.push("seed " + e.s);
  if (e.T) parts.push("gain " + pts(e.g));
  if (e.x && e.x.length) parts.push("FAILED");
  return parts.join(" \u00b7 ");
}
function kv(parent, obj) {
  var dl = el("dl", "kv");
  Object.keys(obj || {}).forEach(function (k) {
    var v = obj[k];
    dl.appendChild(el("dt", null, k));
    dl.appendChild(el("dd", null, typeof v === "string" ? v : JSON.stringify(v)));
  });
  parent.appendChild(dl);
}
function testTable(title, rows, post) {
  var wrap = el("div", "tests");
  wrap.appendChild(el("h4", null, title));
  if (!rows.length) { wrap.appendChild(el("p", "note", "none")); return wrap; }
  var t = el("table", "small"), head = el("tr");
  (post ? ["item", "kind", "re-tests", "result", "answer", "response"] : ["item", "result", "answer", "response"])
    .forEach(function (h) { head.appendChild(el("th", null, h)); });
  t.appendChild(head);
  rows.forEach(function (r) {
    var tr = el("tr");
    tr.appendChild(el("td", null, s(r[0])));
    if (post) { tr.appendChild(el("td", null, s(r[4]))); tr.appendChild(el("td", null, s(r[5]) || s(r[0]))); }
    tr.appendChild(el("td", r[1] === 1 ? "ok" : "bad", mark(r[1]) + (r[6] ? "" : " (invalid)")));
    tr.appendChild(el("td", null, s(r[2])));
    tr.appendChild(el("td", null, s(r[3])));
    t.appendChild(tr);
  });
  wrap.appendChild(t);
  return wrap;
}
var ANN = [[2, "intent"], [3, "strategy"], [4, "discipline"], [6, "cognition"], [7, "guidance"], [8, "Bloom"],
           [10, "target KC"]];
function renderEpisode(view, e) {
  var facts = {"task title": s(e.n), "gain (isomorphic)": pts(e.g), "gain (same items)": pts(e.h),
               "pre-test": pct(e.a), "post-test": pct(e.b), "post-test (same items)": pct(e.c), "ended by": s(e.e)};
  kv(view, facts);
  view.appendChild(testTable("Pre-test", e.P, false));
  view.appendChild(testTable("Post-test", e.Q, true));
  view.appendChild(el("h4", null, "Dialogue (" + e.T.length + " turns)"));
  var turns = el("div", "turns");
  e.T.forEach(function (r, j) {
    var who = s(r[0]) || "?";
    var d = el("div", "turn " + (who === "tutor" ? "tutor" : "student"));
    d.appendChild(el("div", "speaker", who + " \u00b7 " + (j + 1)));
    d.appendChild(el("div", "utt", s(r[1])));
    var ann = el("div", "ann");
    ANN.forEach(function (a) {
      var v = s(r[a[0]]);
      if (v !== null && v !== "") ann.appendChild(el("span", "chip", a[1] + ": " + v));
    });
    if (r[5]) ann.appendChild(el("span", "chip", "discipline transfer"));
    if (r[9] & 1) ann.appendChild(el("span", "chip flag", "invalid"));
    if (r[9] & 2) ann.appendChild(el("span", "chip flag", "reveals answer"));
    if (r[9] & 4) ann.appendChild(el("span", "chip flag", "states answer"));
    d.appendChild(ann);
    turns.appendChild(d);
  });
  view.appendChild(turns);
}
function renderItem(view, e) {
  view.appendChild(el("h4", null, "Unit")); kv(view, e.u);
  view.appendChild(el("h4", null, "Prompt")); view.appendChild(el("pre", "text prompt", s(e.i)));
  view.appendChild(el("h4", null, "Response")); view.appendChild(el("pre", "text response", s(e.r)));
  view.appendChild(el("h4", null, "Grades")); kv(view, e.G);
  view.appendChild(el("h4", null, "Judgments (" + (e.J || []).length + ")"));
  (e.J || []).forEach(function (j) { kv(view, j); });
}
function renderView(i) {
  var view = document.getElementById("ep-view");
  while (view.firstChild) view.removeChild(view.firstChild);
  if (i < 0) { view.appendChild(el("p", "note", "No record matches the filters.")); return; }
  var e = E[i];
  view.setAttribute("data-ep", String(i));
  view.appendChild(el("h3", null, label(e, i)));
  if (e.x && e.x.length) {
    var f = el("div", "failures"); f.appendChild(el("h4", "bad", "Failures"));
    e.x.forEach(function (x) { f.appendChild(el("pre", "text", s(x))); });
    view.appendChild(f);
  }
  if (e.T) renderEpisode(view, e); else renderItem(view, e);
}
function render() {
  fill(sel.tutor, distinct("t"), null, state.tutor);
  fill(sel.persona, distinct("p"), families, state.persona);
  fill(sel.task, distinct("k"), null, state.task);
  var hits = [];
  E.forEach(function (e, i) { if (matches(e)) hits.push(i); });
  var chosen = hits.indexOf(state.ep) >= 0 ? state.ep : (hits.length ? hits[0] : -1);
  document.getElementById("match-count").textContent = hits.length + " of " + E.length + " records";
  var list = document.getElementById("ep-list");
  while (list.firstChild) list.removeChild(list.firstChild);
  var shown = hits.slice(0, Math.max(state.shown, hits.indexOf(chosen) + 1));
  shown.forEach(function (i) {
    var e = E[i], li = el("li", i === chosen ? "ep sel" : "ep", label(e, i));
    li.setAttribute("data-ep", String(i));
    li.setAttribute("data-tutor", s(e.t));
    li.setAttribute("data-persona", s(e.p));
    li.setAttribute("data-task", s(e.k));
    li.addEventListener("click", function () { state.ep = i; writeHash(); render(); });
    list.appendChild(li);
  });
  var more = document.getElementById("more");
  more.hidden = shown.length >= hits.length;
  more.textContent = "Show more (" + (hits.length - shown.length) + " left)";
  renderView(chosen);
}
["tutor", "persona", "task"].forEach(function (k) {
  sel[k].addEventListener("change", function () {
    state[k] = sel[k].value; state.ep = -1; state.shown = PAGE;
    writeHash(); render();
  });
});
document.getElementById("more").addEventListener("click", function () { state.shown += PAGE; render(); });
window.addEventListener("hashchange", function () { if (readHash()) render(); });
readHash();
render();
document.body.setAttribute("data-browser", "ready");
})();
