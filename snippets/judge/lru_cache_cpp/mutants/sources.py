"""The C++ files of this folder, named here so that they key the problem's claim (verify.core.registry)."""

FILES = ("evicts_most_recent.h", "get_no_refresh.h", "put_existing_evicts.h", "put_existing_no_refresh.h", "use_after_free.h",
         "zero_capacity_evicts.h")
