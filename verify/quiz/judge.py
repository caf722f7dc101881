"""判断题 from the claims' sentences: a claim's sentence as its page shows it (true), or the same sentence
with one observed value changed to a value a wrong mechanism would give (false).

The wrong values are :func:`verify.core.perturb.close_wrong_values` (doubled or halved, one more or less
for a small count, zero; never ten times, which reads as an impossible magnitude), kept only where the
claim's own expectation rejects the changed observation (:func:`verify.core.perturb.rejected`), where the
wrong value reads like the true one (same unit, same digits) and where it is a value of its kind (a
percentage of a fraction stays at most 100%; zero only where nothing else is wrong, and only for a whole
count). A variant the words beside it contradict is left out (:func:`gives_away`: a nonzero count next to
a negation, a count above its total, a flag whose true words the sentence says again…). A value that the
sentence's other numbers make (a product, ratio, sum or difference of two of them, or the same number
again: 「2 ms 和 8 ms，慢 4 倍」), or a relation said in words or symbols (「各 (N-1)/N·Ψ，合计 1.969·Ψ」), would
make the false sentence contradict itself, so the item asks only the sentence's part (between 。 and ；)
that holds the value, where no such relation remains, and a true item asks the same part, so both read
alike in length; with no such part the value is not changed. Each claim is asked one way only, chosen by
a hash of its id, so a sentence never appears as both; the answer is 对 or 错, the prompt ends with the
claim's scope tag as its page shows it (「〔CPU〕」), and the claim's true sentence is shown after, with a
link to it on its page. A claim is asked only where its record passed, it is no timing or measured claim
(one machine's value is not knowledge), it has a false variant, and its sentence does not lean on the one
before it (``它…``, ``同样…``). Key points are not asked: their ``contradicts`` are fragments, far shorter
than a point, so the length of a statement gave its answer away.
"""

from __future__ import annotations

import functools
import hashlib
import math
import os
import re
from collections.abc import Sequence
from typing import Annotated, Any

import msgspec

from verify.core import binding, matchers, perturb
from verify.quiz.schema import Objective, Question

_Id = Annotated[str, msgspec.Meta(min_length=1, max_length=100)]
_Text = Annotated[str, msgspec.Meta(max_length=2000)]

#: a sentence that leans on the one before it on its page, told simply: by its first words or a
#: pointer back (上例, 上面); such a sentence does not stand alone as a 判断题
LEANS = re.compile(r"^(?:它|这|那|但|而|也|同样|同一|两者|换成|代价是|最后|反过来|此外|另外|所以|因此|于是|不过|相反)"
                   r"|上例|上面|上文|上述|前面|把它|这种|这一步|同样这|也一样|见下表|上表|下表|上一条|同一个例子|这个例子")
#: a sentence that says its value is this machine's: a candidate could only guess it, true or false
MACHINE = re.compile(r"这台机器|本机|构建机")
#: values this small are a precision or a rounding error of one machine and one kernel path, not knowledge
TINY = 1e-3
_TOKEN = re.compile(r"[0-9A-Za-z_.,%×]")
_CLAUSE = re.compile(r"[^，。；：、;:（）()\s]")
_DIGIT_COMMA = re.compile(r"(?<=\d),(?=\d{3})")
#: a number in a sentence with its unit; one glued to a name (sm_90a, fc1, H100) is not a number
_NUMBER = re.compile(r"(?<![A-Za-z0-9_.])(\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?)(?![A-Za-z_\d])\s?"
                     r"(KiB|MiB|GiB|ns|µs|ms|%)?")
_UNIT = {"KiB": 2.0**10, "MiB": 2.0**20, "GiB": 2.0**30, "ns": 1e-9, "µs": 1e-6, "ms": 1e-3, "%": 0.01}
#: how close two numbers are to count as equal: sentences round to two or three significant digits
RELATION_TOLERANCE = 0.05
#: a part of a sentence: up to its 。 or ；
_PART = re.compile(r"[^。；]+[。；]?")
#: a part shorter than this says too little to be asked alone
MIN_PART = 28
#: a part that points at the rest of its sentence anywhere in it (「eager 是它的 2 倍」, 「同样是 2 MiB」)
PART_LEANS = re.compile(r"它|同样|其余|其他|后者|前者|两者|分别|这|那|此时|之后|反过来|也")
#: claims of these kinds are not asked: a timing or a measured value is one machine's result, not knowledge
UNASKED = frozenset({"perf", "measured"})
#: a relation said in words or symbols, which :func:`relates` cannot read: 「各 X，合计 Y」, 「(N-1)/N·Ψ」
WORDED = re.compile(r"各[^。；]*(?:合计|总共|共计|加起来|之和)|乘以|乘积|之积")
SYMBOLIC = re.compile(r"(?:\)|(?<![\w.])\d|(?<![A-Za-z])[A-ZΨΦα-ω])\s*/\s*(?:[A-ZΨΦα-ω](?![A-Za-z0-9])|\(|√)")
#: words that make a zero or nonzero count, or a flag, read right or wrong by themselves: a negation
#: (「没有 running 统计（buffer 1 个）」), an error (「报 undefined reference…退出码 0」), a ratio (「一半」)
NEGATION = re.compile(r"没有|不|无|未|非|报错|报 |错误|失败|异常|error|undefined|一半|倍|之比|比值")
#: how far from a value (characters, within its sentence) such a word is said to be next to it
NEAR = 24
#: a total said before a count: 「6 格里有 5 格」, 「共 12 个节点：…」
_TOTAL = re.compile(r"(\d[\d,]*)\s*[个格条块项层次张行位]\s*(?:里|中|之中|当中)|(?:共|总共|一共)\s*(\d[\d,]*)")
#: names listed right after a count: 「1 个（`square`）」
_LISTED = re.compile(r"\s*[个项条种块]\s*[（(]([^）)]*)[）)]")
#: words that order two numbers of a part (「寄存器文件 256 KiB、L1 192 KiB，寄存器文件更大」, 「线性增长：1、2、4 MiB」):
#: a wrong value on the other side of a number it is compared with contradicts them
COMPARE = re.compile(r"更|大于|小于|多于|少于|超过|不到|不足|还少|还多|一样|相同|相等|等于|放得|放不|降到|升到|减少|增加|"
                     r"增长|翻倍|以内|之内|高于|低于")
#: words of a flag that order the numbers beside it: 「82.2 GB，已经放不进 80 GB」 flipped contradicts them
ORDERS = re.compile(r"放得|放不|超过|低于|高于|大于|小于|不到|更|还少|还多")
#: a number and the unit or counter word after it, for comparing numbers of one kind
_QUANTITY = re.compile(r"(?<![A-Za-z0-9_.])(\d[\d,]*(?:\.\d+)?)(?![A-Za-z_\d])\s?(KiB|MiB|GiB|GB|TB|ns|µs|ms|%|字节|个|条|次|块|"
                       r"行|倍|项|层|步)?")
#: a part that continues the one before it, told by its first word: 「按 128 字节的 line 算是 2 条对 1 条」 has no subject
PART_CONTINUES = re.compile(r"^(?:按|经|以|再|又|并|且|则|就|才)")


class ClaimJudgement(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A claim's 判断题: its true ``sentence`` and what is asked, ``prompt``. A false one names the observed
    ``key`` it changed and the ``wrong`` value given to it (the claim's expectation rejects it)."""

    claim: _Id
    question: _Id  # the question whose page shows the claim
    sentence: _Text
    prompt: _Text
    key: str = ""  # "" : the prompt is the true sentence
    wrong: Any = None
    shown: str = ""  # the part of the true sentence asked, where the prompt is a part; "" : the whole
    scope: str = ""  # where the claim ran, as its page tags it (``CPU``, ``编译 · sm_90a``): said after the prompt

    @property
    def asked(self) -> str:
        """What the prompt says when true: the true sentence or its part asked."""
        return self.shown or self.sentence

    @property
    def true(self) -> bool:
        return not self.key


def filled(statement: str, observed: Any) -> str | None:
    """The statement with the observed values, as a page shows it; None where a value was not observed."""
    missing: list[str] = []

    def value(key: str, spec: str) -> str:
        try:
            return binding.resolve(observed, key, spec)
        except binding.BindError:
            missing.append(key)
            return ""

    text = binding.fill(statement, value)
    return None if missing else text


def _shape(text: str, loose: bool) -> str:
    """A value's text with its numbers as ``#``: the unit and sign that remain, and for a whole number
    (``loose`` false) its decimals too, so 16 never reads as 1.6."""
    return re.sub(r"\d+(?:\.\d+)?" if loose else r"\d+", "#", _DIGIT_COMMA.sub("", text))


def _measured(value: Any) -> bool:
    """A float (or a timing, or a list holding one): shown to a few significant digits, however many decimals."""
    if isinstance(value, dict):
        return "median_s" in value
    if isinstance(value, (list, tuple)):
        return any(_measured(v) for v in value)
    return isinstance(value, float)


def _reads_alike(key: str, spec: str, observed: Any, changed: Any) -> bool:
    """Whether a wrong value's text could be the true one's: the same, a boolean's words, or the same shape."""
    true, wrong = binding.resolve(observed, key, spec), binding.resolve(changed, key, spec)
    value = binding.lookup(observed, key)
    loose = _measured(value)
    return (true == wrong or spec.startswith("?") or isinstance(value, bool)
            or _shape(true, loose) == _shape(wrong, loose))


def _of_its_kind(spec: str, value: Any, wrong: Any) -> bool:
    """Whether a wrong value is one its kind can take: a fraction shown as a percentage stays at most 100%.
    (A speed-up of 0 倍 reads as a trick: :func:`_rank` takes a zero only where nothing else is wrong.)"""
    if not isinstance(wrong, (int, float)) or isinstance(wrong, bool):
        return True
    if spec == "pct" and isinstance(value, (int, float)) and 0 <= value <= 1:
        return 0 <= wrong <= 1
    return True


def false_variants(statement: str, expect: Any, observed: Any) -> list[tuple[str, Any, str]]:
    """``(key, wrong value, sentence)`` for each likely wrong value of a key the statement shows and the claim
    expects, where the expectation rejects the changed observation, the value is one of its kind and the
    sentence reads like the true one."""
    true = filled(statement, observed)
    if true is None or not isinstance(observed, dict) or matchers.check(expect, observed):
        return []  # nothing observed, or the observation itself fails: no wrong value is told apart
    refs = binding.keys(statement)
    shown = [k for k in dict.fromkeys(k.split(".")[0] for k, _spec in refs) if not _tiny(observed.get(k))]
    out = []
    specs = [f for k, f in refs]
    for key, wrong in perturb.rejected(expect, observed, shown, perturb.close_wrong_values):
        # a value the expectation accepts is not false
        changed = {**observed, key: wrong}
        said = filled(statement, changed)
        if (said is not None and said != true and all(_reads_alike(k, f, observed, changed) for k, f in refs)
                and all(_of_its_kind(f, observed[key], wrong) for k, f in zip(binding.keys(statement), specs)
                        if k[0] == key)):
            out.append((key, wrong, said))
    return out


def _tiny(value: Any) -> bool:
    """A float of magnitude below :data:`TINY` (an error size): which side of it is right is one machine's fact."""
    return isinstance(value, float) and 0 < abs(value) < TINY


def changed_span(said: str, true: str) -> tuple[str, str]:
    """Where a false sentence differs from the true one, widened to whole tokens (``400`` against ``40``,
    not ``0`` against nothing): ``(what the false sentence says, what the true one says)``."""
    start, a, b = _changed(said, true)
    return said[start:a].strip(), true[start:b].strip()


def _changed(said: str, true: str) -> tuple[int, int, int]:
    """:func:`changed_span`'s place: where it starts, and where it ends in ``said`` and in ``true``."""
    start = len(os.path.commonprefix([said, true]))
    end = len(os.path.commonprefix([said[start:][::-1], true[start:][::-1]]))
    a, b = len(said) - end, len(true) - end
    # a number or name is widened to its whole token; words (Chinese is not segmented) to their clause
    inside = _TOKEN if all(_TOKEN.match(c) for c in said[start:a] + true[start:b]) else _CLAUSE
    while start > 0 and inside.match(said[start - 1]):
        start -= 1
    while end > 0 and inside.match(said[a]):
        a, b, end = a + 1, b + 1, end - 1
    return start, a, b


def numbers(text: str, span: tuple[int, int] | None = None) -> tuple[list[float], list[float]]:
    """The numbers a text says, sizes in bytes, times in seconds and percentages as fractions, so that
    「2.5 MiB，是 512 KiB 的 5 倍」 reads as 5 = 2.5 MiB / 512 KiB (「一半」 says a 2): those within ``span``
    (start, end), then the others."""
    inside: list[float] = []
    others: list[float] = [2.0] if "一半" in text else []
    for m in _NUMBER.finditer(text):
        value = float(m.group(1).replace(",", "")) * _UNIT.get(m.group(2) or "", 1.0)
        (inside if span and m.start() < span[1] and span[0] < m.end(1) else others).append(value)
    return inside, others


def _near(x: float, y: float) -> bool:
    return abs(x - y) <= RELATION_TOLERANCE * max(abs(x), abs(y))


def _made_of(c: float, a: float, b: float) -> bool:
    """Whether ``c`` is ``a + b``, ``a - b``, ``a × b`` or ``a / b``, and says so: no operand is 0, none 1
    for a product or ratio, and ``c`` is neither operand."""
    if 0 in (a, b, c) or _near(c, a) or _near(c, b):
        return False
    sums = (a + b, a - b)
    return any(_near(c, r) for r in (*sums, *((a * b, a / b) if 1 not in (a, b) else ())))


def _telling(v: float) -> bool:
    """A number that does not recur by chance: not a small whole number (1 次 and 1 个 say nothing together)."""
    return not (v.is_integer() and abs(v) <= 16)


def relates(values: Sequence[float], others: Sequence[float]) -> bool:
    """Whether one of ``values`` and two numbers of ``others`` (or another of ``values``) make one another,
    or it is another number again (「4 MiB，正好是这个输出（4 MiB）」, 「256 KiB 和 256 KiB，一样大」): change
    that value alone and the text contradicts itself."""
    return _relates(tuple(values), tuple(others))


@functools.lru_cache(maxsize=4096)
def _relates(values: tuple[float, ...], others: tuple[float, ...]) -> bool:
    """:func:`relates`, remembered: every wrong value of one key asks it of the same numbers of the true sentence."""
    for i, v in enumerate(values):
        if _telling(v) and any(math.isclose(v, o, rel_tol=1e-3) for o in others):
            return True
        pool = [*values[:i], *values[i + 1:], *others]
        for j, a in enumerate(pool):
            for b in pool[j + 1:]:
                if _made_of(v, a, b) or _made_of(v, b, a) or _made_of(a, v, b) or _made_of(a, b, v) \
                        or _made_of(b, v, a) or _made_of(b, a, v):
                    return True
    return False


def asked_parts(said: str, true: str) -> tuple[str, str] | None:
    """What to ask of a false sentence and of its true one: both whole where the changed value relates to no
    two other numbers of the sentence; else the part (up to 。 or ；) holding the change, where it relates to
    none there and the part stands alone; else None: the change would give itself away."""
    start, a, b = _changed(said, true)
    if not relates(*numbers(true, (start, b))) and not worded(true):
        return said, true
    part = next(m for m in _PART.finditer(true) if m.start() <= start < m.end() or m.end() == len(true))
    p, q = part.start(), max(part.end(), b)
    if q < len(true) and true[q - 1] not in "。；":
        return None  # the change runs over the part's end
    piece = true[p:q].strip()
    if (len(piece) < MIN_PART or LEANS.search(piece) or PART_LEANS.search(piece) or PART_CONTINUES.search(piece)
            or worded(piece)
            or relates(*numbers(true[p:q], (start - p, b - p)))):
        return None
    end = q + len(said) - len(true)
    return _ended(said[p:end].strip()), _ended(piece)


def worded(text: str) -> bool:
    """Whether a text says a relation in words or symbols (:data:`WORDED`, :data:`SYMBOLIC`; code in backticks
    aside): 「各 (N-1)/N·Ψ，合计 0.984·Ψ」 contradicts itself to anyone who does the sum."""
    prose = re.sub(r"`[^`]*`", "", text)
    return bool(WORDED.search(prose) or SYMBOLIC.search(prose))


def _ended(part: str) -> str:
    """A part as a sentence: ending in 。 where it ended in ；."""
    return part[:-1] + "。" if part.endswith("；") else part


def _rank(value: Any, wrong: Any) -> int:
    """How likely a wrong value is, most likely 0: zero is 1 (asked only where nothing else is wrong); a list's
    or a dict's by its first changed element."""
    if isinstance(value, dict) and isinstance(wrong, dict):
        pairs = [(v, wrong[k]) for k, v in value.items() if k in wrong and wrong[k] != v]
        return _rank(*pairs[0]) if pairs else 0
    if isinstance(value, (list, tuple)) and isinstance(wrong, (list, tuple)):
        pairs = [(v, w) for v, w in zip(value, wrong, strict=False) if v != w]
        return _rank(*pairs[0]) if pairs and list(wrong) != list(value)[::-1] else 0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not isinstance(wrong, (int, float)):
        return 0
    return 1 if wrong == 0 else 0


def _number(token: str) -> float | None:
    """A changed token as a number (``1,120`` as 1120, ``60%`` as 60; a tuple's element without its comma), or
    None: words."""
    m = re.fullmatch(r"\d[\d,]*(?:\.\d+)?", token.strip().rstrip(",%"))
    return float(m.group().replace(",", "")) if m else None


def gives_away(said: str, true: str, value: Any) -> bool:
    """Whether a false sentence reads wrong without the subject, by the words around its changed value in the
    true sentence ``true`` (``value``: the changed key's observed value). A change is left out where

    - a zero is made nonzero or a nonzero zero, or a flag is flipped, next to (:data:`NEAR`) a negation, an
      error or a ratio word (:data:`NEGATION`): 「没有 running 统计（buffer 1 个）」, 「不经过它：…有 1 个」,
      「报 undefined reference…；链接退出码 0」, 「快 0 倍」;
    - a zero stands where the true value is no whole count (0 ms, 0 MiB, 0.5 倍 made 0), or a byte count is
      one off (17 字节 of shared memory, a state of 1 字节);
    - a flag's true words are said again in the rest of the sentence (「两份贡献…相加…拿到的已经是其中一份」), a
      zero in brackets follows it (「有差别（最大差 0）」) or its words order numbers beside it (「82.2 GB，放得进
      80 GB」); a flag next to a negation is flipped (its words often hold one: 「会|不会」);
    - a count exceeds a total said before it in its part (「6 格里有 10 格」), or no longer matches the names
      listed right after it (「2 个（`square`）」);
    - the value moves past a number of its kind that its part compares it with (:data:`COMPARE`);
    - the number is said again in its part (:func:`_said_again`), or is one of a list whose elements are all equal."""
    start, a, b = _changed(said, true)
    wrong_text, true_text = said[start:a], true[start:b]
    t, w = _number(true_text), _number(wrong_text)
    begin = true.rfind("。", 0, start) + 1
    stop = true.find("。", b)
    near = true[max(begin, start - NEAR):start] + " " + true[b:min(b + 8, len(true) if stop < 0 else stop)]
    part_start = max(begin - 1, true.rfind("；", 0, start)) + 1
    if isinstance(value, bool):
        return bool(_echoed(true_text, wrong_text, true[:start] + true[b:])
                    or re.match(r"\s*[（(][^）)]*(?<![\d.])0(?![\d.])", true[b:])
                    or (ORDERS.search(true_text + wrong_text)
                        and len(_QUANTITY.findall(true[part_start:start] + " " + true[b:b + 16])) >= 2))
    if isinstance(value, (list, tuple)) and len(value) > 1 and all(v == value[0] for v in value):
        return True  # (7, 7, 7) after `fill_(7)`, (0, 0, 0) after `zero_()`: one element changed reads as a slip
    if t is None or w is None:
        return False
    if t >= 2 and t.is_integer() and _said_again(true, part_start, start, b, t):
        return True
    if (t == 0) != (w == 0) and NEGATION.search(near):
        return True
    unit = _QUANTITY.match(true, start)
    kind = unit.group(2) if unit else None
    if (w == 0 and not re.fullmatch(r"\d[\d,]*", true_text.strip())) or (kind == "字节" and abs(w - t) == 1):
        return True
    totals = [float((m.group(1) or m.group(2)).replace(",", "")) for m in _TOTAL.finditer(true[part_start:start])]
    if totals and t <= totals[-1] < w:
        return True
    listed = _LISTED.match(true, b)
    names = [n for n in re.split(r"[、,，]", listed.group(1)) if n.strip()] if listed else []
    if names and t == len(names) != w:
        return True
    return _reorders(true, part_start, start, b, t, w, kind)


def _said_again(true: str, part_start: int, start: int, end: int, t: float) -> bool:
    """Whether the changed number ``t`` (a whole number from 2 up) is said again in its part, outside the changed
    text: 「`fill_(7)` 之后那一行是 (7, 7, 7)」, 「张量 5 单独成桶 (5,)」, 「6 个梯度各占 6 块存储」 changed in
    one place contradict the other."""
    ends = [i for i in (true.find("。", end), true.find("；", end)) if i >= 0]
    rest = true[part_start:start] + " " + true[end:min(ends) if ends else len(true)]
    return any(float(m.group(1).replace(",", "")) == t for m in _QUANTITY.finditer(rest))


def _reorders(true: str, part_start: int, start: int, end: int, t: float, w: float, kind: str | None) -> bool:
    """Whether a part that compares numbers (:data:`COMPARE`) has one of the changed value's kind (its unit or
    counter word) that the wrong value ``w`` passes or meets, where the true value ``t`` did not."""
    ends = [i for i in (true.find("。", end), true.find("；", end)) if i >= 0]
    part = true[part_start:min(ends) + 1 if ends else len(true)]
    if kind is None or not COMPARE.search(part):
        return False
    for m in _QUANTITY.finditer(part):
        if m.group(2) == kind and not (part_start + m.start() <= start < part_start + m.end()):
            other = float(m.group(1).replace(",", ""))
            if (t > other) != (w > other) or (t < other) != (w < other):
                return True
    return False


def _echoed(true_words: str, wrong_words: str, rest: str) -> bool:
    """Whether two characters of a flag's true words that its wrong words lack are said again in ``rest``."""
    pairs = {true_words[i:i + 2] for i in range(len(true_words) - 1)}
    return any(re.fullmatch(r"[\u4e00-\u9fff]{2}", p) and p not in wrong_words and p in rest for p in pairs)


def variants(statement: str, expect: Any, observed: Any) -> list[tuple[int, str, Any, tuple[str, str]]]:
    """``(rank, key, wrong value, (false text asked, true text asked))`` for each false variant a claim could be
    asked with: it keeps to itself (:func:`asked_parts`) and does not give itself away (:func:`gives_away`)."""
    sentence = filled(statement, observed)
    if not sentence:
        return []
    return [(_rank(observed[key], wrong), key, wrong, parts) for key, wrong, said in
            false_variants(statement, expect, observed)
            if not gives_away(said, sentence, observed[key]) and (parts := asked_parts(said, sentence))]


def claim_judgement(claim_id: str, question: str, statement: str, expect: Any, observed: Any, kind: str = "fact",
                    scope: str = "") -> ClaimJudgement | None:
    """The one way a claim is asked (true or false, by a hash of its id), or None: a timing or measured claim
    (:data:`UNASKED`), no bound value, a sentence that does not stand alone, or no false variant
    (:func:`variants`; a claim asked only true would give its answer away). The variant is chosen by the hash
    among the likeliest (:func:`_rank`); a true item asks the same part of the sentence as its false variant
    would. ``scope`` is the claim's scope tag, said after the prompt as its page says it."""
    if kind in UNASKED or not binding.keys(statement):
        return None
    sentence = filled(statement, observed)
    if not sentence or LEANS.search(sentence) or MACHINE.search(sentence):
        return None
    found = variants(statement, expect, observed)
    if not found:
        return None
    likeliest = [v for v in found if v[0] == min(r for r, *_ in found)]
    digest = hashlib.sha256(claim_id.encode()).digest()
    _rank_, key, wrong, (said, true) = likeliest[int.from_bytes(digest[1:5], "big") % len(likeliest)]
    shown = "" if true == sentence else true
    if digest[0] % 2 == 0:
        return ClaimJudgement(claim_id, question, sentence, true, shown=shown, scope=scope)
    return ClaimJudgement(claim_id, question, sentence, said, key=key, wrong=wrong, shown=shown, scope=scope)


def _change(j: ClaimJudgement) -> dict[str, Any]:
    """A false item's change: the key and value, and the words that differ (``said`` for ``true``), shown after answering."""
    said, true = changed_span(j.prompt, j.asked)
    return {"key": j.key, "value": j.wrong, "said": said[:100], "true": true[:100]}


def judgements(items: Sequence[ClaimJudgement], questions: Sequence[Question]) -> list[Objective]:
    """The claims' 判断题 of the bank's questions, under ``judge:<claim>``, linked to the claim on its page;
    a prompt asked already is not asked again. A prompt ends with its claim's scope tag in 〔〕, as the page
    shows it beside the sentence (「〔CPU〕」: a CPU result is not said of a GPU)."""
    by_id = {q.id: q for q in questions}
    out, asked = [], set()
    for j in items:
        q = by_id.get(j.question)
        prompt = j.prompt + (f"〔{j.scope}〕" if j.scope else "")
        if q is None or prompt in asked:
            continue
        asked.add(prompt)
        anchor = f"#claim-{j.claim}"
        out.append(Objective(id=f"judge:{j.claim}", kind="judge", question=q.id, prompt=prompt, answer=j.true,
                             answer_text="对" if j.true else "错", explain=j.sentence, claim=j.claim,
                             params={} if j.true else _change(j), title=q.title, tags=q.tags,
                             difficulty=q.difficulty, url=q.url + anchor,
                             page_url=q.page_url + anchor if q.page_url else None))
    return out
