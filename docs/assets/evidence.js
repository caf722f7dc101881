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
    document.querySelectorAll(".vf-ledger").forEach(setupLedger);
  }
  // The ledger: filtered by text, question and status, shown a page of rows at a time (hundreds of rows
  // are one long page otherwise), each long cell clipped to a few lines with a button that opens it.
  var PAGE = 20;
  function clip(row) {
    if (row.dataset.clipped) return;
    row.dataset.clipped = "1";
    var heads = row.closest("table").querySelectorAll("thead th");
    Array.prototype.forEach.call(row.children, function (td, i) {
      // a phone shows a row as a card: each cell under its column's name (verify.css)
      if (heads[i]) td.dataset.label = heads[i].textContent;
      if (i === 0 || i === 2) return;  // the id and this machine's badge are short
      var box = document.createElement("div");
      box.className = "vf-clip";
      while (td.firstChild) box.appendChild(td.firstChild);
      td.appendChild(box);
    });
  }
  function fold(row) {
    // measured once the row is shown: only a cell whose content is taller than its clip gets the button
    row.querySelectorAll(".vf-clip").forEach(function (box) {
      var button = box.nextElementSibling;
      if (button || box.scrollHeight <= box.clientHeight + 2) return;
      button = document.createElement("button");
      button.type = "button";
      button.className = "vf-clip-open";
      button.textContent = "展开全部";
      button.addEventListener("click", function () {
        var open = box.classList.toggle("vf-open");
        button.textContent = open ? "收起" : "展开全部";
      });
      box.after(button);
    });
  }
  function setupLedger(ledger) {
    if (ledger.dataset.ready) return;
    ledger.dataset.ready = "1";
    var text = ledger.querySelector(".vf-filter-text");
    var question = ledger.querySelector(".vf-filter-question");
    var status = ledger.querySelector(".vf-filter-status");
    var count = ledger.querySelector(".vf-filter-count");
    var table = ledger.querySelector(".vf-ledger-table");
    var pager = ledger.querySelector(".vf-pager");
    var at = pager.querySelector(".vf-pager-at");
    var prev = pager.querySelector(".vf-pager-prev");
    var next = pager.querySelector(".vf-pager-next");
    // the claims table only: the pages table above it has rows too
    var rows = Array.prototype.slice.call(table.querySelectorAll("tbody tr"));
    // read before a cell gets its 展开全部 button, which is no part of what a row says
    var texts = rows.map(function (row) { return row.textContent.toLowerCase(); });
    var matched = rows;
    var page = 0;
    function show() {
      var pages = Math.max(1, Math.ceil(matched.length / PAGE));
      page = Math.min(Math.max(page, 0), pages - 1);
      var first = page * PAGE;
      rows.forEach(function (row) { row.hidden = true; });
      matched.slice(first, first + PAGE).forEach(function (row) { clip(row); row.hidden = false; fold(row); });
      at.textContent = "第 " + (page + 1) + " / " + pages + " 页";
      prev.disabled = page === 0;
      next.disabled = page >= pages - 1;
      pager.hidden = pages < 2;
    }
    function apply() {
      var needle = text.value.trim().toLowerCase();
      matched = rows.filter(function (row, i) {
        return (!needle || texts[i].indexOf(needle) >= 0) &&
          (!question.value || row.dataset.question === question.value) &&
          (!status.value || row.dataset.status === status.value ||
            (row.dataset.elsewhere || "").split(" ").indexOf(status.value) >= 0);
      });
      count.textContent = matched.length + " / " + rows.length + " 条";
      page = 0;
      show();
    }
    function turn(step) {
      page += step;
      show();
      table.scrollIntoView({block: "start"});
    }
    prev.addEventListener("click", function () { turn(-1); });
    next.addEventListener("click", function () { turn(1); });
    [text, question, status].forEach(function (el) { el.addEventListener("input", apply); });
    apply();
  }
  // Unpack at once, before Material mounts its components (code copy buttons) on this page;
  // instant navigation loads later pages through document$.
  unpackBodies();
  unpackCode();
  if (typeof document$ !== "undefined") { document$.subscribe(setup); } else {
    document.addEventListener("DOMContentLoaded", setup);
  }
})();
