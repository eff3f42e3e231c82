// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace core {

// What went wrong, in words a user can act on. `message` names the file, line, op or tensor.
enum class ErrorCode { Io, InvalidModel, UnsupportedOp, InvalidArgument, Infeasible, Cancelled, Timeout, NoGpu, CudaFailure };

struct Error {
    ErrorCode code = ErrorCode::InvalidArgument;
    std::string message;
};

inline Error makeError(ErrorCode code, std::string message) { return Error { code, std::move(message) }; }

// A value or an Error (std::expected is C++23; g++ 12 lacks it).
template <class T>
class Expected {
public:
    Expected(T value) : m_data(std::in_place_index<0>, std::move(value)) { }
    Expected(Error error) : m_data(std::in_place_index<1>, std::move(error)) { }

    bool hasValue() const { return m_data.index() == 0; }
    explicit operator bool() const { return hasValue(); }

    T& value() & { assert(hasValue()); return std::get<0>(m_data); }
    const T& value() const& { assert(hasValue()); return std::get<0>(m_data); }
    T&& value() && { assert(hasValue()); return std::get<0>(std::move(m_data)); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    T&& operator*() && { return std::move(*this).value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

    const Error& error() const { assert(!hasValue()); return std::get<1>(m_data); }

private:
    std::variant<T, Error> m_data;
};

// Success or an Error, for operations without a result.
template <>
class Expected<void> {
public:
    Expected() = default;
    Expected(Error error) : m_error(std::move(error)), m_failed(true) { }
    bool hasValue() const { return !m_failed; }
    explicit operator bool() const { return !m_failed; }
    const Error& error() const { assert(m_failed); return m_error; }

private:
    Error m_error;
    bool m_failed = false;
};

using Status = Expected<void>;

} // namespace core
