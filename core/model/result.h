// Errors as values: nothing in core prints or exits.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace streamscope {

// What went wrong, where: `file: /json/path: message`. Every field but message may be empty.
struct Error {
    std::string file;
    std::string path; // JSON pointer, e.g. /threads/1/ops/3/stream; or "byte 1234", "row 7" for other formats
    std::string message;

    std::string toString() const
    {
        std::string s;
        if (!file.empty())
            s += file + ": ";
        if (!path.empty())
            s += path + ": ";
        s += message;
        return s;
    }
};

// A legal but suspicious thing found while reading input (same shape as Error).
using Warning = Error;

// The class of a failure, so the CLI can map it to its exit code.
enum class ErrorClass { BadInput, Runtime };

template <typename T>
class Result {
public:
    Result(T value) : m_value(std::move(value)) {}
    Result(Error error, ErrorClass cls = ErrorClass::BadInput) : m_error(std::move(error)), m_class(cls) {}

    bool ok() const { return m_value.has_value(); }
    explicit operator bool() const { return ok(); }
    T& value() & { return *m_value; }
    const T& value() const& { return *m_value; }
    T&& value() && { return std::move(*m_value); }
    T* operator->() { return &*m_value; }
    const T* operator->() const { return &*m_value; }
    T& operator*() { return *m_value; }
    const T& operator*() const { return *m_value; }
    const Error& error() const { return m_error; }
    ErrorClass errorClass() const { return m_class; }

private:
    std::optional<T> m_value;
    Error m_error;
    ErrorClass m_class = ErrorClass::BadInput;
};

// Result of an operation that yields nothing.
class Status {
public:
    Status() = default;
    Status(Error error, ErrorClass cls = ErrorClass::Runtime) : m_error(std::move(error)), m_failed(true), m_class(cls)
    {}
    static Status success() { return {}; }
    bool ok() const { return !m_failed; }
    explicit operator bool() const { return ok(); }
    const Error& error() const { return m_error; }
    ErrorClass errorClass() const { return m_class; }

private:
    Error m_error;
    bool m_failed = false;
    ErrorClass m_class = ErrorClass::Runtime;
};

} // namespace streamscope
