"""Claim helpers for GPU knowledge without a GPU: compiled code, simulated kernels, published specs.

Each helper writes what it did into the claim's observation ``evidence`` (:mod:`.note`): its kind,
the architectures, the tools and their pinned versions (:mod:`verify.toolchain`), the GPUs whose
specifications it used. The page marks such a claim 已编译 / 已模拟 / 按规格计算, never as run on a GPU.
"""
