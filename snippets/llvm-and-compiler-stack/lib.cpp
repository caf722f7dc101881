// A tiny shared library: argN returns its N-th argument, so its body shows where that argument arrives.
#define ARGS long a1, long a2, long a3, long a4, long a5, long a6, long a7
extern "C" {
long arg1(ARGS) { (void)a2; (void)a3; (void)a4; (void)a5; (void)a6; (void)a7; return a1; }
long arg2(ARGS) { (void)a1; (void)a3; (void)a4; (void)a5; (void)a6; (void)a7; return a2; }
long arg3(ARGS) { (void)a1; (void)a2; (void)a4; (void)a5; (void)a6; (void)a7; return a3; }
long arg4(ARGS) { (void)a1; (void)a2; (void)a3; (void)a5; (void)a6; (void)a7; return a4; }
long arg5(ARGS) { (void)a1; (void)a2; (void)a3; (void)a4; (void)a6; (void)a7; return a5; }
long arg6(ARGS) { (void)a1; (void)a2; (void)a3; (void)a4; (void)a5; (void)a7; return a6; }
long arg7(ARGS) { (void)a1; (void)a2; (void)a3; (void)a4; (void)a5; (void)a6; return a7; }

// inner is exported: another library loaded first may define it (interposition), so outer may not
// assume this body unless told so (-fno-semantic-interposition, or hidden visibility)
long inner(long x) { return 3 * x; }
long outer(long x) { return inner(x) + 1; }
}
