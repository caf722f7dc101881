"""Three ways to compute the same convolution: im2col + GEMM (and its memory), Winograd F(2,3) /
F(2×2,3×3) / F(4×4,3×3) with the standard transform matrices (Lavin & Gray), and FFT with the
flip and the zero padding that turn a circular product into ``conv2d``'s cross-correlation."""

from __future__ import annotations

import math
import random

import torch
import torch.nn.functional as F

from verify.claim import claim

Q = "conv-cost-and-algorithms"
C_IN, H, W, C_OUT, K = 64, 64, 128, 128, 3

# Winograd F(2,3): y = Aᵀ[(G g) ⊙ (Bᵀ d)]; F(4,3) from the same construction (points 0, ±1, ±2, ∞).
BT2 = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]]
G2 = [[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]]
AT2 = [[1, 1, 1, 0], [0, 1, -1, -1]]
BT4 = [[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0], [0, -2, -1, 2, 1, 0], [0, 2, -1, -2, 1, 0],
       [0, 4, 0, -5, 0, 1]]
G4 = [[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6], [1 / 24, 1 / 12, 1 / 6], [1 / 24, -1 / 12, 1 / 6],
      [0, 0, 1]]
AT4 = [[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0], [0, 1, -1, 8, -8, 1]]


@claim("conv.im2col-equals", kind="measured", question=Q,
       statement="im2col + GEMM：`F.unfold(x, 3, padding=1)` 把每个输出位置的 3×3×C_in 窗口摊成一列，得到 {cols_shape}；"
                 "`weight.view(128, -1) @ cols` 再加 bias、reshape 回去，与 `conv2d` 的最大差 {max_diff:.1e}（输出最大绝对值 "
                 "{out_max:.2f}）；两者与 float64 参考的差分别是 {err_conv:.1e} 和 {err_im2col:.1e}，都在 FP32 舍入的量级。",
       expect={"cols_shape": [1, 576, 8192], "max_diff": {"<": 1e-4}, "err_conv": {"<": 1e-4}, "err_im2col": {"<": 1e-4}})
def _(ctx):
    x = torch.randn(1, C_IN, H, W)
    w, b = torch.randn(C_OUT, C_IN, K, K) * 0.05, torch.randn(C_OUT) * 0.1
    cols = F.unfold(x, K, padding=1)
    y_im2col = (w.view(C_OUT, -1) @ cols + b.view(-1, 1)).view(1, C_OUT, H, W)
    y_conv = F.conv2d(x, w, b, padding=1)
    ref = F.conv2d(x.double(), w.double(), b.double(), padding=1)
    return {"cols_shape": list(cols.shape), "max_diff": (y_im2col - y_conv).abs().max().item(),
            "out_max": y_conv.abs().max().item(), "err_conv": (y_conv.double() - ref).abs().max().item(),
            "err_im2col": (y_im2col.double() - ref).abs().max().item()}


@claim("conv.im2col-memory", question=Q,
       statement="代价是内存：FP32 下输入 {input_bytes:bytes}，摊开的矩阵 {cols_bytes:bytes}，是输入的 {ratio:.0f} 倍"
                 "（stride 1 时每个像素被 K_h·K_w 个窗口各抄一份）；stride {=2} 时窗口数少到四分之一，是 {ratio_s2:.2f} 倍。",
       expect={"ratio": 9.0, "input_bytes": 64 * 64 * 128 * 4, "cols_bytes": 9 * 64 * 64 * 128 * 4, "ratio_s2": 2.25})
def _(ctx):
    x = torch.randn(1, C_IN, H, W)
    cols = F.unfold(x, K, padding=1)
    cols2 = F.unfold(x, K, padding=1, stride=2)
    nbytes = x.numel() * x.element_size()
    return {"input_bytes": nbytes, "cols_bytes": cols.numel() * cols.element_size(),
            "ratio": cols.numel() / x.numel(), "ratio_s2": cols2.numel() / x.numel()}


class Counted:
    """A number that counts the multiplications done with it (additions are free here)."""

    muls = 0

    def __init__(self, v):
        self.v = v

    @staticmethod
    def _v(o):
        return o.v if isinstance(o, Counted) else o

    def __mul__(self, o):
        Counted.muls += 1
        return Counted(self.v * self._v(o))

    __rmul__ = __mul__

    def __add__(self, o):
        return Counted(self.v + self._v(o))

    __radd__ = __add__

    def __sub__(self, o):
        return Counted(self.v - self._v(o))


def _pm1(mat, vec):
    """``mat @ vec`` for a matrix of 0 and ±1 only: additions and subtractions, no multiplication."""
    out = []
    for row in mat:
        assert set(row) <= {-1, 0, 1}
        acc = None
        for c, v in zip(row, vec):
            if c:
                acc = (v if c == 1 else Counted(0) - v) if acc is None else (acc + v if c == 1 else acc - v)
        out.append(acc)
    return out


def _filter_transform(g):
    """G g: done once per filter and reused by every tile, so not counted."""
    return [sum(c * x for c, x in zip(row, g)) for row in G2]


def _winograd_1d(d, g):
    u = _filter_transform(g)
    v = _pm1(BT2, d)
    m = [vi * ui for vi, ui in zip(v, u)]
    return _pm1(AT2, m)


def _direct_1d(d, g):
    return [d[i] * g[0] + d[i + 1] * g[1] + d[i + 2] * g[2] for i in range(2)]


def _winograd_2d(d, g):
    """F(2×2,3×3): Y = Aᵀ[(G g Gᵀ) ⊙ (Bᵀ d B)]A, the ±1 transforms applied to rows then columns."""
    u = [_filter_transform(col) for col in zip(*[_filter_transform(row) for row in g])]  # G g Gᵀ (4×4)
    v_rows = [_pm1(BT2, row) for row in d]  # d B for each row
    v = [_pm1(BT2, list(col)) for col in zip(*v_rows)]  # Bᵀ (d B), stored by column
    m = [[v[j][i] * u[j][i] for j in range(4)] for i in range(4)]
    y_rows = [_pm1(AT2, row) for row in m]
    return [_pm1(AT2, list(col)) for col in zip(*y_rows)]


def _direct_2d(d, g):
    return [[sum(d[i + a][j + b] * g[a][b] for a in range(3) for b in range(3)) for i in range(2)] for j in range(2)]


@claim("conv.winograd-1d", question=Q,
       statement="Winograd F(2,3)（2 个输出、3 抽头的一维卷积）：按标准的 Bᵀ、G、Aᵀ 矩阵实现，数据变换和输出变换只用加减，"
                 "滤波器变换每个滤波器做一次；一个 tile 数出 {wino_muls} 次乘法，直接算要 {direct_muls} 次。"
                 "在 {=1000} 组整数输入上两者{exact:?逐位相等|不全相等}。",
       expect={"wino_muls": 4, "direct_muls": 6, "exact": True})
def _(ctx):
    rng = random.Random(0)
    exact, counts = True, set()
    for _ in range(1000):
        d = [Counted(float(rng.randint(-9, 9))) for _ in range(4)]
        g = [float(rng.randint(-9, 9)) for _ in range(3)]
        Counted.muls = 0
        yw = _winograd_1d(d, g)
        nw = Counted.muls
        Counted.muls = 0
        yd = _direct_1d(d, g)
        counts.add((nw, Counted.muls))
        exact &= [y.v for y in yw] == [y.v for y in yd]
    (nw, nd), = counts
    return {"wino_muls": nw, "direct_muls": nd, "exact": exact}


@claim("conv.winograd-2d", question=Q,
       statement="二维 F(2×2,3×3) 把一维的变换嵌套到行和列：一个 4×4 的输入 tile 出 2×2 个输出，数出 {wino_muls} 次乘法，"
                 "直接算要 {direct_muls} 次（少 {saving:.2f} 倍）；在 {=200} 个整数 tile 上与 `F.conv2d` 的结果"
                 "{exact:?逐位相等|不全相等}（`conv2d` 算的是互相关，这组矩阵算的也是互相关）。",
       expect={"wino_muls": 16, "direct_muls": 36, "exact": True})
def _(ctx):
    rng = random.Random(1)
    exact, counts = True, set()
    for _ in range(200):
        d = [[Counted(float(rng.randint(-9, 9))) for _ in range(4)] for _ in range(4)]
        g = [[float(rng.randint(-9, 9)) for _ in range(3)] for _ in range(3)]
        Counted.muls = 0
        yw = _winograd_2d(d, g)
        nw = Counted.muls
        Counted.muls = 0
        _direct_2d(d, g)
        counts.add((nw, Counted.muls))
        ref = F.conv2d(torch.tensor([[r.v for r in row] for row in d], dtype=torch.float64).view(1, 1, 4, 4),
                       torch.tensor(g, dtype=torch.float64).view(1, 1, 3, 3)).view(2, 2)
        exact &= torch.equal(torch.tensor([[y.v for y in row] for row in yw], dtype=torch.float64).T, ref)
    (nw, nd), = counts
    return {"wino_muls": nw, "direct_muls": nd, "saving": nd / nw, "exact": exact}


def _winograd_conv(x, w, bt, g, at, dtype):
    """Winograd over a whole [C, H, W] image (valid conv, 3×3), the channel sum done in the transformed domain."""
    bt, g, at = (torch.tensor(m, dtype=dtype) for m in (bt, g, at))
    m, a = at.shape[0], bt.shape[0]
    u = torch.einsum("ik,ockl,jl->ocij", g, w, g)
    tiles = x.unfold(1, a, m).unfold(2, a, m)
    v = torch.einsum("ik,cxykl,jl->cxyij", bt, tiles, bt)
    y = torch.einsum("ik,oxykl,jl->oxyij", at, torch.einsum("ocij,cxyij->oxyij", u, v), at)
    o, th, tw = y.shape[:3]
    return y.permute(0, 1, 3, 2, 4).reshape(o, th * m, tw * m)


@claim("conv.winograd-error", kind="measured", question=Q,
       statement="tile 越大乘法越省、误差越大。在 {=64} 个输入通道、{=64} 个输出通道、{=34×34} 的随机图上，用同一段 FP32 代码"
                 "（输入变换、变换域里对通道求和、输出变换都是 `einsum`）整图做 Winograd，与 float64 参考比，均方根误差"
                 " F(2×2,3×3) 是 {rms_f2:.1e}（输出本身的均方根的 {f2_rel:.0e}，FP32 的精度），F(4×4,3×3) 是 {rms_f4:.1e}，"
                 "大 tile 是小 tile 的 {f4_over_f2:.1f} 倍：变换矩阵的系数更大，G 里的 1/6、1/24 在 FP32 里"
                 "也不能精确表示；"
                 "每个输出的乘法数分别是 {per_out_f2}、{per_out_f4}（直接卷积 {per_out_direct}）。float64 下 F(4×4,3×3) 也只在舍入内"
                 "相等（最大差 {f4_fp64:.0e}）。这台机器上 FP32 的 `F.conv2d` 均方根误差是 {rms_direct:.1e}：它取决于 CPU 后端"
                 "（oneDNN、MKL）的分块和累加顺序，不是直接卷积的数学定义所固有的，换一台机器可以比 F(2×2,3×3) 大，也可以比它小。",
       expect={"f4_over_f2": {">": 3}, "f2_rel": {"<": 1e-5}, "f4_fp64": {"<": 1e-9},
               "per_out_direct": 9, "per_out_f2": 4, "per_out_f4": 2.25})
def _(ctx):
    # Both tiles run through _winograd_conv, one FP32 code path: the ratio is the transforms' (their
    # larger coefficients), not a backend's accumulation order. The direct convolution is observed
    # only: how F.conv2d sums in FP32 depends on the CPU's kernels (an AVX2 EPYC's was 4x worse than
    # F(2x2,3x3), this machine's is not).
    x, w = torch.randn(64, 34, 34), torch.randn(64, 64, 3, 3)
    ref = F.conv2d(x.double()[None], w.double())[0]
    direct = F.conv2d(x[None], w)[0]
    f2 = _winograd_conv(x, w, BT2, G2, AT2, torch.float32)
    f4 = _winograd_conv(x, w, BT4, G4, AT4, torch.float32)
    f4_64 = _winograd_conv(x.double(), w.double(), BT4, G4, AT4, torch.float64)

    def rms(y):
        return (y.double() - ref).pow(2).mean().sqrt().item()

    return {"rms_direct": rms(direct), "rms_f2": rms(f2), "rms_f4": rms(f4), "f4_over_f2": rms(f4) / rms(f2),
            "f2_rel": rms(f2) / ref.pow(2).mean().sqrt().item(),
            "f4_fp64": (f4_64 - ref).abs().max().item(), "per_out_direct": 9, "per_out_f2": 16 / 4,
            "per_out_f4": 36 / 16}


def _fft_conv(x, w, size):
    """Pointwise product of 2-D FFTs, summed over input channels: a circular convolution of the given size."""
    xf, wf = torch.fft.rfft2(x, s=size), torch.fft.rfft2(w, s=size)
    return torch.fft.irfft2(torch.einsum("nchw,ochw->nohw", xf, wf), s=size)


@claim("conv.fft-equals", kind="measured", question=Q,
       statement="FFT 卷积（{=8} 进 {=4} 出、{=32×32}、{=7×7}，float64）：两边补零到 (H+K−1)×(W+K−1) 后频域逐点相乘再逆变换，"
                 "得到的是真正的卷积，与“把核翻转 180° 后的 `conv2d`、padding=K−1”的最大差 {err_flipped:.0e}；"
                 "不翻转直接比，差 {err_unflipped:.0f}，因为 `conv2d` 算的是互相关。要 `conv2d`（padding=3）的结果，"
                 "就先翻转核、再从中间裁出 H×W，最大差 {err_same:.0e}；不补零直接做 H×W 的 FFT 是循环卷积，边缘卷回另一侧，"
                 "裁剪后与 `conv2d` 差 {err_circular:.0f}。",
       expect={"err_flipped": {"<": 1e-9}, "err_unflipped": {">": 1}, "err_same": {"<": 1e-9}, "err_circular": {">": 1}})
def _(ctx):
    n, c, o, h, k = 1, 8, 4, 32, 7
    p = k // 2
    x = torch.randn(n, c, h, h, dtype=torch.float64)
    w = torch.randn(o, c, k, k, dtype=torch.float64)
    full = _fft_conv(x, w, (h + k - 1, h + k - 1))
    same = _fft_conv(x, w.flip(-1, -2), (h + k - 1, h + k - 1))[..., p:p + h, p:p + h]
    circular = torch.roll(_fft_conv(x, w.flip(-1, -2), (h, h)), shifts=(-p, -p), dims=(-2, -1))
    ref_same = F.conv2d(x, w, padding=p)
    return {"err_flipped": (full - F.conv2d(x, w.flip(-1, -2), padding=k - 1)).abs().max().item(),
            "err_unflipped": (full - F.conv2d(x, w, padding=k - 1)).abs().max().item(),
            "err_same": (same - ref_same).abs().max().item(),
            "err_circular": (circular - ref_same).abs().max().item(),
            "interior_circular": (circular - ref_same)[..., k:-k, k:-k].abs().max().item()}


def _fft_model(k, c, n=64, with_kernel=True):
    """FLOPs of one image under a stated model: a real 2-D FFT of P² points costs 2.5·P²·log2(P²) (half of the
    5·N·log2 N of a complex FFT), a complex multiply-add 8, P = n + k − 1; the direct conv 2·C²·K²·n²."""
    p = n + k - 1
    fft = 2.5 * p * p * math.log2(p * p)
    transforms = 2 * c * fft + (c * c * fft if with_kernel else 0)  # inputs, outputs (inverse), kernels
    pointwise = 8 * c * c * p * (p // 2 + 1)
    return 2 * c * c * k * k * n * n / (transforms + pointwise)


@claim("conv.fft-when-it-pays", question=Q,
       statement="什么时候划算（按一个写明的 FLOP 模型，{=64×64} 的图、每步都重新变换权重）：单个通道对时，直接卷积与 FFT 的"
                 " FLOP 之比在 K = 3、7、11 时是 {single_k3:.2f}、{single_k7:.2f}、{single_k11:.2f}，K 大了才划算；"
                 "{=64} 进 {=64} 出时输入和输出的变换被通道摊薄，比值是 {multi_k3:.2f}、{multi_k7:.2f}、{multi_k11:.2f}；"
                 "推理时权重的频域形式可以预先算好，K = 3 也有 {cached_k3:.2f}。FLOP 之外的代价是内存：K = 3 时频域里的一个核"
                 "要存 P·(P/2+1) 个复数（P = 66），是 3×3 个实数的 {kernel_blowup:.0f} 倍（同为 FP32）。",
       expect={"single_k3": {"<": 1}, "single_k7": {"<": 1}, "single_k11": {">": 1}, "multi_k11": {">": 1},
               "cached_k3": {">": 1}, "kernel_blowup": {">": 100}})
def _(ctx):
    out = {}
    for k in (3, 7, 11):
        out[f"single_k{k}"] = _fft_model(k, 1)
        out[f"multi_k{k}"] = _fft_model(k, 64)
    out["cached_k3"] = _fft_model(3, 64, with_kernel=False)
    p = 64 + 3 - 1
    out["kernel_blowup"] = (p * (p // 2 + 1) * 2) / 9
    return out
