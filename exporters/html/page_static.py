"""The fixed parts of every report page: its style sheet and the script that hands each chart's JSON to
plotly.js and builds the table views. No charting happens here: plotly.js draws everything."""

from __future__ import annotations

STYLE = """
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1a1a1a; margin: 0; background: #f6f7f9; }
header, main, footer { max-width: 1180px; margin: 0 auto; padding: 0 20px; }
header { padding-top: 18px; }
h1 { font-size: 22px; margin: 8px 0 10px; }
h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid #ccd; padding-bottom: 4px; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 0 0 12px; }
dl.meta dt { font-weight: 600; color: #444; }
dl.meta dd { margin: 0; overflow-wrap: anywhere; }
ul.flags { list-style: none; padding: 0; margin: 0 0 10px; }
li.flag { padding: 6px 10px; margin: 4px 0; border-left: 5px solid; background: #fff; }
li.flag.warn { border-color: #E69F00; } li.flag.fail { border-color: #B00020; }
li.flag.info { border-color: #0072B2; } li.flag.ok { border-color: #009E73; }
li.flag.warn strong::before { content: "⚠ "; } li.flag.fail strong::before { content: "✖ "; }
li.flag.info strong::before { content: "ℹ "; } li.flag.ok strong::before { content: "✔ "; }
nav ul { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 4px 14px; margin: 6px 0 0; }
section { background: #fff; padding: 4px 16px 14px; margin: 16px 0; border-radius: 6px; box-shadow: 0 1px 2px #0001; }
p.intro, figcaption, p.note { color: #444; }
figure.chart-block { margin: 14px 0 18px; }
div.chart { min-height: 200px; }
details.data-table summary { cursor: pointer; color: #0b4f8a; margin-top: 2px; }
details.data-table .trace-table { max-height: 320px; overflow: auto; margin: 6px 0; }
.table-wrap { overflow-x: auto; margin: 10px 0; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
caption { text-align: left; font-weight: 600; padding: 4px 0; }
th, td { border: 1px solid #d6d9de; padding: 3px 8px; text-align: right; white-space: nowrap; }
th { background: #eef1f5; }
td:first-child, th:first-child { text-align: left; }
td.pass { background: #e3f4ec; } td.fail { background: #fbe3e6; font-weight: 600; } td.text { text-align: left; white-space: normal; }
td.name { text-align: left; }
footer { color: #666; font-size: 12px; padding-bottom: 24px; }
"""

# Draws every chart from its JSON, records progress on window.goodputReport (the browser tests read it),
# and fills a chart's table view the first time it is opened.
BOOTSTRAP_JS = r"""
(function () {
  "use strict";
  var state = { charts: 0, drawn: 0, failed: [] };
  window.goodputReport = state;
  var config = { responsive: true, displaylogo: false, scrollZoom: false,
                 modeBarButtonsToRemove: ["sendDataToCloud", "select2d", "lasso2d"] };
  function spec(id) { return JSON.parse(document.getElementById(id).textContent); }
  document.querySelectorAll("div.chart").forEach(function (el) {
    state.charts += 1;
    if (typeof window.Plotly === "undefined") {  // a shared copy that is not beside the page any more
      el.textContent = "Chart not drawn: plotly.js did not load (a page of a sweep or capacity search loads " +
        "it from plotly-basic.min.js in the search's directory; keep the directory together).";
      state.failed.push(el.dataset.spec);
      return;
    }
    var fig = spec(el.dataset.spec);
    Plotly.newPlot(el, fig.data, fig.layout, config).then(function () {
      el.dataset.drawn = "1";
      state.drawn += 1;
    }, function (err) {
      state.failed.push(el.dataset.spec);
      console.error("chart " + el.dataset.spec + " failed: " + err);
    });
  });
  function axisTitle(layout, name, fallback) {
    var ax = layout[name];
    return (ax && ax.title && ax.title.text) || fallback;
  }
  function cell(row, text, tag) {
    var c = document.createElement(tag || "td");
    c.textContent = text === null || text === undefined ? "" : String(text);
    row.appendChild(c);
  }
  function buildTables(details) {
    var fig = spec(details.dataset.spec);
    var xTitle = axisTitle(fig.layout, "xaxis", "x"), yTitle = axisTitle(fig.layout, "yaxis", "y");
    fig.data.forEach(function (trace) {
      var xs = trace.x || [], ys = trace.y || [], texts = Array.isArray(trace.text) ? trace.text : null;
      // More numbers per point (an interval's ends): trace.customdata rows, named by trace.meta.columns.
      var extra = (trace.meta && Array.isArray(trace.meta.columns)) ? trace.meta.columns : [];
      var custom = Array.isArray(trace.customdata) ? trace.customdata : [];
      var wrap = document.createElement("div");
      wrap.className = "trace-table";
      var table = document.createElement("table");
      var caption = document.createElement("caption");
      caption.textContent = (trace.name || "series") + " (" + xs.length + " points" +
        (trace.visible === "legendonly" ? "; drawn when chosen in the legend" : "") + ")";
      table.appendChild(caption);
      var head = document.createElement("tr");
      cell(head, xTitle, "th"); cell(head, yTitle, "th");
      extra.forEach(function (name) { cell(head, name, "th"); });
      if (texts) { cell(head, "label", "th"); }
      table.appendChild(head);
      for (var i = 0; i < xs.length; i++) {
        var row = document.createElement("tr");
        cell(row, xs[i]); cell(row, ys[i]);
        extra.forEach(function (_, j) { cell(row, Array.isArray(custom[i]) ? custom[i][j] : null); });
        if (texts) { cell(row, texts[i]); }
        table.appendChild(row);
      }
      wrap.appendChild(table);
      details.appendChild(wrap);
    });
    details.dataset.built = "1";
  }
  document.querySelectorAll("details.data-table").forEach(function (d) {
    d.addEventListener("toggle", function () { if (d.open && !d.dataset.built) { buildTables(d); } });
  });
})();
"""
