// Deleting a Derived through a Base* whose destructor is not virtual, built with -fsanitize=address.
#include <cstdio>

struct NB { ~NB() {} long a = 0; };
struct ND : NB { ~ND() { std::puts("ND::~ND"); } long extra[3] = {}; };

int main() {
    std::printf("sizeof.nb=%zu\nsizeof.nd=%zu\n", sizeof(NB), sizeof(ND));
    std::fflush(stdout);
    NB* p = new ND;
    delete p;  // undefined behaviour: the static type's destructor is not virtual
    std::puts("after_delete=1");
}
