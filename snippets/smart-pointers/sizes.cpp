// sizeof of the smart pointers, with and without a custom deleter.
#include <cstdio>
#include <functional>
#include <memory>
#include <type_traits>

struct Widget { int v[4]; };
void free_widget(Widget* p) { delete p; }

int main() {
    auto stateless = [](Widget* p) { delete p; };
    using ByLambda = std::unique_ptr<Widget, decltype(stateless)>;
    using ByFunctionPointer = std::unique_ptr<Widget, void (*)(Widget*)>;
    using ByStdFunction = std::unique_ptr<Widget, std::function<void(Widget*)>>;

    std::shared_ptr<Widget> plain = std::make_shared<Widget>();
    std::shared_ptr<Widget> custom(new Widget, free_widget);  // the deleter lives in the control block
    std::shared_ptr<Widget> copies[] = {plain, custom};      // one type: both fit in one array

    std::printf("raw=%zu\n", sizeof(Widget*));
    std::printf("unique=%zu\n", sizeof(std::unique_ptr<Widget>));
    std::printf("unique_lambda=%zu\n", sizeof(ByLambda));
    std::printf("unique_fnptr=%zu\n", sizeof(ByFunctionPointer));
    std::printf("unique_std_function=%zu\n", sizeof(ByStdFunction));
    std::printf("unique_deleter_in_type=%d\n", (int)!std::is_same<ByFunctionPointer, std::unique_ptr<Widget>>::value);
    std::printf("shared=%zu\n", sizeof(std::shared_ptr<Widget>));
    std::printf("weak=%zu\n", sizeof(std::weak_ptr<Widget>));
    std::printf("shared_custom=%zu\n", sizeof(custom));
    std::printf("shared_array_len=%zu\n", sizeof(copies) / sizeof(copies[0]));
    std::printf("custom_deleter_found=%d\n", (int)(std::get_deleter<void (*)(Widget*)>(custom) != nullptr));
    std::printf("plain_deleter_found=%d\n", (int)(std::get_deleter<void (*)(Widget*)>(plain) != nullptr));
}
