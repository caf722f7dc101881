"""Which torch the page's intrusive_ptr layout is read from: the count members of intrusive_ptr_target in the
installed wheel's c10/util/intrusive_ptr.h (the layout changed across torch releases)."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
from pathlib import Path

from verify.claim import claim

Q = "smart-pointers"
HEADER = ("include", "c10", "util", "intrusive_ptr.h")
ATOMIC_BYTES = {"uint64_t": 8, "uint32_t": 4, "size_t": 8, "int64_t": 8, "int32_t": 4}


# The combined 64-bit count is recent (older torch had `refcount_` and `weakcount_`, two 32-bit atomics, also
# 8 bytes): the expectation below is the layout of the torch it was read from, 2.13, so older wheels skip it.
@claim("sp.intrusive-count-layout", question=Q, min_torch="2.13",
       statement="计数的具体布局随 torch 版本变过，本站装的是 torch {version}：它的 `c10/util/intrusive_ptr.h` 里，"
                 "`intrusive_ptr_target` 的计数成员是 {members_text}，共 {count_bytes:bytes}；强、弱计数"
                 "{combined:?合在这一个原子量里，强计数是低 32 位（`static_cast<uint32_t>`），往上是弱计数|是分开的原子量}，"
                 "{pyobject_text}。",
       expect={"count_bytes": 8, "members_found": True, "combined": True,
               "members": [["uint64_t", "combined_refcount_"]]})
def _(ctx):
    root = Path(importlib.util.find_spec("torch").origin).parent
    text = root.joinpath(*HEADER).read_text(encoding="utf-8")
    start = text.index("class C10_API intrusive_ptr_target")
    body = text[start:text.index("\n};", start)]
    members = re.findall(r"mutable std::atomic<(\w+)> (\w+);", body)
    combined = len(members) == 1
    strong_low = "return static_cast<uint32_t>(combined_refcount);" in text
    bit = re.search(r"kHasPyObject = \(uint64_t\(1\) << (\d+)\)", text)
    pyobject_text = (f"第 {bit.group(1)} 位（最高位）标记这个对象有没有 Python 包装对象" if bit
                     else "计数里没有标记 Python 包装对象的位")
    return {"version": importlib.metadata.version("torch"), "members": [list(m) for m in members],
            "members_found": bool(members),
            "members_text": "、".join(f"`std::atomic<{t}> {n}`" for t, n in members),
            "count_bytes": sum(ATOMIC_BYTES.get(t, 0) for t, _ in members),
            "combined": combined and strong_low, "pyobject_bit": int(bit.group(1)) if bit else None,
            "pyobject_text": pyobject_text}
