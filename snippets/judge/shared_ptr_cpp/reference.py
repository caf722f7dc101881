"""Reference for shared-ptr-cpp: which object each of the three slots points to (None: no object); an
object's use_count is the number of slots pointing to it, and it lives while one does."""


def _record(target):
    live = {t for t in target if t is not None}
    out = [len(live)]
    for t in target:
        out += [0, -1] if t is None else [target.count(t), t]
    return out


def reference(ops):
    target = [None, None, None]
    out = []
    for op in ops:
        name, a = op[0], op[1]
        if name == "make":
            target[a] = op[2]
        elif name in ("clone", "copy"):
            target[a] = target[op[2]]
        elif name in ("steal", "move"):
            moved = target[op[2]]
            target[op[2]] = None
            target[a] = moved
        else:  # drop
            target[a] = None
        out.append(_record(target))
    out.append([0])
    return out
