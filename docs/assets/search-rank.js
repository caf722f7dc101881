/* Search: a page whose title holds every word of the query comes first, and a query the site has
 * nothing for points to the list of topics it covers. Material's own ranking (lunr, on segmented
 * Chinese) puts a long page that repeats the words above the page the question is named for; this
 * only reorders the results Material rendered, and adds one link where no title holds the query.
 *
 * The words of a query are what the reader separated (spaces, punctuation) and the runs of Latin
 * letters or digits apart from the Chinese beside them: "KV cache 显存" is kv, cache and 显存, and
 * the title "KV Cache 是什么？……显存怎么算？" holds all three though not side by side. */
(function () {
  "use strict";

  // the search index segments Chinese with zero-width spaces: they are not part of what was typed
  function norm(s) { return String(s || "").normalize("NFKC").toLowerCase().replace(/[\s\u200b？?，,。.！!：:、]+/g, ""); }

  function base() {
    try { return JSON.parse(document.getElementById("__config").textContent).base || "."; } catch (e) { return "."; }
  }

  /** The query's words, normalized: split where the reader separated them and where Latin letters or
   *  digits meet other characters (Chinese is not split further: its words are not marked). */
  function words(input) {
    return String(input || "").normalize("NFKC").toLowerCase().replace(/\u200b/g, "")
      .split(/[\s？?，,。.！!：:、；;]+|(?<=[a-z0-9])(?=[^a-z0-9])|(?<=[^a-z0-9])(?=[a-z0-9])/)
      .map(norm).filter(function (w) { return w.length > 0; });
  }
  /** Whether ``title`` holds every word of the query. */
  function holds(title, terms) {
    var t = norm(title);
    return terms.length > 0 && terms.every(function (w) { return t.indexOf(w) >= 0; });
  }

  /** The rendered results whose page title holds every word of the query, first; whether there was any. */
  function rank(list, input) {
    if (norm(input.value).length < 2) return true;
    var terms = words(input.value);
    var items = Array.prototype.slice.call(list.children).filter(function (li) { return li.matches(".md-search-result__item"); });
    var titled = items.filter(function (li) {
      var h = li.querySelector(".md-search-result__article h1");
      return h && holds(h.textContent, terms);
    });
    if (titled.length && !titled.every(function (li, i) { return items[i] === li; })) {
      titled.slice().reverse().forEach(function (li) { list.insertBefore(li, list.firstChild); });
    }
    return titled.length > 0;
  }

  /** Where no page is named for the query (lunr matches single characters, so results are rarely
   *  empty), a pointer to the topics the site covers and the ones it does not yet. */
  function pointer(meta, list, input, titled) {
    var old = meta.parentNode.querySelector(".vf-search-topics");
    var empty = norm(input.value).length >= 2 && !titled;
    if (empty && !old) {
      var p = document.createElement("p");
      p.className = "vf-search-topics";
      var a = document.createElement("a");
      a.href = base().replace(/\/$/, "") + "/topics/";
      a.textContent = "本站覆盖的主题：哪些题有、哪些还没有";
      p.appendChild(document.createTextNode("没有题目名里有这几个字的题。"));
      p.appendChild(a);
      meta.parentNode.insertBefore(p, meta.nextSibling);
    } else if (!empty && old) {
      old.remove();
    }
  }

  function start() {
    var list = document.querySelector(".md-search-result__list");
    var meta = document.querySelector(".md-search-result__meta");
    var input = document.querySelector(".md-search__input");
    if (!list || !meta || !input) return;
    var busy = false;
    new MutationObserver(function () {
      if (busy) return;
      busy = true;
      try { pointer(meta, list, input, rank(list, input)); } finally { busy = false; }
    }).observe(list, { childList: true });
  }

  window.__searchRank = { words: words, holds: holds };  // for the browser tests

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
})();
