// unique_ptr is move-only: this file does not compile.
#include <memory>

int main() {
    std::unique_ptr<int> a = std::make_unique<int>(1);
    std::unique_ptr<int> b = a;  // copy
    return *b;
}
