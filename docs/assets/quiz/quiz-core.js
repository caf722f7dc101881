/* 模拟面试的规则（无 DOM）：找出回答里含考察点词语的句子、由标记得出的自评、预测输出的判定、进度文件的校验与合并。
 *
 * The same rules as verify/quiz/scoring.py, verify/quiz/drills.py and verify/quiz/progress_file.py
 * (the tests compare them on the same answers). Exposed as window.QuizCore.
 */
(function () {
  "use strict";

  // ---- the candidate marks each key point; the page only finds sentences ------------------------
  // The rules are verify.quiz.scoring.FIND_RULES, carried in the bank (find_rules): nothing is
  // pre-selected, since a keyword rule cannot tell a sentence from its inversion.
  var FIND = null, SENTENCE = null, WORD = null;
  /** Take the rules the bank carries (quiz-ui.js does, before anything is shown). */
  function setFindRules(rules) {
    FIND = rules || null;
    SENTENCE = FIND && new RegExp(FIND.sentence, "g");
    WORD = FIND && new RegExp("^" + FIND.word + "$");
    api.MARKS = FIND ? FIND.marks : {};
    api.FIND = FIND;
  }
  function normalize(s) { return String(s).normalize("NFKC").toLowerCase(); }
  function isWord(ch) { return ch !== undefined && WORD.test(ch); }
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
  /** Whether ``word`` occurs in the normalised ``text`` (scoring.py: occurs). */
  function occurs(word, text) {
    var w = normalize(word).trim(), m;
    if (!w) return false;
    var re = pattern(w), plural = FIND.plural;
    while ((m = re.exec(text)) !== null) {
      var s = m.index, e = s + m[0].length;
      var left = !isWord(w[0]) || s === 0 || !isWord(text[s - 1]);
      var right = !isWord(w[w.length - 1]) || e === text.length || !isWord(text[e]) ||
        (text[e] === plural && (e + 1 === text.length || !isWord(text[e + 1])));
      if (left && right) return true;
      re.lastIndex = s + 1;
    }
    return false;
  }
  /** The point's words: each keyword, then its synonyms; each once; none shorter than FIND.shortest (scoring.py: words). */
  function words(kp) {
    var out = [];
    kp.keywords.forEach(function (kw) {
      [kw].concat((kp.synonyms || {})[kw] || []).forEach(function (v) {
        if (out.indexOf(v) < 0 && normalize(v).trim().length >= FIND.shortest) out.push(v);
      });
    });
    return out;
  }
  /** The answer's sentences as typed, trimmed, each once (scoring.py: sentences). */
  function sentences(answer) {
    var out = [];
    (String(answer).match(SENTENCE) || []).forEach(function (s) { s = s.trim(); if (s && out.indexOf(s) < 0) out.push(s); });
    return out;
  }
  /** [sentence, the point's words in it] for each sentence that contains one (scoring.py: shared). */
  function shared(answer, kp) {
    if (!FIND) return [];
    var out = [];
    sentences(answer).forEach(function (s) {
      var norm = normalize(s);
      var found = words(kp).filter(function (w) { return occurs(w, norm); });
      if (found.length) out.push([s, found]);
    });
    return out;
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
  // 10^e correctly rounded, and ⌊log10 |x|⌋ exact at powers of ten (verify/quiz/objective.py: _power, _exponent)
  function power(e) { return e >= 0 ? Math.pow(10, e) : 1 / Math.pow(10, -e); }
  function exponent(x) {
    var e = Math.floor(Math.log10(Math.abs(x)));
    while (power(e + 1) <= Math.abs(x)) e++;
    while (power(e) > Math.abs(x)) e--;
    return e;
  }
  /** Whether given is want rounded to two significant digits, either way at a tie (1.2 and 1.3 for 1.25). */
  function twoDigits(given, want) {
    if (want === 0) return false;
    var unit = power(exponent(want) - 1), steps = given / unit;
    return Math.abs(steps - Math.round(steps)) < 1e-6 && Math.abs(given - want) <= unit / 2 * (1 + 1e-9);
  }
  function checkObjective(item, answer) {
    if (item.kind === "judge") {
      var said = String(answer == null ? "" : answer).normalize("NFKC").trim().toLowerCase();
      return item.answer ? JUDGE_TRUE.indexOf(said) >= 0 : JUDGE_FALSE.indexOf(said) >= 0;
    }
    var given = number(answer);
    if (given === null) return false;
    return Math.abs(given - item.answer) <= item.tolerance * Math.abs(item.answer) + 1e-12 || twoDigits(given, item.answer);
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

  var api = { normalize: normalize, shared: shared, words: words, rating: rating, setFindRules: setFindRules,
              MARKS: {}, FIND: null,
              checkObjective: checkObjective, normalizeValue: normalizeValue, checkDrill: checkDrill,
              setProgressRules: setProgressRules, validateProgress: validateProgress, readProgress: readProgress,
              mergeProgress: mergeProgress, MAX_BYTES: 0 };
  window.QuizCore = api;
})();
