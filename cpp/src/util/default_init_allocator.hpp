// An allocator whose vectors leave new elements uninitialised, for buffers that a parallel pass fills.
#pragma once

#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace rebelboost::util {

// std::vector<T, DefaultInitAllocator<T>>::resize(n) default-initialises the new elements (for a byte or
// a number: leaves them as they are) instead of zeroing them: the pages of a large buffer are then first
// touched, and faulted in, by the threads of the parallel pass that writes every element, rather than
// zeroed on the calling thread beforehand (for the 2 M x 50 binned matrix, 100 MB of serial work).
template <typename T>
class DefaultInitAllocator : public std::allocator<T> {
 public:
  template <typename U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  using std::allocator<T>::allocator;

  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    std::allocator_traits<std::allocator<T>>::construct(static_cast<std::allocator<T>&>(*this), p, std::forward<Args>(args)...);
  }
};

}  // namespace rebelboost::util
