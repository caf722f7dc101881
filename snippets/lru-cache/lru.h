// Two O(1) LRU caches. LRU: a std::list in recency order (front = most recently used) and a map from key to
// the list node; the map type is a policy, so the same code runs on std::unordered_map and on std::map.
// HandLRU: the same with a hand-written doubly linked list (a sentinel node, raw prev/next pointers).
#pragma once
#include <cstddef>
#include <list>
#include <optional>
#include <unordered_map>
#include <utility>

template <class K, class V, class MapPolicy>
class LRU {
public:
    using List = std::list<std::pair<K, V>>;
    using Map = typename MapPolicy::template map<K, typename List::iterator>;

    explicit LRU(std::size_t capacity) : capacity_(capacity) {}

    std::optional<V> get(const K& key) {
        auto hit = index_.find(key);
        if (hit == index_.end()) return std::nullopt;
        items_.splice(items_.begin(), items_, hit->second);  // O(1): relinks the node, the iterator stays valid
        return hit->second->second;
    }

    // Insert or update; returns the key evicted to make room, if any.
    std::optional<K> put(const K& key, V value) {
        auto hit = index_.find(key);
        if (hit != index_.end()) {
            hit->second->second = std::move(value);
            items_.splice(items_.begin(), items_, hit->second);
            return std::nullopt;
        }
        std::optional<K> evicted;
        if (items_.size() == capacity_) {
            evicted = items_.back().first;
            index_.erase(items_.back().first);
            items_.pop_back();
        }
        items_.emplace_front(key, std::move(value));
        index_.emplace(key, items_.begin());
        return evicted;
    }

    std::size_t size() const { return items_.size(); }
    const Map& index() const { return index_; }

    // The invariants: one map entry per list node, each pointing at the node with its key, within capacity.
    bool consistent() const {
        if (index_.size() != items_.size() || items_.size() > capacity_) return false;
        for (auto it = items_.begin(); it != items_.end(); ++it) {
            auto found = index_.find(it->first);
            if (found == index_.end() || found->second != it) return false;
        }
        return true;
    }

private:
    std::size_t capacity_;
    List items_;
    Map index_;
};

template <class K, class V>
class HandLRU {
    struct Node {
        K key{};
        V value{};
        Node* prev = nullptr;
        Node* next = nullptr;
    };

public:
    explicit HandLRU(std::size_t capacity) : capacity_(capacity) { head_.prev = head_.next = &head_; }
    HandLRU(const HandLRU&) = delete;
    HandLRU& operator=(const HandLRU&) = delete;
    ~HandLRU() {
        for (Node* n = head_.next; n != &head_;) {
            Node* next = n->next;
            delete n;
            n = next;
        }
    }

    std::optional<V> get(const K& key) {
        auto hit = index_.find(key);
        if (hit == index_.end()) return std::nullopt;
        Node* n = hit->second;
        unlink(n);  // a read of the cache writes four pointers
        push_front(n);
        return n->value;
    }

    std::optional<K> put(const K& key, V value) {
        auto hit = index_.find(key);
        if (hit != index_.end()) {
            hit->second->value = std::move(value);
            unlink(hit->second);
            push_front(hit->second);
            return std::nullopt;
        }
        std::optional<K> evicted;
        if (index_.size() == capacity_) {
            Node* last = head_.prev;  // least recently used
            unlink(last);
            index_.erase(last->key);
            evicted = last->key;
            delete last;
        }
        Node* n = new Node{key, std::move(value)};
        push_front(n);
        index_.emplace(key, n);
        return evicted;
    }

    std::size_t size() const { return index_.size(); }

    bool consistent() const {
        std::size_t count = 0;
        for (const Node* n = head_.next; n != &head_; n = n->next) {
            if (n->next->prev != n) return false;
            auto found = index_.find(n->key);
            if (found == index_.end() || found->second != n) return false;
            ++count;
        }
        return count == index_.size() && count <= capacity_;
    }

private:
    void unlink(Node* n) {
        n->prev->next = n->next;
        n->next->prev = n->prev;
    }
    void push_front(Node* n) {
        n->next = head_.next;
        n->prev = &head_;
        head_.next->prev = n;
        head_.next = n;
    }

    std::size_t capacity_;
    Node head_;  // sentinel: head_.next is the most recent node, head_.prev the least recent
    std::unordered_map<K, Node*> index_;
};
