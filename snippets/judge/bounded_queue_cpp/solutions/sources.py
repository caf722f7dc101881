"""The C++ files of this folder, named here so that they key the problem's claim (verify.core.registry)."""

FILES = ("ring_one_condition.h", "two_conditions.h")
