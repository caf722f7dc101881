/* 模拟面试的规则（无 DOM）：考察点打分、预测输出的判定、进度文件的校验与合并。
 *
 * The same rules as verify/quiz/scoring.py, verify/quiz/drills.py and verify/quiz/progress_file.py
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
  // One schema for both readers: verify/quiz/progress_file.py declares it (msgspec), the page's bank
  // carries it as JSON Schema (progress_rules), and a file is checked here against it, field by field
  // in the order msgspec reads them, refused with the same words as progress_file.schema_reason.
  var RULES = null, SCHEMA = null, DATE = null;
  var TYPES = { number: "数", string: "字符串", object: "对象", array: "数组", boolean: "布尔值", "null": "空值 null" };
  /** Take the rules the bank carries (quiz-ui.js does, before anything is read). */
  function setProgressRules(rules) {
    RULES = rules || null;
    SCHEMA = RULES && RULES.schema;
    api.MAX_BYTES = RULES ? RULES.max_bytes : 0;
  }
  function resolve(node) {
    while (node && node.$ref) node = SCHEMA.$defs[node.$ref.split("/").pop()];
    return node;
  }
  function kind(v) {
    if (v === null) return "null";
    if (Array.isArray(v)) return "array";
    return typeof v;  // number, string, boolean, object
  }
  function got(v) { var k = kind(v); return k === "number" ? (Number.isInteger(v) ? "整数" : "数") : TYPES[k]; }
  function at(path) { return path || "文件"; }
  function join(path, key) { return path ? path + "." + key : key; }
  /** Why the date ``v`` (it matched the pattern) is not a calendar date within ``ahead`` days of now, or null. */
  function dateRange(v, ahead) {
    var y = +v.slice(0, 4), m = +v.slice(5, 7), d = +v.slice(8, 10), day = new Date(0);
    day.setUTCFullYear(y, m - 1, d);
    if (y < 1 || day.getUTCDate() !== d) return "不是日期";
    var t = Date.parse(v), earliest = Date.parse(RULES.earliest);
    if (isNaN(t)) return "不是日期";
    return earliest <= t && t <= Date.now() + RULES.ahead_days[ahead] * 86400000 ? null
      : "不在 2000 年到现在之间（到期日可以晚一些，但不超过 100 年）";
  }
  function checkNumber(node, v, path) {
    if (node.minimum != null && !(v >= node.minimum)) return at(path) + " 应 ≥ " + node.minimum;
    if (node.exclusiveMinimum != null && !(v > node.exclusiveMinimum)) return at(path) + " 应 > " + node.exclusiveMinimum;
    if (node.maximum != null && !(v <= node.maximum)) return at(path) + " 应 ≤ " + node.maximum;
    if (node.exclusiveMaximum != null && !(v < node.exclusiveMaximum)) return at(path) + " 应 < " + node.exclusiveMaximum;
    if (node.multipleOf === 1 && !Number.isInteger(v)) return at(path) + " 应为整数";
    return null;
  }
  function checkString(node, v, path) {
    var n = Array.from(v).length;  // characters, as Python counts them
    if (node.minLength != null && n < node.minLength) return at(path) + " 不能为空";
    if (node.maxLength != null && n > node.maxLength) return at(path) + " 太长（最多 " + node.maxLength + " 个字符）";
    if (node.pattern && !new RegExp(node.pattern).test(v)) return at(path) + " 不是带时区的 ISO 8601 时间（如 " + RULES.date_example + "）";
    return null;
  }
  function checkObject(node, v, path) {
    var keys = Object.keys(v), why, i;
    if (node.properties) {  // a struct: no field it does not declare, every required one, then its dates
      for (i = 0; i < keys.length; i++) {
        var field = node.properties[keys[i]];
        if (!field) return at(path) + " 有未知字段 " + keys[i];
        if ((why = check(field, v[keys[i]], join(path, keys[i])))) return why;
      }
      for (i = 0; i < (node.required || []).length; i++) {
        if (!Object.prototype.hasOwnProperty.call(v, node.required[i])) return at(path) + " 缺少字段 " + node.required[i];
      }
      var names = Object.keys(node.properties);
      for (i = 0; i < names.length; i++) {
        var date = resolve(node.properties[names[i]]), value = v[names[i]];
        if (date.anyOf) date = resolve(date.anyOf[0]);
        if (date["x-ahead"] && typeof value === "string" && (why = dateRange(value, date["x-ahead"]))) return join(path, names[i]) + " " + why;
      }
      return null;
    }
    for (i = 0; i < keys.length; i++) {  // a map: each key, then its value
      if (node.propertyNames && (why = checkString(node.propertyNames, keys[i], path + " 的键"))) return why;
      if ((why = check(node.additionalProperties, v[keys[i]], path + "." + keys[i]))) return why;
    }
    if (node.maxProperties != null && keys.length > node.maxProperties) return at(path) + " 太多（最多 " + node.maxProperties + " 项）";
    return null;
  }
  /** Why ``v`` does not fit the schema ``node`` at ``path``, or null. */
  function check(node, v, path) {
    node = resolve(node);
    if (typeof v === "number" && !isFinite(v)) return at(path) + " 超出数的范围";
    var options = node.anyOf ? node.anyOf.map(resolve) : [node];
    var match = options.filter(function (o) { return o.type === kind(v); })[0];
    if (!match) return at(path) + " 应为" + options.map(function (o) { return TYPES[o.type]; }).join("或") + "，不是" + got(v);
    if (match.type === "number") return checkNumber(match, v, path);
    if (match.type === "string") return checkString(match, v, path);
    if (match.type === "object") return checkObject(match, v, path);
    if (match.type === "array") {
      for (var i = 0; i < v.length; i++) { var why = check(match.items, v[i], path + "[" + i + "]"); if (why) return why; }
      if (match.maxItems != null && v.length > match.maxItems) return at(path) + " 太多（最多 " + match.maxItems + " 项）";
    }
    return null;
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
  /** Why the parsed ``obj`` is not a progress file, or null (verify/quiz/progress_file.py: read). */
  function validateProgress(obj) {
    if (!RULES) return "页面缺少进度文件的规则（请重新构建网站）";
    var v = obj && typeof obj === "object" && !Array.isArray(obj) ? obj.version : null;
    if (typeof v === "number" && Number.isInteger(v) && v >= 1 && v > RULES.version) {
      return "这是更新的格式（version " + v + "），这里只读得懂 version " + RULES.version + "：请先更新本项目";
    }
    var why = check(SCHEMA, obj, "");
    if (why) return why;
    var orphans = obj.log.filter(function (r) { return !Object.prototype.hasOwnProperty.call(obj.cards, r.id); });
    if (orphans.length) return "log 里有 " + orphans.length + " 条自评没有对应的卡片（如 「" + orphans[0].id + "」），导入后也导不出来：cards 里应有它们的卡片";
    return null;
  }
  /** The progress file in ``text``, or why it is not one: {obj} or {why}. */
  function readProgress(text) {
    if (RULES && text.length > RULES.max_bytes) return { why: "文件有 " + text.length.toLocaleString("en") + " 个字符，进度文件最多 " + RULES.max_bytes.toLocaleString("en") + " 字节" };
    var obj;
    try { obj = JSON.parse(text); } catch (e) { return { why: "文件不是合法的 JSON" }; }
    var why = validateProgress(obj);
    if (why) return { why: why };
    var twice = repeatedKey(text);
    return twice === null ? { obj: obj } : { why: "键 '" + twice + "' 在同一个对象里出现了两次" };
  }
  /** Merge a validated file into ``current`` (changed in place): unknown ids skipped and listed, the
   *  newer card of each id kept, reviews not seen yet added. */
  function mergeProgress(current, incoming, known) {
    var out = { cards: 0, reviews: 0, kept: 0, unknown: [] }, unknown = new Set();
    function newest(c) { return Date.parse(c.last_review || c.due); }
    Object.keys(incoming.cards).forEach(function (id) {
      if (!known.has(id)) { unknown.add(id); return; }
      var c = incoming.cards[id];
      if (!current.cards[id] || newest(current.cards[id]) < newest(c)) { current.cards[id] = c; out.cards++; } else out.kept++;
    });
    var seen = new Set(current.log.map(function (x) { return x.id + "\u0000" + x.rating + "\u0000" + Date.parse(x.at); }));
    incoming.log.forEach(function (r) {
      if (!known.has(r.id)) { unknown.add(r.id); return; }
      var key = r.id + "\u0000" + r.rating + "\u0000" + Date.parse(r.at);
      if (!seen.has(key)) { seen.add(key); current.log.push(r); out.reviews++; }
    });
    current.log.sort(function (a, b) { return Date.parse(a.at) - Date.parse(b.at); });
    out.unknown = Array.from(unknown).sort();
    return out;
  }

  var api = { normalize: normalize, score: score, suggest: suggest, rating: rating, MARKS: MARKS,
              checkObjective: checkObjective, normalizeValue: normalizeValue, checkDrill: checkDrill,
              setProgressRules: setProgressRules, validateProgress: validateProgress, readProgress: readProgress,
              mergeProgress: mergeProgress, MAX_BYTES: 0 };
  window.QuizCore = api;
})();
