"""Cases for shared-ptr-cpp: (ops,), each op ("make", slot, id), ("clone" | "steal" | "copy" | "move", dst, src)
or ("drop", slot) on three slots. The named cases come in an order that keeps the known bugs apart: a
copy-assignment over the only owner (a leak) before the self-assignment at count 1 (a use after free), and a
move only after both; then random sequences drawn from the seed."""

import random

MOVES = ("clone", "steal", "copy", "move")


def _random_ops(rng, n, first_id):
    engaged = [False, False, False]
    ops, next_id = [], first_id
    while len(ops) < n:
        kind = rng.choice(("make", "drop", *MOVES, *MOVES))
        a, b = rng.randrange(3), rng.randrange(3)
        if kind == "make":
            ops.append(("make", a, next_id))
            next_id += 1
        elif kind == "drop":
            ops.append(("drop", a))
        elif kind in ("clone", "steal"):
            if a == b or not engaged[b]:
                continue
            ops.append((kind, a, b))
        else:  # copy-assign (self included), move-assign (not from itself)
            if not (engaged[a] and engaged[b]) or (kind == "move" and a == b):
                continue
            ops.append((kind, a, b))
        engaged[a] = kind != "drop"
    return ops


def cases(seed):
    rng = random.Random(seed)
    out = [
        ("构造之后计数为 1，析构时释放", ([("make", 0, 1), ("make", 1, 2), ("drop", 0)],)),
        ("拷贝构造共享同一个对象，最后一个析构时才释放",
         ([("make", 0, 1), ("clone", 1, 0), ("clone", 2, 1), ("drop", 0), ("drop", 2)],)),
        ("拷贝赋值给唯一的持有者：它原来的对象要释放",
         ([("make", 0, 1), ("make", 1, 2), ("copy", 0, 1), ("drop", 1)],)),
        ("自赋值，计数为 1", ([("make", 0, 1), ("copy", 0, 0), ("make", 1, 2), ("clone", 2, 1), ("copy", 2, 2)],)),
        ("移动构造：源变空，计数不变", ([("make", 0, 1), ("steal", 1, 0), ("drop", 1)],)),
        ("移动赋值：放手原来的对象，源变空",
         ([("make", 0, 1), ("make", 1, 2), ("clone", 2, 1), ("move", 0, 1), ("drop", 2)],)),
        ("空的（移动过的）也能拷贝、赋值、析构",
         ([("make", 0, 1), ("steal", 1, 0), ("clone", 2, 0), ("copy", 1, 2), ("make", 2, 3), ("copy", 2, 0)],)),
    ]
    for k in range(10):
        out.append((f"随机操作 #{k}", (_random_ops(rng, rng.randint(10, 40), 100 * (k + 1)),)))
    return out
