/* 模拟面试 / 闪卡（入口）：选题、计时作答、追问、参考答案、逐条标记考察点、自评；标签页在这里切换。
 *
 * The drill tab is quiz-drill.js, the progress tab quiz-progress.js; shared state and helpers are
 * QuizUI (quiz-ui.js), the rules QuizCore (quiz-core.js). Plain JavaScript; the only requests are the
 * parts of the bank the build wrote beside the page (QuizUI.whenWhole), loaded before their items show.
 */
(function () {
  "use strict";

  var U = window.QuizUI, Core = window.QuizCore, el = U.el, bank = U.bank;
  var root = document.getElementById("quiz-app");
  if (!root || !document.getElementById("quiz-bank")) return;

  var status = el("div", { cls: "quiz-status", role: "status", "aria-live": "polite" });
  function say(text, kind) { status.textContent = text || ""; status.className = "quiz-status" + (kind ? " " + kind : ""); }
  var tabs = el("div", { cls: "quiz-tabs", role: "tablist" });
  var view = el("div", { cls: "quiz-view" });
  root.appendChild(tabs); root.appendChild(status); root.appendChild(view);
  U.say = say; U.view = view;
  [["mock", "模拟面试"], ["cards", "闪卡"], ["drill", "预测输出"], ["objective", "判断与计算"], ["progress", "进度"]].forEach(function (t) {
    tabs.appendChild(el("button", { type: "button", role: "tab", "data-tab": t[0], text: t[1], onclick: function () { show(t[0]); } }));
  });
  var current = null;
  function show(tab) {
    current = tab;
    if (U.state.timer) { clearInterval(U.state.timer); U.state.timer = null; }
    Array.prototype.forEach.call(tabs.children, function (b) { b.setAttribute("aria-selected", String(b.dataset.tab === tab)); });
    U.clear(view);
    say("");
    ({ mock: setupView, cards: setupView, drill: U.views.drill, objective: U.views.objective,
       progress: U.views.progress })[tab](tab);
    if (tabItems[tab]) U.prefetch(tabItems[tab]);  // most likely in before the candidate presses start
  }
  U.show = show;

  // The drill and objective tabs pick from the index; their items' code, prompts and answers are in the
  // tab's part. A start pressed before it is in waits for it here, before the tab's own handler sees it.
  var tabItems = { drill: bank.drills, objective: bank.objective };
  view.addEventListener("submit", function (ev) {
    var items = tabItems[current];
    if (!items || !U.missing(items).length) return;
    ev.preventDefault();
    ev.stopImmediatePropagation();
    var form = ev.target, button = form.querySelector("button[type=submit]");
    if (button) button.disabled = true;
    U.whenWhole(items, function () {
      if (button) button.disabled = false;
      form.requestSubmit();  // nothing happens if the candidate has left the tab meanwhile
    }, function () { if (button) button.disabled = false; });
  }, true);

  // The syllabus' topics in the order the site lists them (verify/quiz/schema.py TOPICS), named as
  // the nav names them (verify/site/templating.py); tests/test_phone_layouts.py keeps the three equal.
  var TOPICS = [["pytorch-internals", "PyTorch 内部机制"], ["cuda-gpu", "CUDA 与 GPU"], ["training-memory", "训练显存"],
    ["distributed", "分布式训练"], ["serving", "推理与服务"], ["model-architecture", "模型结构"],
    ["quantization", "量化"], ["cpp-systems", "C++ 与系统"]];
  /** ``items`` in groups by topic, in TOPICS order, each group in the bank's order; items of no known
   *  topic last, under 其他. One group with no label when no item has a known topic. */
  function byTopic(items) {
    var known = TOPICS.map(function (t) { return t[0]; });
    var groups = TOPICS.map(function (t) {
      return { label: t[1], items: items.filter(function (q) { return q.topic === t[0]; }) };
    }).concat([{ label: "其他", items: items.filter(function (q) { return known.indexOf(q.topic) < 0; }) }]);
    groups = groups.filter(function (g) { return g.items.length; });
    if (groups.length === 1 && groups[0].label === "其他") groups[0].label = "";
    return groups;
  }
  U.TOPICS = TOPICS;

  // keepCount: the count still applies with one question chosen (a question's several items)
  function filters(items, withLimit, keepCount) {
    // a round of questions holds at most every question; a round of items (keepCount) may hold more than one a question
    var n = el("input", { type: "number", min: "1", value: String(Math.min(5, items.length)), name: "n" });
    if (!keepCount) n.max = String(items.length);
    var tag = el("select", { name: "tag" }, el("option", { value: "", text: "全部标签" }));
    bank.tags.forEach(function (t) { tag.appendChild(el("option", { value: t, text: t })); });
    var diff = el("select", { name: "difficulty" }, el("option", { value: "", text: "全部难度" }));
    [1, 2, 3, 4, 5].forEach(function (d) { diff.appendChild(el("option", { value: String(d), text: "难度 ≤ " + d })); });
    var limit = el("input", { type: "number", min: "30", step: "30", value: "180", name: "seconds" });
    var dueOnly = el("input", { type: "checkbox", name: "due" });
    var dueCount = items.filter(function (q) { return U.isDue(q.id); }).length;
    // one question by name (a page's 练这道题 link opens the quiz with #q=<its id>), or a draw
    var one = el("select", { name: "question", "aria-label": "题目" }, el("option", { value: "", text: "随机抽题" }));
    byTopic(items).forEach(function (g) {
      var options = g.items.map(function (q) { return el("option", { value: q.id, text: q.title }); });
      if (g.label) one.appendChild(el("optgroup", { label: g.label }, ...options));
      else options.forEach(function (o) { one.appendChild(o); });
    });
    var asked = /^#q=([\w-]+)$/.exec(window.location.hash);
    if (asked && items.some(function (q) { return q.id === asked[1]; })) one.value = asked[1];
    function sync() { (keepCount ? [tag, diff, dueOnly] : [n, tag, diff, dueOnly]).forEach(function (c) { c.disabled = !!one.value; }); }
    one.addEventListener("change", sync);
    sync();
    var controls = [el("label", { cls: "quiz-one" }, one), el("label", {}, "题数 ", n), el("label", {}, tag), el("label", {}, diff),
      withLimit ? el("label", {}, "每题限时（秒） ", limit) : null, el("label", {}, dueOnly, " 只练到期的（" + dueCount + " 张）")];
    function chosen() {
      if (one.value) {
        return { list: items.filter(function (q) { return q.id === one.value; }), due: false,
                 seconds: Math.max(10, parseInt(limit.value, 10) || 180) };
      }
      var pool = items.filter(function (q) {
        var max = parseInt(diff.value, 10) || 0;
        return (!tag.value || q.tags.indexOf(tag.value) >= 0) && (!max || q.difficulty <= max);
      });
      return { list: U.pick(pool, Math.max(1, parseInt(n.value, 10) || 1), dueOnly.checked), due: dueOnly.checked,
               seconds: Math.max(10, parseInt(limit.value, 10) || 180) };
    }
    return { controls: controls, chosen: chosen };
  }
  U.filters = filters;

  function setupView(mode) {
    var f = filters(bank.questions, mode === "mock");
    var form = el("form", { cls: "quiz-setup" }, ...f.controls,
      el("button", { type: "submit", cls: "md-button md-button--primary", text: mode === "mock" ? "开始模拟面试" : "开始闪卡" }));
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var c = f.chosen();
      if (!c.list.length) { say(c.due ? "没有到期的卡片。" : "没有符合条件的题目。", "warn"); return; }
      var session = { mode: mode, list: c.list, i: 0, rows: [], seconds: c.seconds };
      var button = form.querySelector("button[type=submit]");
      button.disabled = true;
      // every question of the round is whole before the first is shown: no wait between questions
      U.whenWhole(c.list, function () {
        button.disabled = false;
        if (form.isConnected) (mode === "mock" ? askQuestion : flashcard)(session);
      }, function () { button.disabled = false; });
    });
    view.appendChild(el("p", { cls: "quiz-intro", text: "题库共 " + bank.questions.length + " 题，另有 " + bank.drills.length + " 道预测输出。" }));
    view.appendChild(form);
    if (/^#q=/.test(window.location.hash)) form.querySelector("button[type=submit]").focus();
  }

  function header(session, q) {
    return el("div", { cls: "quiz-head" },
      el("span", { cls: "quiz-count", text: "第 " + (session.i + 1) + "/" + session.list.length + " 题" }),
      el("span", { cls: "quiz-meta", text: "难度 " + q.difficulty + " · " + q.tags.map(function (t) { return "#" + t; }).join(" ") }),
      el("span", { cls: "quiz-source", text: q.sources.map(function (s) { return s.company + " · " + s.round; }).join("；") }));
  }

  // ---- mock interview ---------------------------------------------------------------------
  function askQuestion(session) {
    var q = session.list[session.i];
    U.clear(view); say("");
    var started = Date.now();
    var timeEl = el("div", { cls: "quiz-timer", "data-testid": "timer", text: U.clock(session.seconds) });
    var answer = el("textarea", { cls: "quiz-answer", rows: "8", placeholder: "用自己的话回答，像在面试里说的一样……", "aria-label": "你的回答" });
    var submit = el("button", { type: "button", cls: "md-button md-button--primary", text: "提交回答" });
    view.appendChild(header(session, q));
    view.appendChild(el("h2", { cls: "quiz-question", text: q.question }));
    view.append(timeEl, answer, submit);
    function tick() {
      var left = session.seconds - (Date.now() - started) / 1000;
      timeEl.textContent = left >= 0 ? "剩余 " + U.clock(left) : "超时 +" + U.clock(-left);
      timeEl.classList.toggle("over", left < 0);
    }
    tick();
    U.state.timer = setInterval(tick, 250);
    answer.focus();
    submit.addEventListener("click", function () {
      clearInterval(U.state.timer); U.state.timer = null;
      var took = (Date.now() - started) / 1000;
      answer.readOnly = true; submit.disabled = true;
      timeEl.textContent = "用时 " + U.clock(took) + (took > session.seconds ? "（超时）" : "");
      followUp(session, q, answer.value, took);
    });
  }

  function followUp(session, q, answer, took) {
    var fu = q.follow_ups[Math.floor(Math.random() * q.follow_ups.length)];
    var reply = el("textarea", { cls: "quiz-answer", rows: "5", placeholder: "回答追问……", "aria-label": "追问的回答" });
    var reveal = el("button", { type: "button", cls: "md-button md-button--primary", text: "揭晓答案" });
    view.appendChild(el("section", { cls: "quiz-followup" }, el("h3", { text: "追问" }), el("p", { cls: "quiz-fu-q", text: fu.q }), reply, reveal));
    reply.focus();
    reveal.addEventListener("click", function () {
      reply.readOnly = true; reveal.disabled = true;
      view.appendChild(revealView(q, fu));
      view.appendChild(assessView(q, answer + "\n" + reply.value, took > session.seconds, function (marks, grade) {
        session.rows.push({ q: q, marks: marks, seconds: took, grade: grade });
        var said = marks.filter(function (m) { return m === "said"; }).length;
        U.rate(q.id, grade, { coverage: Math.round(said / marks.length * 1000) / 1000, seconds: Math.round(took) });
        next(session);
      }));
    });
  }

  function answersView(q) {
    var ordinary = el("div", { cls: "quiz-ordinary" }, el("h3", { text: "普通回答" }));
    var better = el("div", { cls: "quiz-better" }, el("h3", { text: "更好的回答" }));
    var o = el("div"), b = el("div");
    o.innerHTML = q.ordinary_answer_html;  // build output from the site's own pages
    b.innerHTML = q.better_answer_html;
    ordinary.appendChild(o); better.appendChild(b);
    if (q.deeper_answer_html) {  // the long answer, folded under the spoken one
      var d = el("div");
      d.innerHTML = q.deeper_answer_html;
      better.appendChild(el("details", { cls: "quiz-deeper" }, el("summary", { text: "逐点展开" }), d));
    }
    return el("div", { cls: "quiz-answers" }, ordinary, better);
  }
  function links(q) {
    return el("p", { cls: "quiz-links" }, el("a", { href: U.href(q.page_url || q.url), text: "打开题目页面" }), " · ",
      el("a", { href: U.href(q.evidence_url), text: "查看证据（" + q.claims.length + " 条可执行的结论）" }));
  }

  var MARK_ORDER = ["said", "missed", "wrong"];

  /** One key point to mark 说到了 / 没说到 / 说错了, none chosen; below it the answer's sentences that
   *  contain the point's words, said to be only that (QuizCore.shared). */
  function markItem(kp, answer, onChange) {
    var li = el("li", { cls: "quiz-point" });
    var group = el("span", { cls: "quiz-marks", role: "radiogroup", "aria-label": "这一点：" + kp.point });
    MARK_ORDER.forEach(function (m) {
      group.appendChild(el("button", { type: "button", role: "radio", cls: "quiz-mark", "data-mark": m,
        "aria-checked": "false", text: Core.MARKS[m],
        onclick: function () {
          li.dataset.mark = m;
          Array.prototype.forEach.call(group.children, function (b) { b.setAttribute("aria-checked", String(b.dataset.mark === m)); });
          onChange();
        } }));
    });
    li.append(group, el("span", { cls: "text", text: kp.point }));
    var found = Core.shared(answer, kp);
    if (found.length) {
      li.appendChild(el("div", { cls: "quiz-found" }, el("span", { cls: "quiz-found-label", text: Core.FIND.label + "：" }),
        el("ul", {}, ...found.map(function (f) {
          return el("li", {}, el("span", { cls: "quiz-found-sentence", text: "「" + f[0] + "」" }), el("span", { cls: "quiz-found-words", text: "（含 " + f[1].join("、") + "）" }));
        }))));
    } else {
      li.appendChild(el("div", { cls: "quiz-found none", text: Core.FIND.none + "（" + Core.words(kp).join("、") + "）。" }));
    }
    return li;
  }

  /** The candidate marks each key point; the rating follows from the marks alone (QuizCore.rating). */
  function assessView(q, answer, overTime, done) {
    var items = [];
    var verdict = el("p", { cls: "quiz-verdict", "data-testid": "verdict" });
    var confirm = el("button", { type: "button", cls: "md-button md-button--primary", text: "记下自评" });
    function marks() { return items.map(function (li) { return li.dataset.mark; }); }
    function update() {
      var left = marks().filter(function (m) { return !m; }).length;
      confirm.disabled = left > 0;
      if (left) { verdict.textContent = "还有 " + left + " 个考察点没标。"; return null; }
      var grade = Core.rating(marks(), overTime), r = U.RATINGS[grade - 1];
      var due = U.previewDue(q.id, grade);
      verdict.textContent = "按你的标记：" + r.label + "，下次复习在 " + U.fmtDue(due) + "后" +
        (overTime ? "；超时了，全部说到也只记「良好」" : "");
      return grade;
    }
    q.key_points.forEach(function (kp) { items.push(markItem(kp, answer, update)); });
    confirm.addEventListener("click", function () {
      var grade = update();
      if (grade === null) return;
      confirm.disabled = true;
      view.querySelectorAll(".quiz-mark").forEach(function (b) { b.disabled = true; });
      done(marks(), grade);
    });
    update();
    return el("section", { cls: "quiz-assess" },
      el("h3", { "data-testid": "assess", text: "对照考察点，给自己的回答打标记" }),
      el("p", { cls: "quiz-hint", text: Core.FIND.why }),
      el("ol", { cls: "quiz-points" }, ...items), verdict, confirm);
  }

  function revealView(q, fu) {
    return el("section", { cls: "quiz-reveal" }, answersView(q),
      el("div", { cls: "quiz-fu-a" }, el("h3", { text: "追问参考" }), el("p", { cls: "quiz-fu-q", text: fu.q }), el("p", { text: fu.a })),
      links(q));
  }

  function next(session) {
    session.i += 1;
    var steps = { mock: askQuestion, drill: U.views.drillStep, objective: U.views.objectiveStep, cards: flashcard };
    if (session.i < session.list.length) steps[session.mode](session);
    else summary(session);
  }
  U.next = next;

  function summary(session) {
    U.clear(view);
    var mock = session.mode === "mock";
    view.appendChild(el("h2", { text: "本轮小结" }));
    function count(r, m) { return String(r.marks.filter(function (x) { return x === m; }).length); }
    // an item with one right answer (a drill, a 判断题, a 计算题) says whether it was right, and the round its score
    var checked = session.rows.filter(function (r) { return r.right !== undefined; });
    var head = ["题目"].concat(mock ? ["说到了", "没说到", "说错了", "用时"] : [], checked.length ? ["结果"] : [], ["自评", "下次复习"]);
    var table = el("table", { cls: "quiz-summary" },
      el("thead", {}, el("tr", {}, ...head.map(function (h) { return el("th", { text: h }); }))));
    var body = el("tbody");
    session.rows.forEach(function (r) {
      var cells = [el("td", {}, el("a", { href: U.href(r.q.url), text: r.q.title + (r.q.claim ? " · " + r.q.claim : "") }))];
      if (mock) cells.push(el("td", { text: count(r, "said") }), el("td", { text: count(r, "missed") }),
                           el("td", { text: count(r, "wrong") }), el("td", { text: U.clock(r.seconds) }));
      if (checked.length) cells.push(el("td", { text: r.right === undefined ? "" : r.right ? "对" : "错" }));
      cells.push(el("td", { text: U.RATINGS[r.grade - 1].label }), el("td", { text: U.fmtDue(new Date(U.state.progress.cards[r.q.id].due)) + "后" }));
      // each cell names its column, for a phone where the table stacks into one block per question
      cells.forEach(function (td, i) { td.setAttribute("data-label", head[i]); });
      body.appendChild(el("tr", {}, ...cells));
    });
    table.appendChild(body);
    view.appendChild(table);
    if (checked.length) {
      var right = checked.filter(function (r) { return r.right; }).length;
      view.appendChild(el("p", { cls: "quiz-score", text: "答对 " + right + " / " + checked.length + " 道" }));
    }
    if (mock) {
      var weak = [];  // what the candidate marked 说错了 first, then 没说到
      ["wrong", "missed"].forEach(function (m) {
        session.rows.forEach(function (r) {
          r.marks.forEach(function (x, k) { if (x === m) weak.push({ mark: m, point: r.q.key_points[k].point, q: r.q }); });
        });
      });
      view.appendChild(el("h3", { text: "要补的考察点" }));
      if (!weak.length) view.appendChild(el("p", { text: "每个考察点你都标了「说到了」。" }));
      view.appendChild(el("ul", { cls: "quiz-weak" }, ...weak.slice(0, 8).map(function (w) {
        return el("li", {}, el("strong", { text: Core.MARKS[w.mark] + " " }), w.point, " → ", el("a", { href: U.href(w.q.url), text: w.q.title }));
      })));
    }
    view.appendChild(el("button", { type: "button", cls: "md-button md-button--primary", text: "再来一轮", onclick: function () { show(session.mode); } }));
  }

  // ---- flashcards -------------------------------------------------------------------------
  function flashcard(session) {
    var q = session.list[session.i];
    U.clear(view); say("");
    view.appendChild(header(session, q));
    view.appendChild(el("h2", { cls: "quiz-question", text: q.question }));
    var flip = el("button", { type: "button", cls: "md-button md-button--primary", text: "翻面" });
    view.appendChild(flip);
    flip.addEventListener("click", function () {
      flip.remove();
      view.appendChild(answersView(q));
      view.appendChild(el("h3", { text: "考察点" }));
      view.appendChild(el("ul", { cls: "quiz-points" }, ...q.key_points.map(function (kp) { return el("li", { text: kp.point }); })));
      view.appendChild(links(q));
      view.appendChild(U.ratingBar(q.id, function (grade) {
        session.rows.push({ q: q, grade: grade });
        U.rate(q.id, grade);
        next(session);
      }));
    });
  }

  window.__quiz = { shared: Core.shared, rating: Core.rating, checkObjective: Core.checkObjective,
                    validateProgress: Core.validateProgress, checkDrill: Core.checkDrill,
                    normalizeValue: Core.normalizeValue };  // for the browser tests
  show("mock");
  if (U.state.note) say(U.state.note, "warn");
})();
