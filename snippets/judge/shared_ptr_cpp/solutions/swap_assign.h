#pragma once
#include <utility>

// The object and a separately allocated count; one assignment taking its argument by value (copy and swap):
// the copy or move happens before anything is let go, so self-assignment is safe without a check.
template <class T>
class SharedPtr {
public:
    explicit SharedPtr(T* p) : ptr_(p), count_(new long(1)) {}
    SharedPtr(const SharedPtr& other) : ptr_(other.ptr_), count_(other.count_) {
        if (count_) ++*count_;
    }
    SharedPtr(SharedPtr&& other) noexcept
        : ptr_(std::exchange(other.ptr_, nullptr)), count_(std::exchange(other.count_, nullptr)) {}
    SharedPtr& operator=(SharedPtr other) noexcept {
        std::swap(ptr_, other.ptr_);
        std::swap(count_, other.count_);
        return *this;
    }
    ~SharedPtr() {
        if (count_ && --*count_ == 0) {
            delete ptr_;
            delete count_;
        }
    }

    long use_count() const { return count_ ? *count_ : 0; }
    T* get() const { return ptr_; }

private:
    T* ptr_;
    long* count_;
};
