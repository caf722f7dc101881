"""The C++ files of this folder, named here so that they key the problem's claim (verify.core.registry)."""

FILES = ("hand_list.h", "list_map.h")
