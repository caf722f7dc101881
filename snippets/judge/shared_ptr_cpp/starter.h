#pragma once
#include <utility>

template <class T>
class SharedPtr {
public:
    explicit SharedPtr(T* p) : ptr_(p) {}  // TODO: 计数
    SharedPtr(const SharedPtr& other) : ptr_(other.ptr_) {}  // TODO
    SharedPtr(SharedPtr&& other) noexcept : ptr_(other.ptr_) {}  // TODO
    SharedPtr& operator=(const SharedPtr& other) {
        (void)other;  // TODO
        return *this;
    }
    SharedPtr& operator=(SharedPtr&& other) noexcept {
        (void)other;  // TODO
        return *this;
    }
    ~SharedPtr() {}  // TODO

    long use_count() const { return 0; }  // TODO
    T* get() const { return ptr_; }

private:
    T* ptr_ = nullptr;
};
