// Typed errors thrown by the rebelboost core; bindings map them to Python exceptions with the same text.
#pragma once

#include <stdexcept>
#include <string>

namespace rebelboost {

// Base of every error the library throws on purpose.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// A caller passed data or parameters that violate a documented precondition (maps to ValueError).
class InvalidArgument : public Error {
 public:
  explicit InvalidArgument(const std::string& what) : Error(what) {}
};

// A model file or buffer is truncated, corrupt or hostile (maps to ValueError).
class ModelFileError : public Error {
 public:
  explicit ModelFileError(const std::string& what) : Error(what) {}
};

// The operating system refused an I/O operation (maps to OSError).
class IoError : public Error {
 public:
  explicit IoError(const std::string& what) : Error(what) {}
};

}  // namespace rebelboost
