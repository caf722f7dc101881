// Filter the evidence ledger table by text, question and status. Runs on every page load,
// including Material's instant navigation (document$), and does nothing where there is no ledger.
(function () {
  var codeCount = 0;
  function unpackBodies() {
    // A claim's evidence (values, provenance, output) ships as text/html too: put it back in place.
    document.querySelectorAll("script.vf-body-src").forEach(function (src) {
      var holder = document.createElement("div");
      holder.className = "vf-body-part";
      holder.innerHTML = src.textContent;
      src.replaceWith(holder);
    });
  }
  function unpackCode() {
    // Each claim's highlighted code ships inside <script type="text/html"> (see verify/site/fences.py).
    document.querySelectorAll("script.vf-code-src").forEach(function (src) {
      var holder = document.createElement("div");
      holder.className = "vf-code";
      // Material names a code block after its closest ancestor with an id and copies from
      // "#__code_<that id> > code"; a claim id has dots, which would read as classes there.
      holder.id = "vf-code-" + (codeCount += 1);
      holder.innerHTML = src.textContent;
      src.replaceWith(holder);
    });
  }
  function setup() {
    unpackBodies();
    unpackCode();
    document.querySelectorAll(".vf-ledger").forEach(function (ledger) {
      if (ledger.dataset.ready) return;
      ledger.dataset.ready = "1";
      var text = ledger.querySelector(".vf-filter-text");
      var question = ledger.querySelector(".vf-filter-question");
      var status = ledger.querySelector(".vf-filter-status");
      var count = ledger.querySelector(".vf-filter-count");
      // the claims table only: the pages table above it has rows too
      var rows = Array.prototype.slice.call(ledger.querySelectorAll(".vf-ledger-table tbody tr"));
      function apply() {
        var needle = text.value.trim().toLowerCase();
        var shown = 0;
        rows.forEach(function (row) {
          var ok = (!needle || row.textContent.toLowerCase().indexOf(needle) >= 0) &&
            (!question.value || row.dataset.question === question.value) &&
            (!status.value || row.dataset.status === status.value ||
              (row.dataset.elsewhere || "").split(" ").indexOf(status.value) >= 0);
          row.hidden = !ok;
          if (ok) shown += 1;
        });
        count.textContent = shown + " / " + rows.length + " 条";
      }
      [text, question, status].forEach(function (el) { el.addEventListener("input", apply); });
      apply();
    });
  }
  // Unpack at once, before Material mounts its components (code copy buttons) on this page;
  // instant navigation loads later pages through document$.
  unpackBodies();
  unpackCode();
  if (typeof document$ !== "undefined") { document$.subscribe(setup); } else {
    document.addEventListener("DOMContentLoaded", setup);
  }
})();
