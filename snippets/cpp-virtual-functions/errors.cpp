// Declarations g++ refuses (compiled with -fsyntax-only; every error is reported in one pass).
struct VirtualCtor {
    virtual VirtualCtor();                      // a constructor cannot be virtual
};
struct VirtualTemplate {
    template <class T> virtual void f(T);       // a member template cannot be virtual
};
struct VirtualStatic {
    virtual static void g();                    // a static member function has no this, no vptr
};
extern "C" int h(int);
extern "C" int h(double);                       // extern "C": one unmangled name, so no overloading
struct ProtectedBase {
protected:
    ~ProtectedBase() {}                         // not virtual, not public: deleting through a base pointer is refused
};
struct ProtectedDerived : ProtectedBase {};
void drop(ProtectedBase* p) { delete p; }
