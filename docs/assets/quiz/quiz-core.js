/* 模拟面试的规则（无 DOM）：考察点打分、预测输出的判定、进度文件的校验与合并。
 *
 * The same rules as verify/quiz/scoring.py, verify/quiz/drillcheck.py and verify/quiz/transfer.py
 * (the tests compare them on the same answers); Chinese is segmented with Intl.Segmenter where the
 * terminal uses jieba. Exposed as window.QuizCore.
 */
(function () {
  "use strict";

  // ---- scoring -------------------------------------------------------------------------------
  var WORD = /[0-9a-z_]/;
  var CJK = /[\u3400-\u9fff\uf900-\ufaff]/;
  var NEGATIONS = "不没未无非别";
  var CLAUSE_BREAKS = "，,。；;！!？?：:、\n";
  var LIST_SHARE = 0.2, LIST_WEIGHT = 0.5;
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
  function negated(text, start) {
    var seen = 0;
    for (var i = start - 1; i >= 0 && seen < 2; i--) {
      var ch = text[i];
      if (CLAUSE_BREAKS.indexOf(ch) >= 0) return false;
      if (!/\s/.test(ch)) { if (NEGATIONS.indexOf(ch) >= 0) return true; seen++; }
    }
    return false;
  }
  function spans(variant, text, bounds, guard) {
    var v = normalize(variant).trim(), out = [];
    if (!v) return out;
    var re = pattern(v), m;
    while ((m = re.exec(text)) !== null) {
      var s = m.index, e = s + m[0].length;
      if (m[0].length === 0) { re.lastIndex++; continue; }
      var left = isWord(v[0]) ? (s === 0 || !isWord(text[s - 1])) : bounds.has(s);
      var right = !isWord(v[v.length - 1]) ||
        (e === text.length || !isWord(text[e]) || (text[e] === "s" && (e + 1 === text.length || !isWord(text[e + 1]))));
      if (left && right && (guard === false || NEGATIONS.indexOf(v[0]) >= 0 || !negated(text, s))) out.push([s, e]);
      re.lastIndex = s + 1;
    }
    return out;
  }
  function clauses(text) {
    var out = [], start = 0;
    for (var i = 0; i < text.length; i++) {
      if (CLAUSE_BREAKS.indexOf(text[i]) >= 0) { if (i > start) out.push([start, i]); start = i + 1; }
    }
    if (text.length > start) out.push([start, text.length]);
    return out;
  }
  var QUOTES = { "“": "”", "「": "」", "『": "』", "‘": "’", '"': '"' };
  function quoted(text) {
    var out = [], start = 0, close = null;
    for (var i = 0; i < text.length; i++) {
      var ch = text[i];
      if (close === null && QUOTES[ch]) { start = i; close = QUOTES[ch]; } else if (close !== null && ch === close) { out.push([start, i + 1]); close = null; }
    }
    if (close !== null) out.push([start, text.length]);
    return out;
  }
  /** A part of a contradicts statement and what else says it: every variant of the keyword it is. */
  function paraphrases(part, kp) {
    if (!kp) return [part];
    for (var i = 0; i < kp.keywords.length; i++) {
      var vs = variantsOf(kp, kp.keywords[i]).map(function (v) { return normalize(v).trim(); });
      if (vs.indexOf(part) >= 0) return [part].concat(vs).filter(function (v, j, a) { return a.indexOf(v) === j; });
    }
    return [part];
  }
  function contradiction(statement, text, bounds, kp) {
    var parts = normalize(statement).trim().split(/\s+/).filter(Boolean);
    if (!parts.length) return null;
    // the first part must not be negated; the others may follow the statement's own negation
    // (「print 不会 断图」), but no negation may stand between two parts
    var quotes = quoted(text), found = {};
    parts.forEach(function (p, k) {
      var key = (k === 0) + "|" + p;
      if (found[key]) return;
      var all = [];
      paraphrases(p, kp).forEach(function (alt) {
        spans(alt, text, bounds, k === 0).forEach(function (sp) {
          if (!quotes.some(function (q) { return q[0] <= sp[0] && sp[0] < q[1]; })) all.push(sp);
        });
      });
      all.sort(function (a, b) { return a[0] - b[0] || a[1] - b[1]; });
      found[key] = all;
    });
    var cl = clauses(text);
    for (var c = 0; c < cl.length; c++) {
      var pos = cl[c][0], ce = cl[c][1], first = null, ok = true;
      for (var k = 0; k < parts.length; k++) {
        var hit = found[(k === 0) + "|" + parts[k]].find(function (sp) { return sp[0] >= pos && sp[1] <= ce; });
        if (!hit) { ok = false; break; }
        if (first !== null) {
          var gap = text.slice(pos, hit[0]);
          if (Array.from(gap).some(function (ch) { return NEGATIONS.indexOf(ch) >= 0; })) { ok = false; break; }
        }
        if (first === null) first = hit[0];
        pos = hit[1];
      }
      if (ok) return [first === null ? cl[c][0] : first, pos];
    }
    return null;
  }
  function units(s) { return (s.match(/[\u3400-\u9fff\uf900-\ufaff]|[0-9a-z_]+/g) || []).length; }
  function listSentences(text, covered) {
    var out = [], re = /[^。！？!?；;\n]+/g, m;
    while ((m = re.exec(text)) !== null) {
      var s = m.index, e = s + m[0].length, total = units(m[0]);
      if (!total) continue;
      var chars = Array.from({ length: e - s }, function (_, i) { return text[s + i]; });
      covered.forEach(function (c) { for (var i = Math.max(c[0], s); i < Math.min(c[1], e); i++) chars[i - s] = " "; });
      if (units(chars.join("")) < LIST_SHARE * total) out.push([s, e]);
    }
    return out;
  }
  function variantsOf(kp, kw) { return [kw].concat((kp.synonyms || {})[kw] || []); }

  function slice(answer, text, where) {
    return text.length === answer.length ? answer.slice(where[0], where[1]) : text.slice(where[0], where[1]);
  }
  /** An answer read against key points: text, boundaries, keyword places (shadowed ones left out), lists. */
  function read(answer, keyPoints) {
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
    // a longer variant ending at the same place adds a prefix, in Chinese usually a negation (零拷贝)
    var kept = found.filter(function (f) { return !found.some(function (g) { return g[0] < f[0] && g[1] === f[1]; }); });
    var lists = listSentences(text, found.map(function (f) { return [f[0], f[1]]; }));
    return {
      answer: answer, text: text, bounds: bounds, found: kept,
      places: function (kw, v) { return kept.filter(function (f) { return f[2] === kw && f[3] === v; }); },
      inList: function (pos) { return lists.some(function (l) { return l[0] <= pos && pos < l[1]; }); },
      contradicted: function (kp) {
        var said = null;
        (kp.contradicts || []).some(function (st) {
          var where = contradiction(st, text, bounds, kp);
          if (where) said = { statement: st, said: slice(answer, text, where) };
          return !!where;
        });
        return said;
      }
    };
  }

  /** The same result as verify.quiz.scoring.score(answer, key_points).to_dict(), plus fractions. */
  function score(answer, keyPoints) {
    var r = read(answer, keyPoints);
    var points = keyPoints.map(function (kp) {
      var hits = {}, weights = {}, sum = 0;
      kp.keywords.forEach(function (kw) {
        hits[kw] = null; weights[kw] = 0;
        variantsOf(kp, kw).forEach(function (v) {
          var places = r.places(kw, v);
          if (places.length && hits[kw] === null) hits[kw] = v;
          places.forEach(function (f) { weights[kw] = Math.max(weights[kw], r.inList(f[0]) ? LIST_WEIGHT : 1); });
        });
        sum += weights[kw];
      });
      var said = r.contradicted(kp);
      var fraction = said ? 0 : sum / kp.keywords.length;
      var listed = kp.keywords.filter(function (k) { return weights[k] > 0 && weights[k] < 1; });
      var status = said ? "contradicted" : (fraction === 1 ? "covered" : (fraction > 0 ? "partial" : "missed"));
      return { point: kp.point, hits: hits, fraction: fraction, status: status, listed: listed, contradicted: said };
    });
    var coverage = points.length ? points.reduce(function (a, p) { return a + p.fraction; }, 0) / points.length : 0;
    return { coverage: coverage, points: points };
  }

  // ---- the candidate judges: a suggested mark per key point (verify/quiz/scoring.py: suggest) ------
  var MARKS = { said: "说到了", missed: "没说到", wrong: "说错了" };
  var DENIALS = NEGATIONS + "错假";
  var NOT_NEGATING = ["非常", "不仅", "无论", "不断", "假设", "假定", "交错", "错位", "报错", "出错", "容错"];
  var GENERIC = "有是用需要会能必";
  var DIRECTIONS = "多少大小高低快慢粗细增减";
  var NOT_DIRECTIONS = ["大小", "多少", "多个", "很多", "许多", "大多", "最大值", "最小值"];
  function ownNegations(point) {
    var t = normalize(point), out = [];
    for (var i = 0; i < t.length - 1; i++) {
      if (NEGATIONS.indexOf(t[i]) >= 0 && t[i + 1].trim() && GENERIC.indexOf(t[i + 1]) < 0 &&
          out.indexOf(t.slice(i, i + 2)) < 0) out.push(t.slice(i, i + 2));
    }
    return out.sort();
  }
  /** The clause with blanks where a keyword stands, where ``words`` stand and where it asks A-not-A
   *  (有没有, 报不报错), each found in the clause as written (scoring.py: _masked). */
  function masked(text, cs, ce, covered, words) {
    var raw = text.slice(cs, ce), chars = raw.split(""), spans = [], m;
    var re = /(\S)[不没]\1/gu;
    while ((m = re.exec(raw)) !== null) spans.push([m.index, m.index + m[0].length]);
    words.forEach(function (w) {
      for (var i = raw.indexOf(w); i >= 0; i = raw.indexOf(w, i + w.length)) spans.push([i, i + w.length]);
    });
    covered.forEach(function (c) { if (c[0] < ce && c[1] > cs) spans.push([Math.max(c[0], cs) - cs, Math.min(c[1], ce) - cs]); });
    spans.forEach(function (sp) { for (var i = sp[0]; i < sp[1]; i++) chars[i] = " "; });
    return chars.join("");
  }
  /** Whether the clause denies, or compares in a direction the point does not name (scoring.py: _negation). */
  function negationIn(text, cs, ce, covered, allowed, point) {
    var clause = masked(text, cs, ce, covered, NOT_NEGATING.concat(allowed));
    if (Array.from(clause).some(function (ch) { return DENIALS.indexOf(ch) >= 0; })) return true;
    var named = normalize(point);
    clause = masked(text, cs, ce, covered, NOT_DIRECTIONS);
    return Array.from(clause).some(function (ch) { return DIRECTIONS.indexOf(ch) >= 0 && named.indexOf(ch) < 0; });
  }
  /** The same suggestions as verify.quiz.scoring.suggest: "said" only where every keyword stands in a
   *  sentence whose clause has no negation and nothing says the opposite. */
  function suggest(answer, keyPoints) {
    var r = read(answer, keyPoints), cl = clauses(r.text);
    var covered = r.found.map(function (f) { return [f[0], f[1]]; });
    function clauseOf(pos) { return cl.find(function (c) { return c[0] <= pos && pos < c[1]; }) || [pos, pos]; }
    return keyPoints.map(function (kp) {
      var wrong = r.contradicted(kp);
      if (wrong) return { point: kp.point, mark: "wrong", said: wrong.said, statement: wrong.statement, negated: "" };
      var plain = 0, negated = "", own = ownNegations(kp.point);
      kp.keywords.forEach(function (kw) {
        var places = [];
        variantsOf(kp, kw).forEach(function (v) {
          r.places(kw, v).forEach(function (f) { if (!r.inList(f[0])) places.push(f[0]); });
        });
        var free = places.filter(function (p) { var c = clauseOf(p); return !negationIn(r.text, c[0], c[1], covered, own, kp.point); });
        if (free.length) plain++;
        else if (places.length && !negated) { var c = clauseOf(places[0]); negated = slice(answer, r.text, c).trim(); }
      });
      var mark = kp.keywords.length && plain === kp.keywords.length ? "said" : "missed";
      return { point: kp.point, mark: mark, said: "", statement: "", negated: mark === "said" ? "" : negated };
    });
  }
  /** The FSRS rating a question's marks give (verify/quiz/scoring.py: rating). */
  function rating(marks, overTime) {
    if (!marks.length || marks.indexOf("wrong") >= 0) return 1;
    var said = marks.filter(function (m) { return m === "said"; }).length;
    if (said === marks.length) return overTime ? 3 : 4;
    return 2 * said >= marks.length ? 2 : 1;
  }

  // ---- predict-the-output drills -------------------------------------------------------------
  var TRUE = ["true", "是", "对", "真", "yes", "会"], FALSE = ["false", "否", "错", "假", "no", "不是", "不会"];
  function normalizeValue(text) {
    var t = String(text).normalize("NFKC").toLowerCase().trim();
    t = t.replace(/["'`“”‘’「」『』]/g, "");
    t = t.replace(/、/g, ",").replace(/→/g, ",").replace(/->/g, ",").replace(/【/g, "[").replace(/】/g, "]");
    t = t.replace(/\(/g, "[").replace(/\)/g, "]");
    t = t.replace(/\s+/g, "").replace(/[。.]+$/, "");
    t = t.replace(/,+\]/g, "]");
    t = t.replace(/(?<![0-9a-z_.])(\d+)\.0+(?![0-9.])/g, "$1");
    t = t.replace(/(?<=\d)(?:字节|bytes?|个|次|倍|x)$/, "");
    if (TRUE.indexOf(t) >= 0) return "true";
    if (FALSE.indexOf(t) >= 0) return "false";
    return t;
  }
  function exceptionType(text) {
    var head = String(text).normalize("NFKC").trim().split(":")[0].trim();
    return head.split(".").pop().trim().toLowerCase();
  }
  function factor(text) {
    var m = String(text == null ? "" : text).normalize("NFKC").replace(/,/g, "").match(/\d+(?:\.\d+)?/);
    var v = m ? parseFloat(m[0]) : NaN;
    return v > 0 ? v : null;
  }
  /** Whether an answer to a drill is right: text, or {faster, factor} for a performance drill. */
  function checkDrill(drill, answer) {
    if (drill.format === "exception") return exceptionType(answer) === exceptionType(drill.answer);
    if (drill.format === "faster") {
      var picked = answer && answer.faster;
      if (picked === "same") return !!drill.same;
      if (picked !== drill.faster) return false;
      var given = factor(answer.factor);
      return given !== null && Math.abs(Math.log(given / drill.factor)) <= Math.log(drill.tolerance) + 1e-12;
    }
    var given2 = normalizeValue(answer);
    if (drill.accept.length && drill.accept[0][0] === "[" && given2[0] !== "[") given2 = "[" + given2 + "]";
    return drill.accept.indexOf(given2) >= 0;
  }

  // ---- objective items: 判断题 and 计算题 (verify/quiz/objective.py: check) -------------------------
  var JUDGE_TRUE = ["对", "正确", "true", "t", "yes", "y", "是", "1"], JUDGE_FALSE = ["错", "错误", "false", "f", "no", "n", "否", "0", "不对"];
  function number(text) {
    var t = String(text == null ? "" : text).normalize("NFKC").replace(/[,，]/g, "");
    var m = t.match(/[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?/i);
    return m ? parseFloat(m[0]) : null;
  }
  function checkObjective(item, answer) {
    if (item.kind === "judge") {
      var said = String(answer == null ? "" : answer).normalize("NFKC").trim().toLowerCase();
      return item.answer ? JUDGE_TRUE.indexOf(said) >= 0 : JUDGE_FALSE.indexOf(said) >= 0;
    }
    var given = number(answer);
    if (given === null) return false;
    return Math.abs(given - item.answer) <= item.tolerance * Math.abs(item.answer) + 1e-12;
  }

  // ---- progress files ------------------------------------------------------------------------
  // The terminal's rules (verify/quiz/transfer.py), in the same words: dates in a window, numbers
  // that are numbers, a size limit, no key twice. A bad file is refused whole.
  var MAX_BYTES = 16 * 1024 * 1024, MAX_CARDS = 20000, MAX_REVIEWS = 200000;
  var DAY = 86400000, EARLIEST = Date.UTC(2000, 0, 1), PAST = DAY, FUTURE = 36500 * DAY;
  var ISO = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?)(Z|[+-]\d{2}(?::?\d{2})?)?)?$/;
  /** Milliseconds of an ISO 8601 date (no offset: UTC, as the terminal reads it), or NaN. */
  function parseDate(v) {
    var m = typeof v === "string" && ISO.exec(v);
    if (!m) return NaN;
    if (!m[2]) return Date.parse(m[1] + "T00:00:00Z");
    var off = m[3] || "Z";
    if (off !== "Z") off = off.length === 3 ? off + ":00" : off.slice(0, 3) + ":" + off.slice(-2);
    return Date.parse(m[1] + "T" + m[2] + off);
  }
  function isNum(v) { return typeof v === "number" && isFinite(v) && v >= 0; }
  /** Why ``v`` is not a date between 2000 and ``ahead`` from now, or null. */
  function when(v, ahead) {
    var t = parseDate(v);
    if (isNaN(t)) return "不是日期";
    return EARLIEST <= t && t <= Date.now() + ahead ? null : "不在 2000 年到现在之间（到期日可以晚一些，但不超过 100 年）";
  }
  /** The first key given twice in one object of a JSON text, or null (JSON.parse keeps the later copy). */
  function repeatedKey(text) {
    var stack = [], i = 0, n = text.length;
    while (i < n) {
      var ch = text[i];
      if (ch === "{") { stack.push({ keys: new Set(), key: true }); i++; }
      else if (ch === "[") { stack.push(null); i++; }
      else if (ch === "}" || ch === "]") { stack.pop(); i++; }
      else if (ch === ",") { var top = stack[stack.length - 1]; if (top) top.key = true; i++; }
      else if (ch === "\"") {
        var j = i + 1;
        while (j < n && text[j] !== "\"") j += text[j] === "\\" ? 2 : 1;
        var obj = stack[stack.length - 1];
        if (obj && obj.key) {
          var key = JSON.parse(text.slice(i, j + 1));
          if (obj.keys.has(key)) return key;
          obj.keys.add(key); obj.key = false;
        }
        i = j + 1;
      } else i++;
    }
    return null;
  }
  /** The progress file in ``text``, or why it is not one: {obj} or {why}. */
  function readProgress(text) {
    if (text.length > MAX_BYTES) return { why: "文件有 " + text.length.toLocaleString("en") + " 个字符，进度文件最多 " + MAX_BYTES.toLocaleString("en") + " 字节" };
    var obj;
    try { obj = JSON.parse(text); } catch (e) { return { why: "文件不是合法的 JSON" }; }
    var twice = repeatedKey(text);
    if (twice !== null) return { why: "键 '" + twice + "' 在同一个对象里出现了两次" };
    var why = validateProgress(obj);
    return why ? { why: why } : { obj: obj };
  }
  /** Why ``obj`` is not a progress file, or null when it is one (verify/quiz/transfer.py: validate). */
  function validateProgress(obj) {
    if (!obj || typeof obj !== "object" || Array.isArray(obj)) return "不是一个 JSON 对象";
    if (obj.version !== 1) return "version 必须是 1";
    if (!obj.cards || typeof obj.cards !== "object" || Array.isArray(obj.cards)) return "缺少 cards 对象";
    var ids = Object.keys(obj.cards), why;
    for (var i = 0; i < ids.length; i++) {
      var c = obj.cards[ids[i]], where = "cards." + ids[i];
      if (!c || typeof c !== "object" || Array.isArray(c)) return where + " 不是对象";
      if ((why = when(c.due, FUTURE))) return where + ".due " + why;
      if (c.last_review != null && (why = when(c.last_review, PAST))) return where + ".last_review " + why;
      var nums = ["stability", "difficulty", "elapsed_days", "scheduled_days", "learning_steps", "reps", "lapses"];
      for (var j = 0; j < nums.length; j++) if (!isNum(c[nums[j]])) return where + "." + nums[j] + " 不是非负数";
      if ([0, 1, 2, 3].indexOf(c.state) < 0) return where + ".state 必须是 0..3";
    }
    if (!Array.isArray(obj.log)) return "缺少 log 数组";
    if (ids.length > MAX_CARDS || obj.log.length > MAX_REVIEWS) return "卡片或自评太多（最多 " + MAX_CARDS + " 张卡片、" + MAX_REVIEWS + " 条自评）";
    for (var k = 0; k < obj.log.length; k++) {
      var r = obj.log[k];
      if (!r || typeof r !== "object" || Array.isArray(r) || typeof r.id !== "string" || [1, 2, 3, 4].indexOf(r.rating) < 0) return "log[" + k + "] 格式不对";
      if ((why = when(r.at, PAST))) return "log[" + k + "].at " + why;
      if (r.coverage != null && !(isNum(r.coverage) && r.coverage <= 1)) return "log[" + k + "].coverage 不是 0 到 1 之间的数";
      if (r.seconds != null && !isNum(r.seconds)) return "log[" + k + "].seconds 不是非负数";
    }
    return null;
  }
  /** Merge a validated file into ``current`` (changed in place): unknown ids skipped and listed, the
   *  newer card of each id kept, reviews not seen yet added. */
  function mergeProgress(current, incoming, known) {
    var out = { cards: 0, reviews: 0, kept: 0, unknown: [] }, unknown = new Set();
    function newest(c) { return parseDate(c.last_review || c.due); }
    Object.keys(incoming.cards).forEach(function (id) {
      if (!known.has(id)) { unknown.add(id); return; }
      var c = incoming.cards[id];
      if (c.state === 0) return;
      if (!current.cards[id] || newest(current.cards[id]) < newest(c)) { current.cards[id] = c; out.cards++; } else out.kept++;
    });
    var seen = new Set(current.log.map(function (x) { return x.id + "\u0000" + x.rating + "\u0000" + parseDate(x.at); }));
    incoming.log.forEach(function (r) {
      if (!known.has(r.id)) { unknown.add(r.id); return; }
      var key = r.id + "\u0000" + r.rating + "\u0000" + parseDate(r.at);
      if (!seen.has(key)) { seen.add(key); current.log.push(r); out.reviews++; }
    });
    current.log.sort(function (a, b) { return parseDate(a.at) - parseDate(b.at); });
    out.unknown = Array.from(unknown).sort();
    return out;
  }

  window.QuizCore = { normalize: normalize, score: score, suggest: suggest, rating: rating, MARKS: MARKS,
                      checkObjective: checkObjective, normalizeValue: normalizeValue, checkDrill: checkDrill,
                      validateProgress: validateProgress, readProgress: readProgress, mergeProgress: mergeProgress, MAX_BYTES: MAX_BYTES };
})();
