// What stops g++ from optimising: each pair differs in one attribute or qualifier.
// extern "C" keeps the symbols' names plain for objdump; every caller does more than return the call,
// so a call is a `call`, never a tail `jmp`.

extern "C" {

int add_plain(int a, int b) { return a + b; }
__attribute__((noinline)) int add_noinline(int a, int b) { return a + b; }

int use_plain(int x) { return add_plain(x, 1) * 3; }
int use_noinline(int x) { return add_noinline(x, 1) * 3; }

// noinline keeps the call, not the caller's knowledge of the callee: g++ still sees that sq_noinline
// reads no memory and merges the two calls; noipa hides the body from every interprocedural pass.
__attribute__((noinline)) int sq_noinline(int x) { return x * x; }
__attribute__((noipa)) int sq_noipa(int x) { return x * x; }

int twice_noinline(int x) { return sq_noinline(x) + sq_noinline(x) + 1; }
int twice_noipa(int x) { return sq_noipa(x) + sq_noipa(x) + 1; }

// volatile: every access stays, in order; nothing else about the function changes
int read3(int* p) { return *p + *p + *p; }
int read3_volatile(volatile int* p) { return *p + *p + *p; }

int sum_beside_volatile(volatile int* p) {
    int s = 0;
    for (int i = 0; i < 100; ++i) s += i;  // still folded to a constant
    return s + *p;
}

// an empty asm with a "memory" clobber: the compiler must assume it reads and writes any memory
int g_value;
void store_twice(void) { g_value = 1; g_value = 2; }
void store_twice_barrier(void) { g_value = 1; __asm__ __volatile__("" ::: "memory"); g_value = 2; }

// a computation whose result is unused disappears; handing it to an empty asm keeps it
void discard(int n) { for (int i = 0; i < n; ++i) { int r = i * i; (void)r; } }
void keep(int n) { for (int i = 0; i < n; ++i) { int r = i * i; __asm__ __volatile__("" : : "r"(r)); } }

// GCC's own switch for one function (clang spells it optnone, which g++ ignores with a warning)
__attribute__((optimize("O0"))) int sum_o0(int n) { int s = 0; for (int i = 0; i < n; ++i) s += i; return s; }
__attribute__((optnone)) int sum_optnone(int n) { int s = 0; for (int i = 0; i < n; ++i) s += i; return s; }
int sum_plain(int n) { int s = 0; for (int i = 0; i < n; ++i) s += i; return s; }

}
