/* 进度：每道题和每道预测输出的 FSRS 状态；导出、导入（和终端 `verify quiz import/export` 同一格式）、清空。 */
(function () {
  "use strict";

  var U = window.QuizUI, Core = window.QuizCore, el = U.el, bank = U.bank;

  function row(item, title, link) {
    var c = U.state.progress.cards[item.id];
    return el("tr", { "data-id": item.id }, el("td", {}, el("a", { href: U.href(link), text: title })),
      el("td", { text: c ? U.STATE_NAMES[c.state] : "未练" }),
      el("td", { text: c ? (U.isDue(item.id) ? "已到期" : U.fmtDue(new Date(c.due)) + "后") : "-" }),
      el("td", { text: c ? String(c.reps) : "0" }), el("td", { text: c ? String(c.lapses) : "0" }));
  }
  function table(cls, rows) {
    var head = el("thead", {}, el("tr", {}, ...["题目", "状态", "下次复习", "复习次数", "遗忘次数"].map(function (h) { return el("th", { text: h }); })));
    return el("table", { cls: cls }, head, el("tbody", {}, ...rows));
  }

  function render() {
    var view = U.view, cards = U.state.progress.cards;
    U.clear(view);
    var practised = bank.questions.filter(function (q) { return cards[q.id]; }).length;
    var drilled = bank.drills.filter(function (d) { return cards[d.id]; });
    var reviews = U.state.progress.log.filter(function (r) { return U.byId[r.id]; }).length;
    view.appendChild(el("p", { cls: "quiz-tally", text: "已练 " + practised + " / " + bank.questions.length + " 题，预测输出 " +
      drilled.length + " / " + bank.drills.length + " 道，共 " + reviews + " 次自评。" }));
    view.appendChild(table("quiz-progress", bank.questions.map(function (q) { return row(q, q.title, q.url); })));
    if (drilled.length) {
      view.appendChild(el("h3", { text: "练过的预测输出" }));
      view.appendChild(table("quiz-progress quiz-progress-drills", drilled.map(function (d) { return row(d, d.title + " · " + d.claim, d.url); })));
    }
    view.appendChild(controls());
  }

  function importText(text) {
    var read = Core.readProgress(text), obj = read.obj;
    if (read.why) { U.say("导入失败：" + read.why + "。现有进度未改动。", "error"); return; }
    var next = JSON.parse(JSON.stringify(U.state.progress));  // merged aside: kept only once it is saved
    var done = Core.mergeProgress(next, obj, new Set(Object.keys(U.byId)));
    if (!U.save(next)) {
      U.say("导入失败：浏览器拒绝保存（本站的存储空间已满，这个文件的进度放不下）。现有进度未改动。", "error");
      return;
    }
    U.state.progress = next;
    render();
    var msg = "已导入 " + done.cards + " 张卡片的进度、" + done.reviews + " 条自评" +
      (done.kept ? "；" + done.kept + " 张卡片这里的更新，保留了这里的" : "") + "。";
    if (done.unknown.length) msg += "跳过 " + done.unknown.length + " 个题库里没有的 id：" + done.unknown.slice(0, 10).join("、");
    U.say(msg, done.unknown.length ? "warn" : "ok");
  }

  function controls() {
    var file = el("input", { type: "file", accept: "application/json,.json", "aria-label": "导入进度文件", cls: "quiz-import" });
    file.addEventListener("change", function () {
      var f = file.files && file.files[0];
      if (f && f.size > Core.MAX_BYTES) U.say("导入失败：文件有 " + f.size.toLocaleString("en") + " 字节，进度文件最多 " +
        Core.MAX_BYTES.toLocaleString("en") + " 字节。现有进度未改动。", "error");
      else if (f) f.text().then(importText);
      file.value = "";
    });
    var exportBtn = el("button", { type: "button", cls: "md-button", text: "导出进度（JSON）", onclick: function () {
      var blob = new Blob([JSON.stringify(U.state.progress, null, 1)], { type: "application/json" });
      var a = el("a", { href: URL.createObjectURL(blob), download: "quiz-progress-" + new Date().toISOString().slice(0, 10) + ".json" });
      document.body.appendChild(a); a.click(); a.remove();
      setTimeout(function () { URL.revokeObjectURL(a.href); }, 1000);
    } });
    var resetBtn = el("button", { type: "button", cls: "md-button quiz-reset", text: "清空进度", onclick: function () {
      if (!window.confirm("确定清空本浏览器里的全部练习进度？此操作不能撤销（可先导出备份）。")) return;
      U.state.progress = U.emptyProgress();
      var saved = U.save();
      render();
      if (saved) U.say("进度已清空。", "ok");
    } });
    return el("div", {}, el("div", { cls: "quiz-io" }, exportBtn, el("label", { cls: "md-button" }, "导入进度…", file), resetBtn),
      el("p", { cls: "quiz-io-note", text: "同一个文件也能导入终端：verify quiz import 文件；终端用 verify quiz export 文件 导出，这里再导入。" }));
  }

  U.views.progress = render;
})();
