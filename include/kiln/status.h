// Public error type of kiln: Status and Result<T>. No exception crosses the API;
// every failure that comes from a model, a file or a user is a Status whose
// message names the node, op, value or file involved.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace kiln {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument = 1,  // bad user input: wrong name, shape, dtype, option
  kInvalidModel = 2,     // the model itself is malformed
  kNotFound = 3,         // file or name missing
  kUnimplemented = 4,    // valid, but kiln does not support it (yet)
  kIoError = 5,
  kOutOfRange = 6,
  kInternal = 7,         // a kiln bug
  kResourceExhausted = 8,
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "InvalidModel: node 'conv' (Conv): ..."
  std::string ToString() const;
  // Returns a copy whose message is prefixed by `context` + ": ".
  Status WithContext(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status InvalidModel(std::string m) { return {StatusCode::kInvalidModel, std::move(m)}; }
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status Unimplemented(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }
inline Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
inline Status OutOfRange(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
inline Status ResourceExhausted(std::string m) { return {StatusCode::kResourceExhausted, std::move(m)}; }

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {
    if (std::get<Status>(v_).ok()) v_ = Status(StatusCode::kInternal, "Result built from an OK status");
  }
  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace kiln

#define KILN_CONCAT_IMPL_(a, b) a##b
#define KILN_CONCAT_(a, b) KILN_CONCAT_IMPL_(a, b)

#define KILN_RETURN_IF_ERROR(expr)            \
  do {                                        \
    ::kiln::Status kiln_status_ = (expr);     \
    if (!kiln_status_.ok()) return kiln_status_; \
  } while (0)

#define KILN_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()

// Expands to several statements: inside if/for/else always use braces.
#define KILN_ASSIGN_OR_RETURN(lhs, expr) \
  KILN_ASSIGN_OR_RETURN_IMPL_(KILN_CONCAT_(kiln_result_, __LINE__), lhs, expr)
