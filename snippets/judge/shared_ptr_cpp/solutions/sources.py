"""The C++ files of this folder, named here so that they key the problem's claim (verify.core.registry)."""

FILES = ("control_block.h", "swap_assign.h")
