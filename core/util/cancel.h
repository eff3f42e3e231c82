// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include <atomic>
#include <memory>

namespace core {

// Shareable request to stop long work. Default-constructed: never cancelled.
// Planners check it every few thousand buffers and return ErrorCode::Cancelled.
class CancelToken {
public:
    CancelToken() = default;
    explicit CancelToken(std::shared_ptr<const std::atomic<bool>> flag) : m_flag(std::move(flag)) { }
    bool isCancelled() const { return m_flag && m_flag->load(std::memory_order_relaxed); }

private:
    std::shared_ptr<const std::atomic<bool>> m_flag;
};

} // namespace core
