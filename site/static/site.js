/* rcb leaderboard: sortable tables and the contamination window.
 *
 * The window's rules mirror rcb_action/site/_window.py (window_ranking), which the
 * browser tests hold this file to: the same attempts in scope, the same scaled
 * pass@1 and pass rate (per sample, then the mean over samples), the same
 * contamination mark (cutoff on or after the window's start), the same order.
 * No network: the data is embedded in the page.
 */
(function () {
  "use strict";

  // ---- Sortable tables --------------------------------------------------------

  function sortValue(cell, type) {
    if (!cell) return null;
    var raw = cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent.trim();
    if (raw === "" || raw === "—" || raw === "–") return null;
    if (type === "number") {
      var n = parseFloat(raw);
      return isNaN(n) ? null : n;
    }
    return raw.toLowerCase();
  }

  function sortTable(table, th) {
    var headers = Array.prototype.slice.call(th.parentNode.children);
    var index = headers.indexOf(th);
    var type = th.getAttribute("data-type") || "text";
    var current = th.getAttribute("aria-sort");
    var direction = current === "ascending" ? "descending"
      : current === "descending" ? "ascending"
      : (th.getAttribute("data-first") || "ascending");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows).map(function (row, i) {
      return { row: row, value: sortValue(row.cells[index], type), i: i };
    });
    var sign = direction === "ascending" ? 1 : -1;
    rows.sort(function (a, b) {
      if (a.value === null || b.value === null) {
        if (a.value === b.value) return a.i - b.i;
        return a.value === null ? 1 : -1; // empty cells last either way
      }
      if (a.value < b.value) return -sign;
      if (a.value > b.value) return sign;
      return a.i - b.i;
    });
    rows.forEach(function (r) { body.appendChild(r.row); });
    headers.forEach(function (h) { if (h !== th) h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", direction);
  }

  function initSortable(table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
      var button = th.querySelector("button");
      if (button) button.addEventListener("click", function () { sortTable(table, th); });
    });
  }

  // ---- Contamination window ---------------------------------------------------

  var MISSING = 46; // "."
  var PASSED = 49; // "1"

  function scoreKey(score) {
    return Math.floor(score * 1e6 + 0.5);
  }

  function computeWindow(data, start, end) {
    var snippets = data.snippets;
    var weights = snippets.map(function (s) { return s[1]; });
    var dates = snippets.map(function (s) { return data.tasks[s[0]][1]; });
    var seen = new Uint8Array(snippets.length);
    var rows = data.models.map(function (m, idx) {
      var ns = m.samples.length;
      var total = new Array(ns).fill(0), passed = new Array(ns).fill(0);
      var count = new Array(ns).fill(0), passes = new Array(ns).fill(0);
      var mine = 0;
      for (var i = 0; i < snippets.length; i++) {
        var any = false;
        for (var j = 0; j < ns; j++) {
          var pos = i * ns + j;
          var c = m.r.charCodeAt(pos);
          if (c === MISSING) continue;
          var o = m.o[pos];
          var w = o ? o[0] : weights[i];
          var d = o ? o[1] : dates[i];
          if (d < start || d > end) continue;
          any = true;
          total[j] += w;
          count[j] += 1;
          if (c === PASSED) { passed[j] += w; passes[j] += 1; }
        }
        if (any) { mine += 1; seen[i] = 1; }
      }
      var scaled = [], rates = [];
      for (var k = 0; k < ns; k++) {
        if (count[k] === 0) continue;
        if (total[k] > 0) scaled.push(100 * passed[k] / total[k]);
        rates.push(100 * passes[k] / count[k]);
      }
      return {
        idx: idx, model: m,
        score: scaled.length ? mean(scaled) : null,
        rate: rates.length ? mean(rates) : null,
        snippets: mine,
        contaminated: m.cutoff === null || m.cutoff >= start,
        rank: null
      };
    });
    var ranked = rows.filter(function (r) { return r.score !== null && !r.contaminated; });
    var keys = ranked.map(function (r) { return scoreKey(r.score); });
    ranked.forEach(function (r, n) {
      r.rank = 1 + keys.filter(function (k) { return k > keys[n]; }).length;
    });
    function group(r) { return r.score === null ? 2 : (r.contaminated ? 1 : 0); }
    rows.sort(function (a, b) {
      var ga = group(a), gb = group(b);
      if (ga !== gb) return ga - gb;
      if (ga !== 2) {
        var ka = scoreKey(a.score), kb = scoreKey(b.score);
        if (ka !== kb) return kb - ka;
      }
      return a.idx - b.idx;
    });
    var count = 0, papers = {};
    for (var s = 0; s < snippets.length; s++) {
      if (seen[s]) { count += 1; papers[snippets[s][0]] = true; }
    }
    return { snippets: count, papers: Object.keys(papers).length, rows: rows };
  }

  function mean(values) {
    var sum = 0;
    for (var i = 0; i < values.length; i++) sum += values[i];
    return sum / values.length;
  }

  // Halves round up, as the site's Python formatter does.
  function fmt(value) {
    return value === null ? "—" : value.toFixed(1);
  }

  function plural(count, word) {
    return count.toLocaleString("en-US") + " " + word + (count === 1 ? "" : "s");
  }

  function cell(tag, text, cls) {
    var el = document.createElement(tag);
    if (text !== undefined && text !== null) el.textContent = text;
    if (cls) el.className = cls;
    return el;
  }

  function renderWindow(ui, data, result, start, end) {
    var body = ui.table.tBodies[0];
    var fresh = document.createElement("tbody");
    result.rows.forEach(function (r) {
      var m = r.model;
      var tr = document.createElement("tr");
      tr.setAttribute("data-model", m.id);
      tr.setAttribute("data-rank", r.rank === null ? "" : String(r.rank));
      tr.setAttribute("data-score", r.score === null ? "" : String(r.score));
      if (r.contaminated) tr.className = "contaminated";
      var rank = cell("td", r.rank === null ? "—" : String(r.rank), "num");
      if (r.rank === null) rank.appendChild(cell("span", " unranked", "vh"));
      tr.appendChild(rank);
      var name = cell("th");
      name.setAttribute("scope", "row");
      var link = cell("a", m.name);
      link.setAttribute("href", m.href);
      name.appendChild(link);
      tr.appendChild(name);
      tr.appendChild(cell("td", m.provider));
      tr.appendChild(cell("td", m.cutoff || (m.declared ? m.declared + " (declared by the submitter)" : "—")));
      tr.appendChild(cell("td", fmt(r.score), "num"));
      tr.appendChild(cell("td", fmt(r.rate), "num"));
      tr.appendChild(cell("td", String(r.snippets), "num"));
      var status = cell("td");
      var why = m.cutoff !== null ? "" : (m.declared ? "cutoff declared by the submitter: " : "cutoff unknown: ");
      if (r.contaminated) status.appendChild(cell("span", why + "possibly contaminated", "flag"));
      else status.appendChild(document.createTextNode("clean"));
      if (r.score === null) status.appendChild(document.createTextNode("; no results here"));
      tr.appendChild(status);
      fresh.appendChild(tr);
    });
    ui.table.replaceChild(fresh, body);
    var ranked = result.rows.filter(function (r) { return r.rank !== null; }).length;
    var marked = result.rows.filter(function (r) { return r.contaminated; }).length;
    var text = plural(result.snippets, "snippet") + " from " + plural(result.papers, "paper") +
      " published " + start + " to " + end + "; " + plural(ranked, "model") + " ranked, " + marked +
      " marked as possibly contaminated.";
    if (start > end) text = "The window is empty: its start is after its end.";
    ui.status.textContent = text;
    ui.count.textContent = plural(result.snippets, "snippet");
    ui.warning.hidden = result.snippets >= data.min_snippets;
  }

  function initWindow(data) {
    var $ = function (id) { return document.getElementById(id); };
    var ui = {
      controls: $("window-controls"), start: $("win-start"), end: $("win-end"),
      startSlider: $("win-start-slider"), endSlider: $("win-end-slider"),
      table: $("window-table"), status: $("window-status"), warning: $("window-warning"),
      count: $("window-count")
    };
    if (!data.default || !ui.table) return;
    var dates = data.dates;

    function firstAtOrAfter(day) {
      for (var i = 0; i < dates.length; i++) if (dates[i] >= day) return i;
      return dates.length - 1;
    }
    function lastAtOrBefore(day) {
      for (var i = dates.length - 1; i >= 0; i--) if (dates[i] <= day) return i;
      return 0;
    }
    function describe(slider, prefix) {
      slider.setAttribute("aria-valuetext", prefix + " " + dates[Number(slider.value)]);
    }
    function update() {
      var start = ui.start.value, end = ui.end.value;
      if (!start || !end) return; // a half-typed date: keep the last ranking
      ui.startSlider.value = String(firstAtOrAfter(start));
      ui.endSlider.value = String(lastAtOrBefore(end));
      describe(ui.startSlider, "from");
      describe(ui.endSlider, "to");
      renderWindow(ui, data, computeWindow(data, start, end), start, end);
    }
    function set(start, end) {
      ui.start.value = start;
      ui.end.value = end;
      update();
    }

    ui.start.addEventListener("input", update);
    ui.end.addEventListener("input", update);
    ui.startSlider.addEventListener("input", function () {
      var i = Number(ui.startSlider.value);
      if (i > Number(ui.endSlider.value)) ui.end.value = dates[i];
      set(dates[i], ui.end.value);
    });
    ui.endSlider.addEventListener("input", function () {
      var i = Number(ui.endSlider.value);
      if (i < Number(ui.startSlider.value)) ui.start.value = dates[i];
      set(ui.start.value, dates[i]);
    });
    $("win-clean").addEventListener("click", function () { set(data.default[0], data.default[1]); });
    $("win-all").addEventListener("click", function () { set(dates[0], dates[dates.length - 1]); });
    ui.controls.hidden = false;
    update();
  }

  // Exposed for the browser tests and the curious: the same numbers the table shows.
  window.rcbWindow = { compute: computeWindow };

  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), initSortable);
  var source = document.getElementById("window-data");
  if (source) initWindow(JSON.parse(source.textContent));
})();
