"""The C++ files of this folder, named here so that they key the problem's claim (verify.core.registry)."""

FILES = ("lock_released_early.h", "pop_forgets_notify.h", "push_ignores_capacity.h")
