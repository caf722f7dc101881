"""Reference for bounded-queue-cpp: what the driver records for a correct queue (see driver.cpp)."""


def reference(kind, capacity, producers, consumers, n):
    if kind == "fifo":
        return list(range(2 * capacity))
    if kind == "full":  # the extra push blocked, then every value leaves in order
        return [1, *range(capacity + 1)]
    if kind == "empty":  # the pop blocked, then got the value pushed
        return [1, 7]
    return [producers * n, 0, 0, 0]  # every value popped once, in each producer's order, never past capacity
