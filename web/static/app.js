// remessa web: progressive enhancement only; every page works without it.
(function () {
  "use strict";
  // Drag and drop onto the upload zone fills its file input.
  document.querySelectorAll(".drop").forEach(function (zone) {
    var input = zone.querySelector("input[type=file]");
    var name = zone.querySelector(".drop-name");
    if (!input) return;
    ["dragenter", "dragover"].forEach(function (ev) {
      zone.addEventListener(ev, function (e) { e.preventDefault(); zone.classList.add("over"); });
    });
    ["dragleave", "drop"].forEach(function (ev) {
      zone.addEventListener(ev, function (e) { e.preventDefault(); zone.classList.remove("over"); });
    });
    zone.addEventListener("drop", function (e) {
      if (e.dataTransfer && e.dataTransfer.files.length) {
        input.files = e.dataTransfer.files;
        if (name) name.textContent = e.dataTransfer.files[0].name;
      }
    });
    input.addEventListener("change", function () {
      if (name && input.files.length) name.textContent = input.files[0].name;
    });
  });

  // Copy buttons copy the text of their target.
  document.querySelectorAll("[data-copy]").forEach(function (b) {
    b.addEventListener("click", function () {
      var el = document.getElementById(b.getAttribute("data-copy"));
      if (el && navigator.clipboard) navigator.clipboard.writeText(el.textContent);
      b.textContent = b.getAttribute("data-done") || "✓";
    });
  });

  // The run page follows its run through Server-Sent Events.
  var run = document.querySelector("[data-events]");
  if (run && window.EventSource) {
    var es = new EventSource(run.getAttribute("data-events"));
    var set = function (k, v) {
      run.querySelectorAll("[data-k='" + k + "']").forEach(function (el) { el.textContent = v; });
    };
    es.addEventListener("progress", function (m) {
      var ev = JSON.parse(m.data), p = ev.progress || {};
      set("done", p.done); set("total", p.total); set("issued", p.issued); set("denied", p.denied);
      set("ambiguous", p.ambiguous); set("batches", p.batches_done + "/" + p.batches);
      var rate = (p.rate || 0).toFixed(1);
      set("rate", document.documentElement.lang === "en" ? rate : rate.replace(".", ",")); set("status", ev.label); set("phase", p.phase || "");
      set("eta", p.eta_seconds > 0 ? p.eta_seconds + " s" : "—");
      var c = p.cluster;
      if (c) {
        set("units", c.completed + "/" + c.units); set("units_running", c.running); set("units_waiting", c.waiting);
        set("units_failed", c.failed);
        var rs = run.querySelector("[data-k='row_states']"), labels = {};
        try { labels = JSON.parse((rs && rs.getAttribute("data-labels")) || "{}"); } catch (e) { labels = {}; }
        set("row_states", (c.rows || []).map(function (s) { return (labels[s.state] || s.state) + " " + s.n; }).join(", "));
      }
      var bar = run.querySelector(".bar > span");
      if (bar && p.total > 0) bar.style.width = Math.floor(100 * p.done / p.total) + "%";
      run.setAttribute("data-status", ev.status);
      if (ev.finished) { es.close(); window.location.reload(); }
    });
  }
})();
