// A priority queue of entries ordered by their operator<, least first: the engine's queues of
// what happens next (task ends, timed events, activity completions).
//
// A 4-ary heap in one array: entry i's children are 4i + 1 to 4i + 4, and no child is less than
// its parent. Its depth is half a binary heap's, so a push or a pop moves an entry half as many
// times; a pop compares four children a level, which sit in one or two cache lines. Push and pop
// cost O(log n). Entries that compare equal come out in no particular order: the engine's queues
// key every entry uniquely, so the order in which they come out is fixed by the keys alone.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace orrery::engine {

template <class Entry>
class MinHeap {
 public:
  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }
  const Entry& top() const { return entries_.front(); }

  void push(Entry entry) {
    size_t at = entries_.size();
    entries_.push_back(entry);
    while (at > 0) {
      const size_t parent = (at - 1) / 4;
      if (!(entry < entries_[parent])) break;
      entries_[at] = std::move(entries_[parent]);
      at = parent;
    }
    entries_[at] = std::move(entry);
  }

  void pop() {
    Entry last = std::move(entries_.back());
    entries_.pop_back();
    const size_t n = entries_.size();
    if (n == 0) return;
    size_t at = 0;
    while (true) {
      const size_t first = 4 * at + 1;
      if (first >= n) break;
      size_t least = first;
      if (first + 4 <= n) {  // four children: the lesser of each pair's least
        const size_t a = entries_[first + 1] < entries_[first] ? first + 1 : first;
        const size_t b = entries_[first + 3] < entries_[first + 2] ? first + 3 : first + 2;
        least = entries_[b] < entries_[a] ? b : a;
      } else {
        for (size_t c = first + 1; c < n; ++c)
          if (entries_[c] < entries_[least]) least = c;
      }
      if (!(entries_[least] < last)) break;
      entries_[at] = std::move(entries_[least]);
      at = least;
    }
    entries_[at] = std::move(last);
  }

 private:
  std::vector<Entry> entries_;
};

}  // namespace orrery::engine
