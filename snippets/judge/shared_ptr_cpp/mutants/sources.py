"""The C++ files of this folder, named here so that they key the problem's claim (verify.core.registry)."""

FILES = ("copy_assign_leaks.h", "move_keeps_source.h", "self_assign_frees.h")
