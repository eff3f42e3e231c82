// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include <cstddef>
#include <vector>

// Where a step sits on the memory curve's x axis: the step itself (the event axis), or, for a memory
// snapshot with event times, the seconds since its first event (the time axis). On the time axis step
// i covers [t(i), t(i+1)); the last step closes one mean gap after its time, so it stays visible;
// fractional steps interpolate linearly. Plain values, tested on their own.
class StepClock {
public:
    void setEvents(std::size_t steps); // the event axis over `steps` steps
    // The time axis, `seconds` per step (ascending, as core::stepSeconds gives them); false, and the
    // event axis kept, when their count is not `steps` or they are not ascending.
    bool setSeconds(std::size_t steps, const std::vector<float>& seconds);
    bool timed() const { return !m_starts.empty(); }

    double key(double step) const;  // the x of a (fractional) step
    double step(double key) const;  // the fractional step at x; clamped to [0, steps]
    // Where each step starts, steps + 1 of them (the last closes the last step); empty on the event axis.
    const std::vector<double>& starts() const { return m_starts; }

private:
    std::size_t m_steps = 0;
    std::vector<double> m_starts;
};
