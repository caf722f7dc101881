/* 判断与计算：一个答案就对的题。判断题是论断的原句（对），或把句中一个观测值换成论断的期望不接受的值（错）；
 * 计算题的公式由论断核对过，参数每题不同，答案在给定的相对误差内算对。规则与 verify/quiz/objective.py 相同
 * （QuizCore.checkObjective）；答完之后显示的内容与 verify/quiz/practice.py 的 objective_reveal 相同。 */
(function () {
  "use strict";

  var U = window.QuizUI, Core = window.QuizCore, el = U.el, bank = U.bank;
  var items = bank.objective || [];

  function setup() {
    var view = U.view;
    if (!items.length) { view.appendChild(el("p", { text: "这个站点没有判断题和计算题。" })); return; }
    var f = U.filters(bank.questions, false, true);  // question, count, tag, difficulty, due: as the other tabs
    var kind = el("select", { name: "kind", "aria-label": "题型" }, el("option", { value: "", text: "判断题和计算题混着练" }),
      el("option", { value: "judge", text: "只练判断题" }), el("option", { value: "calc", text: "只练计算题" }));
    var form = el("form", { cls: "quiz-setup" }, el("label", {}, kind), ...f.controls,
      el("button", { type: "submit", cls: "md-button md-button--primary", text: "开始判断与计算" }));
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var get = function (name) { return form.querySelector("[name=" + name + "]"); };
      var one = get("question").value, tag = get("tag").value, max = parseInt(get("difficulty").value, 10) || 0;
      var pool = items.filter(function (o) {
        return (!kind.value || o.kind === kind.value) && (!one || o.question === one) &&
          (one || ((!tag || o.tags.indexOf(tag) >= 0) && (!max || o.difficulty <= max)));
      });
      var due = get("due").checked && !one;
      var list = U.pick(pool, Math.max(1, parseInt(get("n").value, 10) || 1), due);
      if (!list.length) { U.say(due ? "没有到期的卡片。" : "没有符合条件的题目。", "warn"); return; }
      step({ mode: "objective", list: list, i: 0, rows: [] });
    });
    var n = { judge: 0, calc: 0 };
    items.forEach(function (o) { n[o.kind]++; });
    view.appendChild(el("p", { cls: "quiz-intro", text: "共 " + n.judge + " 道判断题（本站论断的原句是对的，改了一个实测值的是错的）、" +
      n.calc + " 道计算题（公式由本站的论断核对过，参数每题不同）。" }));
    view.appendChild(form);
  }

  /** Whether the candidate was right, then the answer (verify/quiz/practice.py: objective_feedback). */
  function feedback(o, right) {
    var said = right ? "答对了" : "答错了";
    if (o.kind === "judge") return said + "：这句是" + o.answer_text + "的";
    return said + "：答案" + (right ? "" : "是") + " " + o.answer_text + "（允许 ±" + (o.tolerance * 100).toFixed(1) + "%，或两位有效数字）";
  }

  /** What follows the verdict (verify/quiz/practice.py: objective_reveal): the true sentence and its claim;
   * for a 计算题 the formula, this item's numbers in it, what counts as right, and its claim. */
  function reveals(o) {
    if (o.kind !== "judge") {
      var mine = (o.params || {}).worked;
      return [["公式：", o.explain]].concat(mine ? [["本题：", mine]] : [], [["",
        "与答案相差不超过 ±" + Number((o.tolerance * 100).toPrecision(6)) + "%，或是答案四舍五入到两位有效数字，都算对。" +
        "这个公式由论断 " + o.claim + " 核对过。"]]);
    }
    if (o.answer) return [["原句：", o.explain], ["", "句中的值是论断 " + o.claim + " 运行时观测到的。"]];
    var p = o.params || {}, where = p.said && p.true ? "错在「" + p.said + "」，应为「" + p.true + "」。" : "";
    return [["正确的说法：", o.explain],
      ["", where + "句中的值是论断 " + o.claim + " 运行时观测到的；改后的值，论断的期望不接受。"]];
  }

  function step(session) {
    var o = session.list[session.i], view = U.view;
    U.clear(view); U.say("");
    var judge = o.kind === "judge";
    view.appendChild(el("div", { cls: "quiz-head" },
      el("span", { cls: "quiz-count", text: "第 " + (session.i + 1) + "/" + session.list.length + " 道" }),
      el("span", { cls: "quiz-meta", text: (judge ? "判断题" : "计算题") + " · " + o.title })));
    view.appendChild(el("p", { cls: "quiz-prompt" }, judge ? "这句话对吗？" : "", judge ? el("br") : null, U.codeText(o.prompt)));
    var given = null, form, box;
    var done = el("button", { type: "button", cls: "md-button md-button--primary", text: judge ? "" : "核对答案" });
    if (judge) {
      form = el("div", { cls: "quiz-judge", role: "group", "aria-label": "对还是错" });
      ["对", "错"].forEach(function (w) {
        form.appendChild(el("button", { type: "button", cls: "md-button quiz-judge-" + (w === "对" ? "true" : "false"), text: w,
          onclick: function () { given = w; reveal(); } }));
      });
    } else {
      box = el("input", { type: "text", inputmode: "decimal", cls: "quiz-predict", name: "number", "aria-label": "你的答案",
                          autocomplete: "off", placeholder: "一个数" });
      form = el("form", { cls: "quiz-drill-form" }, box, el("span", { text: o.unit }), done);
      form.addEventListener("submit", function (ev) { ev.preventDefault(); given = box.value; reveal(); });
      done.addEventListener("click", function () { given = box.value; reveal(); });
    }
    view.appendChild(form);
    if (box) box.focus();
    function reveal() {
      var right = Core.checkObjective(o, given);
      Array.prototype.forEach.call(form.querySelectorAll("input, button"), function (x) { x.disabled = true; });
      view.appendChild(el("section", { cls: "quiz-reveal quiz-drill-result " + (right ? "right" : "wrong") },
        el("h3", { cls: "quiz-verdict", "data-testid": "verdict", text: feedback(o, right) }),
        ...reveals(o).map(function (r) {
          return r[0] ? el("p", {}, el("strong", { text: r[0] }), U.codeText(r[1]))
                      : el("p", { cls: "quiz-where", text: r[1] });
        }),
        el("p", { cls: "quiz-links" }, el("a", { href: U.href(o.page_url || o.url), text: judge ? "打开论断所在的页面" : "打开题目页面" }))));
      view.appendChild(U.checkedRating(session, o, right));
    }
  }

  U.views.objective = setup;
  U.views.objectiveStep = step;
})();
