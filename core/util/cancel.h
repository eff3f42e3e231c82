// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string_view>

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

// Progress and cancellation of a long load (a memory snapshot of a gigabyte): each stage reports the
// fraction of its own work done, from the loading thread, at most every few thousand items or
// megabytes (callers that draw it throttle further); a load that sees `cancel` set returns
// ErrorCode::Cancelled. Default-constructed: silent, never cancelled.
struct LoadProgress {
    CancelToken cancel;
    std::function<void(std::string_view stage, double fraction)> report; // may be empty
    bool cancelled() const { return cancel.isCancelled(); }
    void operator()(std::string_view stage, double fraction) const
    {
        if (report)
            report(stage, fraction);
    }
};

} // namespace core
