// A tiny operator library registered with the dispatcher through TORCH_LIBRARY.
// Only <torch/library.h> is included: the full extension header (pybind11, all of
// torch/extension.h) would cost several times the compile time and is not needed,
// because registration needs no Python binding at all.
#include <torch/library.h>

#include <atomic>
#include <cstdint>
#include <vector>

namespace {

std::atomic<int64_t> cpu_calls{0};
std::atomic<int64_t> cuda_calls{0};

// CPU kernel: an explicit loop over the contiguous float data.
at::Tensor twice_cpu(const at::Tensor& x) {
  TORCH_CHECK(x.scalar_type() == at::kFloat, "twice: expected float32, got ", x.scalar_type());
  cpu_calls++;
  at::Tensor in = x.contiguous();
  at::Tensor out = in.clone();
  const float* src = in.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  for (int64_t i = 0; i < in.numel(); ++i) dst[i] = 2.0f * src[i];
  return out;
}

// CUDA kernel: built from ATen calls, so this file compiles without nvcc; on a CUDA
// tensor the dispatcher picks this entry instead of the CPU one.
at::Tensor twice_cuda(const at::Tensor& x) {
  cuda_calls++;
  return x.mul(2);
}

std::vector<int64_t> kernel_calls() { return {cpu_calls.load(), cuda_calls.load()}; }

}  // namespace

// Expands to a static object whose constructor runs when this shared library is loaded:
// it adds the schemas to the dispatcher's table.
TORCH_LIBRARY(opreg_demo, m) {
  m.def("twice(Tensor x) -> Tensor");
  // A function given with def() becomes a CompositeImplicitAutograd kernel: it serves every key.
  m.def("kernel_calls() -> int[]", &kernel_calls);
}

// One more static object per (library, dispatch key): fills that column of the table.
TORCH_LIBRARY_IMPL(opreg_demo, CPU, m) { m.impl("twice", &twice_cpu); }

TORCH_LIBRARY_IMPL(opreg_demo, CUDA, m) { m.impl("twice", &twice_cuda); }
