#pragma once
/// Shared<T>: a value many owners read and (almost) nobody writes, copied only on write.
/// Nodes with the same groups have the same merged desired state; a 10,000-node inventory in a
/// handful of groups would otherwise hold 10,000 deep copies of it (~150 MB, 0.09 s to copy).
/// Copying a Shared<T> shares the value; Mut() makes this owner's copy private first.
/// Reads are safe from any thread; Mut() is for the single-threaded loader (and tests).
#include <memory>
#include <utility>

namespace plumb::inventory {

template <class T>
class Shared {
 public:
  Shared() : p_(std::make_shared<T>()) {}
  Shared(T value) : p_(std::make_shared<T>(std::move(value))) {}  // NOLINT: implicit by design
  Shared& operator=(T value) {
    p_ = std::make_shared<T>(std::move(value));
    return *this;
  }

  const T& operator*() const { return *p_; }
  const T* operator->() const { return p_.get(); }
  operator const T&() const { return *p_; }  // NOLINT: reads look like reads of a T

  /// The value, for writing: copied first if another owner shares it.
  T& Mut() {
    if (p_.use_count() > 1) p_ = std::make_shared<T>(*p_);
    return *p_;
  }
  /// True when both hold the very same value (not merely equal ones): work done for one holds
  /// for the other.
  bool SameAs(const Shared& other) const { return p_ == other.p_; }
  /// Identity for caches keyed by shared value.
  const void* Id() const { return p_.get(); }

 private:
  std::shared_ptr<T> p_;
};

}  // namespace plumb::inventory
