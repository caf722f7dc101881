// Moving from a const move-only object: std::move(p) is `const unique_ptr&&`, which binds only to the
// deleted copy constructor.
#include <memory>
#include <utility>

int main() {
    const std::unique_ptr<int> p = std::make_unique<int>(1);
    std::unique_ptr<int> q = std::move(p);
    return *q;
}
