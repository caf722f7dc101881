// The tiny add called from C++, without Python: one call runs one variant n times back to back,
// so Python pays one call per n adds. Each variant peels off one more layer:
//   0  at::add(a, b)                      the dispatcher (Autograd kernel, then CPU), a new output
//   1  at::add(a, b) under InferenceMode  the dispatcher without the Autograd layer
//   2  at::cpu::add(a, b)                 no dispatcher: the CPU kernel's own entry point
//   3  at::cpu::add_out(out, a, b)        no dispatcher, no new output: TensorIterator and the loop
//   4  at::add_out(out, a, b)             the dispatcher, no new output
//   5  a.view({1})                        the dispatcher and a new TensorImpl, no computation
// Registered as a CompositeImplicitAutograd kernel, so the dispatcher calls it without excluding
// any key: the ops inside see the dispatch state that ops called from Python see.
#include <torch/library.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/add.h>
#include <ATen/ops/add_cpu_dispatch.h>
#include <ATen/ops/view.h>
#include <c10/core/InferenceMode.h>
#include <c10/core/DispatchKeySet.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

namespace {

bool autograd_excluded() {
  return c10::impl::tls_local_dispatch_key_set().excluded_.has_any(c10::autograd_dispatch_keyset);
}

// Returns whether the Autograd keys were excluded while the loop ran: a caller checks that only
// the InferenceMode variant skips it.
bool add_loop(const at::Tensor& a, const at::Tensor& b, at::Tensor out, int64_t variant, int64_t n) {
  switch (variant) {
    case 0:
      for (int64_t i = 0; i < n; ++i) at::add(a, b);
      return autograd_excluded();
    case 1: {
      c10::InferenceMode guard;
      for (int64_t i = 0; i < n; ++i) at::add(a, b);
      return autograd_excluded();
    }
    case 2:
      for (int64_t i = 0; i < n; ++i) at::cpu::add(a, b);
      return autograd_excluded();
    case 3:
      for (int64_t i = 0; i < n; ++i) at::cpu::add_out(out, a, b);
      return autograd_excluded();
    case 4:
      for (int64_t i = 0; i < n; ++i) at::add_out(out, a, b);
      return autograd_excluded();
    case 5:
      for (int64_t i = 0; i < n; ++i) a.view({1});
      return autograd_excluded();
    default:
      TORCH_CHECK(false, "add_loop: unknown variant ", variant);
  }
}

}  // namespace

TORCH_LIBRARY(po_bench, m) {
  m.def("add_loop(Tensor a, Tensor b, Tensor(a!) out, int variant, int n) -> bool");
}

TORCH_LIBRARY_IMPL(po_bench, CompositeImplicitAutograd, m) {
  m.impl("add_loop", &add_loop);
}
