// A minimal operator registry: name -> function, filled by static objects before main().
#pragma once

using OpFn = int (*)(int);

// C linkage so that Python (ctypes) can query the registry too.
extern "C" {
int opreg_count();
const char* opreg_name(int i);
int opreg_call(const char* name, int x);
}

bool opreg_add(const char* name, OpFn fn);

// The whole trick: the macro defines a file-scope static object; its constructor registers
// the op. Nothing ever refers to the object, yet C++ constructs it during static
// initialisation, i.e. before main() or while a shared library is being loaded.
struct OpRegistrar {
  OpRegistrar(const char* name, OpFn fn) { opreg_add(name, fn); }
};

#define REGISTER_OP(name, fn) static const OpRegistrar opreg_registrar_##name(#name, fn)
