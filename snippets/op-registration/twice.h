#pragma once

// The definition is in the header: every file that uses twice<T> can instantiate it.
template <typename T>
T twice(T x) {
  return x + x;
}
