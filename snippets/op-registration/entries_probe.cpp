// Which entries a KernelFunction gets from each factory, read at run time with
// isValidUnboxed() (unboxed_kernel_func_) and isValidSymUnboxed() (sym_unboxed_kernel_func_).
// Order of probe(): function without SymInt, function with SymInt, boxed function, boxed functor,
// fallthrough.
#include <ATen/core/boxing/KernelFunction.h>
#include <ATen/core/stack.h>
#include <torch/library.h>

namespace {

at::Tensor plain_sig(const at::Tensor& x, int64_t) { return x; }
at::Tensor symint_sig(const at::Tensor& x, c10::SymInt) { return x; }
void boxed_fn(const c10::OperatorHandle&, torch::jit::Stack*) {}
struct BoxedFunctor final : c10::OperatorKernel {
  void operator()(const c10::OperatorHandle&, c10::DispatchKeySet, torch::jit::Stack*) {}
};

// bit 0: unboxed_kernel_func_ set; bit 1: sym_unboxed_kernel_func_ set
int64_t entries(const c10::KernelFunction& k) {
  return (k.isValidUnboxed() ? 1 : 0) | (k.isValidSymUnboxed() ? 2 : 0);
}

std::vector<int64_t> probe() {
  using KF = c10::KernelFunction;
  return {entries(KF::makeFromUnboxedFunction(TORCH_FN(plain_sig))),
          entries(KF::makeFromUnboxedFunction(TORCH_FN(symint_sig))),
          entries(KF::makeFromBoxedFunction<&boxed_fn>()),
          entries(KF::makeFromBoxedFunctor(std::make_unique<BoxedFunctor>())),
          entries(KF::makeFallthrough())};
}

}  // namespace

// The same two signatures registered as CPU kernels, to compare with the dispatcher's dump.
TORCH_LIBRARY(opreg_entries, m) {
  m.def("probe() -> int[]", &probe);
  m.def("plain(Tensor x, int n) -> Tensor");
  m.def("sym(Tensor x, SymInt n) -> Tensor");
}

TORCH_LIBRARY_IMPL(opreg_entries, CPU, m) {
  m.impl("plain", &plain_sig);
  m.impl("sym", &symint_sig);
}
