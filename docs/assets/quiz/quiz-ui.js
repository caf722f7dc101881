/* 模拟面试页面的共用部分：DOM 小工具、题库（页面上的索引，题目内容按需载入）、FSRS 进度（localStorage）、自评按钮。
 *
 * Everything the user types, and everything read from an imported file, reaches the page through
 * textContent only; the one innerHTML is the answers' HTML, which the site build rendered from its
 * own pages. Exposed as window.QuizUI; quiz.js, quiz-drill.js and quiz-progress.js use it.
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
  /** Text with `backticks` shown as code, built from text nodes only. */
  function codeText(text) {
    var span = el("span");
    String(text).split("`").forEach(function (part, i) { span.appendChild(i % 2 ? el("code", { text: part }) : document.createTextNode(part)); });
    return span;
  }

  // ---- the bank: an index on the page; each item's answers, code and prompt load before it is shown ----
  // The page carries what the pickers, the due counts and the progress table read (verify/site/quiz.py:
  // INDEX_FIELDS); each item names its part, a script the build wrote (bank.parts: name -> path) that
  // hands the rest of its items to arrive(). An item without a part is whole already.
  var bankNode = document.getElementById("quiz-bank");
  var bank = bankNode ? JSON.parse(bankNode.textContent) : { questions: [], drills: [], tags: [] };
  bank.drills = bank.drills || [];
  bank.objective = bank.objective || [];
  bank.parts = bank.parts || {};
  var byId = {};
  bank.questions.forEach(function (q) { byId[q.id] = q; });
  bank.drills.forEach(function (d) { byId[d.id] = d; });
  bank.objective.forEach(function (o) { byId[o.id] = o; });
  var base = "..";
  try { base = JSON.parse(document.getElementById("__config").textContent).base || base; } catch (e) { /* default */ }
  function href(url) { return /^[a-z]+:/.test(url) ? url : base.replace(/\/$/, "") + "/" + url; }

  var arrived = {}, loading = {};
  /** Called by a part's script: its items completed in place (the lists and the tabs keep the same objects). */
  function arrive(name, items) {
    ["questions", "drills", "objective"].forEach(function (kind) {
      (items[kind] || []).forEach(function (item) {
        if (byId[item.id]) Object.assign(byId[item.id], item);
        else { bank[kind].push(item); byId[item.id] = item; }
      });
    });
    arrived[name] = true;
  }
  function loadPart(name) {
    if (!loading[name]) {
      loading[name] = new Promise(function (resolve, reject) {
        var path = bank.parts[name];
        var script = el("script", { src: href(path) });
        function failed() { delete loading[name]; reject(new Error(path)); }  // the next try loads it again
        script.onload = function () { script.remove(); if (arrived[name]) resolve(); else failed(); };
        script.onerror = function () { script.remove(); failed(); };
        document.head.appendChild(script);
      });
    }
    return loading[name];
  }
  /** The parts ``items`` still need, by name. */
  function missing(items) {
    var names = [];
    items.forEach(function (item) {
      var name = item.part;
      if (name && bank.parts[name] && !arrived[name] && names.indexOf(name) < 0) names.push(name);
    });
    return names;
  }
  var LOADING = "正在载入题目…";
  function loadFailed(path) {
    return "题目没有载入：" + path + " 读取失败（网络断了，或站点文件不全）。请检查网络后再试一次，或刷新页面。";
  }
  /** Run ``then`` once every item of ``items`` is whole: at once when it is, else after its parts load,
   *  saying so meanwhile; a part that fails to load is said in the status line, and ``then`` does not run.
   *  ``onFail`` (optional) is called after a failure too. */
  function whenWhole(items, then, onFail) {
    var names = missing(items);
    if (!names.length) { then(); return; }
    if (window.QuizUI.say) window.QuizUI.say(LOADING);
    Promise.all(names.map(loadPart)).then(function () {
      if (window.QuizUI.say) window.QuizUI.say("");
      then();
    }, function (err) {
      if (window.QuizUI.say) window.QuizUI.say(loadFailed(err.message), "error");
      if (onFail) onFail(err);
    });
  }
  /** Start loading what ``items`` need, without waiting (a tab about to be used); a failure is said when they are asked for. */
  function prefetch(items) { missing(items).forEach(function (name) { loadPart(name).catch(function () { /* said when asked */ }); }); }

  // ---- progress: FSRS cards in localStorage -----------------------------------------------
  var F = window.FSRS;
  var scheduler = F.fsrs({ enable_fuzz: false });
  var Core = window.QuizCore;
  Core.setProgressRules(bank.progress_rules);  // the progress file's schema, from verify/quiz/progress_file.py
  Core.setFindRules(bank.find_rules);  // how a key point's words are found in an answer, from verify/quiz/scoring.py
  function emptyProgress() { return { version: 1, cards: {}, log: [] }; }
  function load() {
    var raw = window.localStorage.getItem(STORE_KEY);
    if (raw == null) return { progress: emptyProgress(), note: null };
    var why;
    try { why = Core.validateProgress(JSON.parse(raw)); } catch (err) { why = "不是合法的 JSON"; }
    if (!why) return { progress: JSON.parse(raw), note: null };
    try { window.localStorage.setItem(STORE_KEY + ":corrupt", raw); } catch (err) { /* the note says it */ }
    return { progress: emptyProgress(), note: "本地进度无法读取（" + why + "），已另存为 " + STORE_KEY + ":corrupt，并重新开始。" };
  }
  var loaded = load();
  var state = { progress: loaded.progress, note: loaded.note, timer: null, unsaved: false };
  var FULL = "浏览器拒绝保存进度（本站的存储空间已满）：本页的练习还在，但关闭或刷新页面就会丢失。请先「导出进度」备份，" +
    "或清掉本站的其他数据。";
  /** Show or hide the warning that progress is only in this page (it stays until a save succeeds). */
  function warnUnsaved(on) {
    var app = document.getElementById("quiz-app"), banner = document.getElementById("quiz-unsaved");
    state.unsaved = on;
    if (!on) { if (banner) banner.remove(); return; }
    if (!banner && app) {
      banner = el("p", { id: "quiz-unsaved", cls: "quiz-unsaved", role: "alert", text: FULL });
      app.insertBefore(banner, app.firstChild);
    }
  }
  /** Write ``progress`` (default: the page's) to localStorage; false, with the warning shown, when the
   *  browser refuses (its quota): what it kept before is left as it was. */
  function save(progress) {
    try {
      window.localStorage.setItem(STORE_KEY, JSON.stringify(progress || state.progress));
    } catch (err) {  // QuotaExceededError, or storage switched off
      warnUnsaved(true);
      return false;
    }
    warnUnsaved(false);
    return true;
  }
  function cardOf(id) {
    var c = state.progress.cards[id];
    return c ? F.TypeConvert.card(c) : F.createEmptyCard(new Date());
  }
  function isDue(id) { var c = state.progress.cards[id]; return !!c && Date.parse(c.due) <= Date.now(); }
  function rate(id, grade, extra) {
    var now = new Date();
    var rec = scheduler.next(cardOf(id), now, grade);
    state.progress.cards[id] = JSON.parse(JSON.stringify(rec.card));
    state.progress.log.push(Object.assign({ id: id, rating: grade, at: now.toISOString() }, extra || {}));
    save();
    return rec.card;
  }
  /** Due first (most overdue first), then never seen, then the rest: as the terminal picks. */
  function pick(items, n, dueOnly) {
    var due = items.filter(function (q) { return isDue(q.id); })
      .sort(function (a, b) { return Date.parse(state.progress.cards[a.id].due) - Date.parse(state.progress.cards[b.id].due); });
    if (dueOnly) return due.slice(0, n);
    var fresh = shuffle(items.filter(function (q) { return !state.progress.cards[q.id]; }));
    var rest = shuffle(items.filter(function (q) { return state.progress.cards[q.id] && !isDue(q.id); }));
    return due.concat(fresh, rest).slice(0, n);
  }

  /** When a card rated ``grade`` now would be due again. */
  function previewDue(id, grade) { return scheduler.repeat(cardOf(id), new Date())[grade].card.due; }

  function ratingBar(id, done, suggested) {
    var preview = scheduler.repeat(cardOf(id), new Date());
    var bar = el("div", { cls: "quiz-rating" }, el("span", { text: "自评：" }));
    RATINGS.forEach(function (r) {
      var due = preview[r.grade].card.due;
      bar.appendChild(el("button", { type: "button", cls: "md-button rate-" + r.en.toLowerCase() + (r.grade === suggested ? " suggested" : ""),
        "data-grade": String(r.grade),
        onclick: function () { Array.prototype.forEach.call(bar.querySelectorAll("button"), function (b) { b.disabled = true; }); done(r.grade); } },
        r.label, el("small", { text: fmtDue(due) + "后" })));
    });
    return bar;
  }

  /** The rating bar after an item with one right answer (a drill, a 判断题 or 计算题): 良好 suggested
   *  when it was right, 重来 when not; the round goes on once it is rated. */
  function checkedRating(session, item, right) {
    return ratingBar(item.id, function (grade) {
      session.rows.push({ q: item, grade: grade, right: right });
      rate(item.id, grade, { correct: right });
      window.QuizUI.next(session);
    }, right ? 3 : 1);
  }

  window.QuizUI = { el: el, clear: clear, clock: clock, pct: pct, shuffle: shuffle, fmtDue: fmtDue, codeText: codeText,
                    bank: bank, byId: byId, href: href, arrive: arrive, missing: missing, whenWhole: whenWhole,
                    prefetch: prefetch, state: state, save: save, emptyProgress: emptyProgress,
                    cardOf: cardOf, isDue: isDue, rate: rate, pick: pick, ratingBar: ratingBar, previewDue: previewDue,
                    checkedRating: checkedRating,
                    RATINGS: RATINGS, STATE_NAMES: STATE_NAMES, views: {} };
})();
