"""The C++ files of this folder, named here so that they key the problem's claim (verify.core.registry)."""

FILES = ("min_freq_not_reset.h", "put_existing_evicts.h", "put_existing_no_bump.h", "tie_evicts_most_recent.h")
