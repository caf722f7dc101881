/* 预测输出：看 claim 的代码，预测运行时观测到的值，对照真实观测（设备、torch）与页面上的那句话，自评。 */
(function () {
  "use strict";

  var U = window.QuizUI, Core = window.QuizCore, el = U.el, bank = U.bank;

  function where(d) {
    return d.device + " · torch " + d.torch + (d.torch_build ? "+" + d.torch_build : "") + (d.date ? " · " + d.date : "");
  }

  function setup() {
    var view = U.view;
    if (!bank.drills.length) {
      view.appendChild(el("p", { text: "这个站点没有预测输出题：构建时没有可用的观测值。" }));
      return;
    }
    // the shared picker (question, count, tag, difficulty, due), over the questions that have drills
    var f = U.filters(bank.questions.filter(function (q) {
      return bank.drills.some(function (d) { return d.question === q.id; });
    }), false, true);
    var form = el("form", { cls: "quiz-setup" }, ...f.controls,
      el("button", { type: "submit", cls: "md-button md-button--primary", text: "开始预测输出" }));
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var get = function (name) { return form.querySelector("[name=" + name + "]"); };
      var one = get("question").value, tag = get("tag").value, max = parseInt(get("difficulty").value, 10) || 0;
      var pool = bank.drills.filter(function (d) {
        return one ? d.question === one : (!tag || d.tags.indexOf(tag) >= 0) && (!max || d.difficulty <= max);
      });
      var due = get("due").checked && !one;
      var list = U.pick(pool, Math.max(1, parseInt(get("n").value, 10) || 1), due);
      if (!list.length) { U.say(due ? "没有到期的卡片。" : "没有符合条件的题目。", "warn"); return; }
      step({ mode: "drill", list: list, i: 0, rows: [] });
    });
    view.appendChild(el("p", { cls: "quiz-intro", text: "共 " + bank.drills.length + " 道：每道给出一段运行过的代码，" +
      "请预测它的输出。答案就是那次运行的观测值，不是人写的。" }));
    view.appendChild(form);
  }

  function inputs(d) {
    if (d.format !== "faster") {
      var box = el("input", { type: "text", cls: "quiz-predict", name: "prediction", "aria-label": "你的预测", autocomplete: "off" });
      return { nodes: [box], value: function () { return box.value; }, focus: function () { box.focus(); } };
    }
    var name = "faster-" + d.id;
    var choices = d.options.concat(["same"]).map(function (opt) {
      var radio = el("input", { type: "radio", name: name, value: opt });
      return el("label", { cls: "quiz-choice" }, radio, " ", opt === "same" ? "差不多" : el("code", { text: opt }));
    });
    var factor = el("input", { type: "text", cls: "quiz-predict", name: "factor", "aria-label": "大约几倍", placeholder: "例如 3", autocomplete: "off" });
    return {
      nodes: [el("div", { cls: "quiz-choices", role: "radiogroup", "aria-label": "哪个更快" }, ...choices),
              el("label", {}, "慢的一方耗时约是快的一方的 ", factor, " 倍")],
      value: function () {
        var picked = document.querySelector('input[name="' + name + '"]:checked');
        return { faster: picked ? picked.value : null, factor: factor.value };
      },
      focus: function () { var r = document.querySelector('input[name="' + name + '"]'); if (r) r.focus(); },
    };
  }

  function step(session) {
    var d = session.list[session.i], view = U.view;
    U.clear(view); U.say("");
    view.appendChild(el("div", { cls: "quiz-head" },
      el("span", { cls: "quiz-count", text: "第 " + (session.i + 1) + "/" + session.list.length + " 道" }),
      el("span", { cls: "quiz-meta", text: "预测输出 · " + d.title }),
      el("span", { cls: "quiz-source", text: d.snippet + ":" + d.line })));
    // long lines wrap (a cut line could hide the asked expression), on a phone too
    var wrap = "white-space: pre-wrap; overflow-wrap: anywhere";
    view.appendChild(el("pre", { cls: "quiz-code", style: wrap }, el("code", { text: d.code, style: wrap })));
    view.appendChild(el("p", { cls: "quiz-prompt" }, U.codeText(d.prompt)));
    var inp = inputs(d);
    var check = el("button", { type: "button", cls: "md-button md-button--primary", text: "对照观测值" });
    var form = el("form", { cls: "quiz-drill-form" }, ...inp.nodes, check);
    form.addEventListener("submit", function (ev) { ev.preventDefault(); check.click(); });
    view.appendChild(form);
    inp.focus();
    check.addEventListener("click", function () {
      var right = Core.checkDrill(d, inp.value());
      Array.prototype.forEach.call(form.querySelectorAll("input, button"), function (x) { x.disabled = true; });
      view.appendChild(el("section", { cls: "quiz-reveal quiz-drill-result " + (right ? "right" : "wrong") },
        el("h3", { cls: "quiz-verdict", "data-testid": "verdict", text: right ? "✓ 预测对了" : "✗ 预测错了" }),
        el("p", {}, el("strong", { text: "观测值：" }), U.codeText(d.answer_text)),
        el("p", { cls: "quiz-where", text: "观测于 " + where(d) + (d.here ? "（构建本站的机器）" : "（记录自另一台机器）") }),
        el("blockquote", {}, U.codeText(d.sentence)),
        el("p", { cls: "quiz-links" }, el("a", { href: U.href(d.page_url || d.url), text: "在题目页面上看这句话和它的证据" }))));
      view.appendChild(U.checkedRating(session, d, right));
    });
  }

  U.views.drill = setup;
  U.views.drillStep = step;
})();
