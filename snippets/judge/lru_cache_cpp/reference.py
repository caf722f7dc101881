"""Reference for lru-cache-cpp: an OrderedDict, its end the most recently used; the results of the gets."""

from collections import OrderedDict


def reference(capacity, ops):
    cache = OrderedDict()
    out = []
    for op in ops:
        if op[0] == "get":
            key = op[1]
            if key in cache:
                cache.move_to_end(key)
                out.append(cache[key])
            else:
                out.append(-1)
            continue
        _, key, value = op
        if capacity <= 0:
            continue
        if key in cache:
            cache.move_to_end(key)
        elif len(cache) == capacity:
            cache.popitem(last=False)
        cache[key] = value
    return out
