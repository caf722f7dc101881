#pragma once

// Bug: copy-assignment takes the other's object without letting go of its own.
template <class T>
class SharedPtr {
public:
    explicit SharedPtr(T* p) : ptr_(p), count_(new long(1)) {}
    SharedPtr(const SharedPtr& other) : ptr_(other.ptr_), count_(other.count_) {
        if (count_) ++*count_;
    }
    SharedPtr(SharedPtr&& other) noexcept : ptr_(other.ptr_), count_(other.count_) {
        other.ptr_ = nullptr;
        other.count_ = nullptr;
    }
    SharedPtr& operator=(const SharedPtr& other) {
        ptr_ = other.ptr_;
        count_ = other.count_;
        if (count_) ++*count_;
        return *this;
    }
    SharedPtr& operator=(SharedPtr&& other) noexcept {
        if (this == &other) return *this;
        release();
        ptr_ = other.ptr_;
        count_ = other.count_;
        other.ptr_ = nullptr;
        other.count_ = nullptr;
        return *this;
    }
    ~SharedPtr() { release(); }

    long use_count() const { return count_ ? *count_ : 0; }
    T* get() const { return ptr_; }

private:
    void release() {
        if (count_ && --*count_ == 0) {
            delete ptr_;
            delete count_;
        }
        ptr_ = nullptr;
        count_ = nullptr;
    }

    T* ptr_;
    long* count_;
};
