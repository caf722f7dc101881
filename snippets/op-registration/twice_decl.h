#pragma once

// Only a declaration: whoever includes this cannot instantiate twice<T> by itself.
template <typename T>
T twice(T x);
