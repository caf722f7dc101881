// A sequential scan, y[i] = decay * y[i-1] + x[i]: each step needs the previous one, so it
// cannot be written as one vectorised tensor op; in Python it is a loop over elements.
// Registered through the dispatcher, so Python calls it as torch.ops.po_ext.decay_scan.
#include <torch/library.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty_like.h>

namespace {

at::Tensor decay_scan(const at::Tensor& x, double decay) {
  TORCH_CHECK(x.dim() == 1 && x.scalar_type() == at::kDouble && x.is_contiguous(),
              "decay_scan expects a contiguous 1-D float64 tensor");
  at::Tensor y = at::empty_like(x);
  const double* in = x.const_data_ptr<double>();
  double* out = y.mutable_data_ptr<double>();
  double acc = 0.0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    acc = decay * acc + in[i];
    out[i] = acc;
  }
  return y;
}

}  // namespace

TORCH_LIBRARY(po_ext, m) {
  m.def("decay_scan(Tensor x, float decay) -> Tensor");
}

TORCH_LIBRARY_IMPL(po_ext, CPU, m) {
  m.impl("decay_scan", &decay_scan);
}
