"""The C++ files of this folder, named here so that they key the problem's claim (verify.core.registry)."""

FILES = ("bucket_list.h", "freq_buckets.h")
