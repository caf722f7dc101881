/* 模拟面试 / 闪卡 / 进度：plain JavaScript, no network.
 *
 * The bank is inlined in the page (<script type="application/json" id="quiz-bank">), scheduling is
 * ts-fsrs (vendored beside this file), progress lives in localStorage. Everything the user types,
 * and everything read from an imported file, reaches the page through textContent only; the one
 * innerHTML is the answers' HTML, which the site build rendered from its own pages.
 */
(function () {
  "use strict";

  var STORE_KEY = "verify-quiz:v1";
  var RATINGS = [
    { grade: 1, label: "重来", en: "Again" },
    { grade: 2, label: "困难", en: "Hard" },
    { grade: 3, label: "良好", en: "Good" },
    { grade: 4, label: "简单", en: "Easy" },
  ];
  var STATE_NAMES = ["新卡", "学习中", "复习", "重学"];

  // ---- small DOM helpers (text only) -------------------------------------------------------
  function el(tag, attrs) {
    var node = document.createElement(tag);
    var a = attrs || {};
    Object.keys(a).forEach(function (k) {
      if (k === "text") node.textContent = a[k];
      else if (k === "cls") node.className = a[k];
      else if (k.slice(0, 2) === "on") node.addEventListener(k.slice(2), a[k]);
      else node.setAttribute(k, a[k]);
    });
    for (var i = 2; i < arguments.length; i++) {
      var c = arguments[i];
      if (c == null || c === false) continue;
      node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    }
    return node;
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
  function clock(seconds) {
    var s = Math.max(0, Math.floor(Math.abs(seconds)));
    return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
  }
  function pct(x) { return Math.round(x * 100) + "%"; }
  function shuffle(list) {
    for (var i = list.length - 1; i > 0; i--) {
      var j = Math.floor(Math.random() * (i + 1));
      var t = list[i]; list[i] = list[j]; list[j] = t;
    }
    return list;
  }
  function fmtDue(date) {
    var mins = Math.round((date.getTime() - Date.now()) / 60000);
    if (mins < 60) return Math.max(1, mins) + " 分钟";
    if (mins < 60 * 24) return Math.round(mins / 60) + " 小时";
    return Math.round(mins / 1440) + " 天";
  }

  // ---- scoring: the same rule as verify/quiz/scoring.py ------------------------------------
  var WORD = /[0-9a-z_]/;
  var CJK = /[\u3400-\u9fff\uf900-\ufaff]/;
  var segmenter = (typeof Intl !== "undefined" && Intl.Segmenter) ? new Intl.Segmenter("zh", { granularity: "word" }) : null;

  function normalize(s) { return String(s).normalize("NFKC").toLowerCase(); }
  function isWord(ch) { return WORD.test(ch); }
  function boundaries(text) {
    var b = new Set([0, text.length]);
    if (!segmenter) { for (var i = 0; i <= text.length; i++) b.add(i); return b; }
    for (const seg of segmenter.segment(text)) {
      b.add(seg.index); b.add(seg.index + seg.segment.length);
      // a long Chinese word is usually a compound (共享内存): its inner positions count too,
      // as jieba's search mode yields the shorter words inside it
      if (seg.segment.length >= 3 && CJK.test(seg.segment)) {
        for (var k = 1; k < seg.segment.length; k++) b.add(seg.index + k);
      }
    }
    return b;
  }
  function pattern(v) {
    var parts = [], prev = "";
    for (const ch of v) {
      if (/\s/.test(ch)) { if (parts.length && parts[parts.length - 1] !== "\\s*") parts.push("\\s*"); prev = ""; continue; }
      if (prev && isWord(prev) !== isWord(ch) && parts[parts.length - 1] !== "\\s*") parts.push("\\s*");
      parts.push(ch.replace(/[.*+?^${}()|[\]\\\/-]/g, "\\$&"));
      prev = ch;
    }
    return new RegExp(parts.join(""), "g");
  }
  function spans(variant, text, bounds) {
    var v = normalize(variant).trim(), out = [];
    if (!v) return out;
    var re = pattern(v), m;
    while ((m = re.exec(text)) !== null) {
      var s = m.index, e = s + m[0].length;
      if (m[0].length === 0) { re.lastIndex++; continue; }
      var left = isWord(v[0]) ? (s === 0 || !isWord(text[s - 1])) : bounds.has(s);
      var right = isWord(v[v.length - 1])
        ? (e === text.length || !isWord(text[e]) || (text[e] === "s" && (e + 1 === text.length || !isWord(text[e + 1]))))
        : bounds.has(e);
      if (left && right) out.push([s, e]);
      re.lastIndex = s + 1;
    }
    return out;
  }
  function variantsOf(kp, kw) { return [kw].concat((kp.synonyms || {})[kw] || []); }
  function score(answer, keyPoints) {
    var text = normalize(answer);
    var bounds = boundaries(text);
    var found = [];  // [start, end, keyword, variant] over every key point
    keyPoints.forEach(function (kp) {
      kp.keywords.forEach(function (kw) {
        variantsOf(kp, kw).forEach(function (v) {
          spans(v, text, bounds).forEach(function (sp) { found.push([sp[0], sp[1], kw, v]); });
        });
      });
    });
    // a longer keyword ending at the same place adds a prefix, in Chinese usually a negation (零拷贝)
    function shadowed(s, e) { return found.some(function (f) { return f[0] < s && f[1] === e; }); }
    var points = keyPoints.map(function (kp) {
      var hits = {}, n = 0;
      kp.keywords.forEach(function (kw) {
        hits[kw] = null;
        var vs = variantsOf(kp, kw);
        for (var i = 0; i < vs.length && hits[kw] === null; i++) {
          if (found.some(function (f) { return f[2] === kw && f[3] === vs[i] && !shadowed(f[0], f[1]); })) hits[kw] = vs[i];
        }
        if (hits[kw] !== null) n++;
      });
      var fraction = n / kp.keywords.length;
      return { point: kp.point, hits: hits, fraction: fraction,
               status: fraction === 1 ? "covered" : (fraction > 0 ? "partial" : "missed") };
    });
    var coverage = points.length ? points.reduce(function (a, p) { return a + p.fraction; }, 0) / points.length : 0;
    return { coverage: coverage, points: points };
  }

  // ---- progress: FSRS cards in localStorage -----------------------------------------------
  var F = window.FSRS;
  var scheduler = F.fsrs({ enable_fuzz: false });

  function isDate(v) { return typeof v === "string" && !isNaN(Date.parse(v)); }
  function isNum(v) { return typeof v === "number" && isFinite(v); }
  /** Why ``obj`` is not a progress file, or null when it is one. */
  function validateProgress(obj) {
    if (!obj || typeof obj !== "object" || Array.isArray(obj)) return "不是一个 JSON 对象";
    if (obj.version !== 1) return "version 必须是 1";
    if (!obj.cards || typeof obj.cards !== "object" || Array.isArray(obj.cards)) return "缺少 cards 对象";
    var ids = Object.keys(obj.cards);
    for (var i = 0; i < ids.length; i++) {
      var c = obj.cards[ids[i]], where = "cards." + ids[i];
      if (!c || typeof c !== "object") return where + " 不是对象";
      if (!isDate(c.due)) return where + ".due 不是日期";
      if (c.last_review != null && !isDate(c.last_review)) return where + ".last_review 不是日期";
      var nums = ["stability", "difficulty", "elapsed_days", "scheduled_days", "learning_steps", "reps", "lapses"];
      for (var j = 0; j < nums.length; j++) if (!isNum(c[nums[j]]) || c[nums[j]] < 0) return where + "." + nums[j] + " 不是非负数";
      if ([0, 1, 2, 3].indexOf(c.state) < 0) return where + ".state 必须是 0..3";
    }
    if (!Array.isArray(obj.log)) return "缺少 log 数组";
    for (var k = 0; k < obj.log.length; k++) {
      var r = obj.log[k];
      if (!r || typeof r.id !== "string" || [1, 2, 3, 4].indexOf(r.rating) < 0 || !isDate(r.at)) return "log[" + k + "] 格式不对";
    }
    return null;
  }
  function emptyProgress() { return { version: 1, cards: {}, log: [] }; }
  function loadProgress() {
    var raw = window.localStorage.getItem(STORE_KEY);
    if (raw == null) return { progress: emptyProgress(), note: null };
    try {
      var obj = JSON.parse(raw), why = validateProgress(obj);
      if (!why) return { progress: obj, note: null };
      throw new Error(why);
    } catch (err) {
      window.localStorage.setItem(STORE_KEY + ":corrupt", raw);
      return { progress: emptyProgress(), note: "本地进度无法读取（" + err.message + "），已另存为 " + STORE_KEY + ":corrupt，并重新开始。" };
    }
  }
  function saveProgress() { window.localStorage.setItem(STORE_KEY, JSON.stringify(progress)); }
  function cardOf(id) {
    var c = progress.cards[id];
    return c ? F.TypeConvert.card(c) : F.createEmptyCard(new Date());
  }
  function isDue(id) { var c = progress.cards[id]; return !!c && Date.parse(c.due) <= Date.now(); }
  function rate(id, grade, extra) {
    var now = new Date();
    var rec = scheduler.next(cardOf(id), now, grade);
    progress.cards[id] = JSON.parse(JSON.stringify(rec.card));
    progress.log.push(Object.assign({ id: id, rating: grade, at: now.toISOString() }, extra || {}));
    saveProgress();
    return rec.card;
  }

  // ---- state --------------------------------------------------------------------------------
  var bankNode = document.getElementById("quiz-bank");
  var root = document.getElementById("quiz-app");
  if (!bankNode || !root) return;
  var bank = JSON.parse(bankNode.textContent);
  var byId = {};
  bank.questions.forEach(function (q) { byId[q.id] = q; });
  var base = "..";
  try { base = JSON.parse(document.getElementById("__config").textContent).base || base; } catch (e) { /* default */ }
  function href(url) { return base.replace(/\/$/, "") + "/" + url; }

  var loaded = loadProgress();
  var progress = loaded.progress;
  var timer = null;

  var status = el("div", { cls: "quiz-status", role: "status", "aria-live": "polite" });
  function say(text, kind) { status.textContent = text || ""; status.className = "quiz-status" + (kind ? " " + kind : ""); }

  var tabs = el("div", { cls: "quiz-tabs", role: "tablist" });
  var view = el("div", { cls: "quiz-view" });
  root.appendChild(tabs); root.appendChild(status); root.appendChild(view);
  [["mock", "模拟面试"], ["cards", "闪卡"], ["progress", "进度"]].forEach(function (t) {
    tabs.appendChild(el("button", { type: "button", role: "tab", "data-tab": t[0], text: t[1], onclick: function () { show(t[0]); } }));
  });
  function show(tab) {
    if (timer) { clearInterval(timer); timer = null; }
    Array.prototype.forEach.call(tabs.children, function (b) { b.setAttribute("aria-selected", String(b.dataset.tab === tab)); });
    clear(view);
    say("");
    ({ mock: setupView, cards: setupView, progress: progressView })[tab](tab);
  }

  // ---- selection ----------------------------------------------------------------------------
  function pick(opts) {
    var pool = bank.questions.filter(function (q) {
      return (!opts.tag || q.tags.indexOf(opts.tag) >= 0) && (!opts.maxDifficulty || q.difficulty <= opts.maxDifficulty);
    });
    var due = pool.filter(function (q) { return isDue(q.id); })
      .sort(function (a, b) { return Date.parse(progress.cards[a.id].due) - Date.parse(progress.cards[b.id].due); });
    if (opts.dueOnly) return due.slice(0, opts.n);
    var fresh = shuffle(pool.filter(function (q) { return !progress.cards[q.id]; }));
    var rest = shuffle(pool.filter(function (q) { return progress.cards[q.id] && !isDue(q.id); }));
    return due.concat(fresh, rest).slice(0, opts.n);
  }

  function setupView(mode) {
    var n = el("input", { type: "number", min: "1", max: String(bank.questions.length), value: String(Math.min(5, bank.questions.length)), name: "n" });
    var tag = el("select", { name: "tag" }, el("option", { value: "", text: "全部标签" }));
    bank.tags.forEach(function (t) { tag.appendChild(el("option", { value: t, text: t })); });
    var diff = el("select", { name: "difficulty" }, el("option", { value: "", text: "全部难度" }));
    [1, 2, 3, 4, 5].forEach(function (d) { diff.appendChild(el("option", { value: String(d), text: "难度 ≤ " + d })); });
    var limit = el("input", { type: "number", min: "30", step: "30", value: "180", name: "seconds" });
    var dueOnly = el("input", { type: "checkbox", name: "due" });
    var dueCount = bank.questions.filter(function (q) { return isDue(q.id); }).length;
    var form = el("form", { cls: "quiz-setup" },
      el("label", {}, "题数 ", n), el("label", {}, tag), el("label", {}, diff),
      mode === "mock" ? el("label", {}, "每题限时（秒） ", limit) : null,
      el("label", {}, dueOnly, " 只练到期的（" + dueCount + " 张）"),
      el("button", { type: "submit", cls: "md-button md-button--primary", text: mode === "mock" ? "开始模拟面试" : "开始闪卡" }));
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var list = pick({ n: Math.max(1, parseInt(n.value, 10) || 1), tag: tag.value,
                        maxDifficulty: parseInt(diff.value, 10) || 0, dueOnly: dueOnly.checked });
      if (!list.length) { say(dueOnly.checked ? "没有到期的卡片。" : "没有符合条件的题目。", "warn"); return; }
      var session = { mode: mode, list: list, i: 0, rows: [], seconds: Math.max(10, parseInt(limit.value, 10) || 180) };
      (mode === "mock" ? askQuestion : flashcard)(session);
    });
    view.appendChild(el("p", { cls: "quiz-intro", text: "题库共 " + bank.questions.length + " 题。" }));
    view.appendChild(form);
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
    clear(view); say("");
    var started = Date.now();
    var timeEl = el("div", { cls: "quiz-timer", "data-testid": "timer", text: clock(session.seconds) });
    var answer = el("textarea", { cls: "quiz-answer", rows: "8", placeholder: "用自己的话回答，像在面试里说的一样……", "aria-label": "你的回答" });
    var submit = el("button", { type: "button", cls: "md-button md-button--primary", text: "提交回答" });
    view.appendChild(header(session, q));
    view.appendChild(el("h2", { cls: "quiz-question", text: q.question }));
    view.appendChild(timeEl);
    view.appendChild(answer);
    view.appendChild(submit);
    function tick() {
      var left = session.seconds - (Date.now() - started) / 1000;
      timeEl.textContent = left >= 0 ? "剩余 " + clock(left) : "超时 +" + clock(-left);
      timeEl.classList.toggle("over", left < 0);
    }
    tick();
    timer = setInterval(tick, 250);
    answer.focus();
    submit.addEventListener("click", function () {
      clearInterval(timer); timer = null;
      var took = (Date.now() - started) / 1000;
      answer.readOnly = true; submit.disabled = true;
      timeEl.textContent = "用时 " + clock(took) + (took > session.seconds ? "（超时）" : "");
      followUp(session, q, answer.value, took);
    });
  }

  function followUp(session, q, answer, took) {
    var fu = q.follow_ups[Math.floor(Math.random() * q.follow_ups.length)];
    var reply = el("textarea", { cls: "quiz-answer", rows: "5", placeholder: "回答追问……", "aria-label": "追问的回答" });
    var reveal = el("button", { type: "button", cls: "md-button md-button--primary", text: "揭晓答案" });
    var box = el("section", { cls: "quiz-followup" }, el("h3", { text: "追问" }), el("p", { cls: "quiz-fu-q", text: fu.q }), reply, reveal);
    view.appendChild(box);
    reply.focus();
    reveal.addEventListener("click", function () {
      reply.readOnly = true; reveal.disabled = true;
      var result = score(answer + "\n" + reply.value, q.key_points);
      view.appendChild(revealView(q, result, fu));
      view.appendChild(ratingBar(q, function (grade) {
        session.rows.push({ q: q, coverage: result.coverage, seconds: took, grade: grade, result: result });
        rate(q.id, grade, { coverage: Math.round(result.coverage * 1000) / 1000, seconds: Math.round(took) });
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
    return el("div", { cls: "quiz-answers" }, ordinary, better);
  }
  function links(q) {
    return el("p", { cls: "quiz-links" }, el("a", { href: href(q.url), text: "打开题目页面" }), " · ",
      el("a", { href: href(q.evidence_url), text: "查看证据（" + q.claims.length + " 条可执行的结论）" }));
  }

  function revealView(q, result, fu) {
    var list = el("ul", { cls: "quiz-points" });
    result.points.forEach(function (p) {
      var hit = Object.keys(p.hits).filter(function (k) { return p.hits[k] !== null; })
        .map(function (k) { return p.hits[k] === k ? k : k + "（" + p.hits[k] + "）"; });
      var miss = Object.keys(p.hits).filter(function (k) { return p.hits[k] === null; });
      list.appendChild(el("li", { cls: "quiz-point " + p.status },
        el("span", { cls: "mark", text: { covered: "✓ 覆盖", partial: "◐ 部分", missed: "✗ 遗漏" }[p.status] }),
        el("span", { cls: "text", text: p.point }),
        el("span", { cls: "kw", text: (hit.length ? "命中：" + hit.join("、") : "") + (hit.length && miss.length ? "；" : "") + (miss.length ? "遗漏：" + miss.join("、") : "") })));
    });
    return el("section", { cls: "quiz-reveal" },
      el("h3", { cls: "quiz-score", "data-testid": "score", text: "考察点覆盖率 " + pct(result.coverage) }),
      list,
      answersView(q),
      el("div", { cls: "quiz-fu-a" }, el("h3", { text: "追问参考" }), el("p", { cls: "quiz-fu-q", text: fu.q }), el("p", { text: fu.a })),
      links(q));
  }

  function ratingBar(q, done) {
    var preview = scheduler.repeat(cardOf(q.id), new Date());
    var bar = el("div", { cls: "quiz-rating" }, el("span", { text: "自评：" }));
    RATINGS.forEach(function (r) {
      var due = preview[r.grade].card.due;
      bar.appendChild(el("button", { type: "button", cls: "md-button rate-" + r.en.toLowerCase(), "data-grade": String(r.grade),
        onclick: function () { Array.prototype.forEach.call(bar.querySelectorAll("button"), function (b) { b.disabled = true; }); done(r.grade); } },
        r.label + " " + r.en, el("small", { text: fmtDue(due) + "后" })));
    });
    return bar;
  }

  function next(session) {
    session.i += 1;
    if (session.i < session.list.length) (session.mode === "mock" ? askQuestion : flashcard)(session);
    else summary(session);
  }

  function summary(session) {
    clear(view);
    var mock = session.mode === "mock";
    view.appendChild(el("h2", { text: "本轮小结" }));
    var table = el("table", { cls: "quiz-summary" },
      el("thead", {}, el("tr", {}, el("th", { text: "题目" }), mock ? el("th", { text: "覆盖率" }) : null,
        mock ? el("th", { text: "用时" }) : null, el("th", { text: "自评" }), el("th", { text: "下次复习" }))));
    var body = el("tbody");
    session.rows.forEach(function (r) {
      var rating = RATINGS[r.grade - 1];
      body.appendChild(el("tr", {}, el("td", {}, el("a", { href: href(r.q.url), text: r.q.title })),
        mock ? el("td", { text: pct(r.coverage) }) : null, mock ? el("td", { text: clock(r.seconds) }) : null,
        el("td", { text: rating.label }), el("td", { text: fmtDue(new Date(progress.cards[r.q.id].due)) + "后" })));
    });
    table.appendChild(body);
    view.appendChild(table);
    if (mock) {
      var weak = [];
      session.rows.forEach(function (r) { r.result.points.forEach(function (p) { if (p.fraction < 1) weak.push({ p: p, q: r.q }); }); });
      weak.sort(function (a, b) { return a.p.fraction - b.p.fraction; });
      view.appendChild(el("h3", { text: "最薄弱的考察点" }));
      if (!weak.length) view.appendChild(el("p", { text: "所有考察点都覆盖到了。" }));
      var ul = el("ul", { cls: "quiz-weak" });
      weak.slice(0, 6).forEach(function (w) {
        ul.appendChild(el("li", {}, el("strong", { text: pct(w.p.fraction) + " " }), w.p.point, " → ", el("a", { href: href(w.q.url), text: w.q.title })));
      });
      view.appendChild(ul);
    }
    view.appendChild(el("button", { type: "button", cls: "md-button md-button--primary", text: "再来一轮", onclick: function () { show(session.mode); } }));
  }

  // ---- flashcards -------------------------------------------------------------------------
  function flashcard(session) {
    var q = session.list[session.i];
    clear(view); say("");
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
      view.appendChild(ratingBar(q, function (grade) {
        session.rows.push({ q: q, grade: grade });
        rate(q.id, grade);
        next(session);
      }));
    });
  }

  // ---- progress: table, export, import, reset ----------------------------------------------
  function progressView() {
    var table = el("table", { cls: "quiz-progress" },
      el("thead", {}, el("tr", {}, el("th", { text: "题目" }), el("th", { text: "状态" }), el("th", { text: "下次复习" }),
        el("th", { text: "复习次数" }), el("th", { text: "遗忘次数" }))));
    var body = el("tbody");
    bank.questions.forEach(function (q) {
      var c = progress.cards[q.id];
      body.appendChild(el("tr", { "data-id": q.id }, el("td", {}, el("a", { href: href(q.url), text: q.title })),
        el("td", { text: c ? STATE_NAMES[c.state] : "未练" }),
        el("td", { text: c ? (isDue(q.id) ? "已到期" : fmtDue(new Date(c.due)) + "后") : "-" }),
        el("td", { text: c ? String(c.reps) : "0" }), el("td", { text: c ? String(c.lapses) : "0" })));
    });
    table.appendChild(body);
    view.appendChild(el("p", { text: "已练 " + Object.keys(progress.cards).length + " / " + bank.questions.length + " 题，共 " + progress.log.length + " 次自评。" }));
    view.appendChild(table);

    var file = el("input", { type: "file", accept: "application/json,.json", "aria-label": "导入进度文件", cls: "quiz-import" });
    file.addEventListener("change", function () {
      var f = file.files && file.files[0];
      if (!f) return;
      f.text().then(function (text) {
        var obj;
        try { obj = JSON.parse(text); } catch (e) { say("导入失败：文件不是合法的 JSON。现有进度未改动。", "error"); return; }
        var why = validateProgress(obj);
        if (why) { say("导入失败：" + why + "。现有进度未改动。", "error"); return; }
        progress = obj; saveProgress();
        clear(view); progressView();
        say("已导入 " + Object.keys(obj.cards).length + " 张卡片的进度。", "ok");
      });
      file.value = "";
    });
    var exportBtn = el("button", { type: "button", cls: "md-button", text: "导出进度（JSON）", onclick: function () {
      var blob = new Blob([JSON.stringify(progress, null, 1)], { type: "application/json" });
      var a = el("a", { href: URL.createObjectURL(blob), download: "quiz-progress-" + new Date().toISOString().slice(0, 10) + ".json" });
      document.body.appendChild(a); a.click(); a.remove();
      setTimeout(function () { URL.revokeObjectURL(a.href); }, 1000);
    } });
    var resetBtn = el("button", { type: "button", cls: "md-button quiz-reset", text: "清空进度", onclick: function () {
      if (!window.confirm("确定清空本浏览器里的全部练习进度？此操作不能撤销（可先导出备份）。")) return;
      progress = emptyProgress(); saveProgress();
      clear(view); progressView();
      say("进度已清空。", "ok");
    } });
    view.appendChild(el("div", { cls: "quiz-io" }, exportBtn, el("label", { cls: "md-button" }, "导入进度…", file), resetBtn));
  }

  window.__quiz = { score: score, validateProgress: validateProgress };  // for the browser tests
  show("mock");
  if (loaded.note) say(loaded.note, "warn");
})();
