"""Reference for lfu-cache-cpp: an OrderedDict of keys per frequency (its end the most recent) and the lowest
frequency that has keys; the results of the gets."""

from collections import OrderedDict, defaultdict


def reference(capacity, ops):
    values, freq = {}, {}
    buckets = defaultdict(OrderedDict)
    lowest = 0
    out = []

    def touch(key):
        nonlocal lowest
        f = freq[key]
        del buckets[f][key]
        if not buckets[f]:
            del buckets[f]
            if lowest == f:
                lowest = f + 1
        freq[key] = f + 1
        buckets[f + 1][key] = None

    for op in ops:
        if op[0] == "get":
            key = op[1]
            if key in values:
                touch(key)
                out.append(values[key])
            else:
                out.append(-1)
            continue
        _, key, value = op
        if capacity <= 0:
            continue
        if key in values:
            values[key] = value
            touch(key)
            continue
        if len(values) == capacity:
            victim, _ = buckets[lowest].popitem(last=False)
            if not buckets[lowest]:
                del buckets[lowest]
            del values[victim], freq[victim]
        values[key], freq[key] = value, 1
        buckets[1][key] = None
        lowest = 1
    return out
