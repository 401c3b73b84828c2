#pragma once
/// Result<T>: a value or the Diagnostic that explains why there is none. tl::expected is not
/// packaged in Debian 12, and this is all plumb needs of it.
#include <cassert>
#include <utility>
#include <variant>

#include "schemas/diagnostics.h"

namespace plumb {

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  Result(Diagnostic error) : v_(std::in_place_index<1>, std::move(error)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { assert(ok()); return std::get<0>(v_); }
  const T& value() const& { assert(ok()); return std::get<0>(v_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Diagnostic& error() const { assert(!ok()); return std::get<1>(v_); }

 private:
  std::variant<T, Diagnostic> v_;
};

struct Ok {};
/// A result with no value: success, or the reason for failure.
using Status = Result<Ok>;
inline Status OkStatus() { return Ok{}; }

}  // namespace plumb
