// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "plandocument.h"

#include "strategymarks.h"
#include "comparedtrace.h"
#include "peerprofile.h"
#include "runmeasurement.h"

#include <algorithm>
#include <unordered_map>

PlanDocument::PlanDocument(QObject* parent)
    : QObject(parent)
{
}

void PlanDocument::setWorkload(std::shared_ptr<const core::Workload> workload)
{
    m_workload = std::move(workload);
    m_plan.reset();
    m_metrics = {};
    m_liveCurve = m_workload ? core::liveBytesCurve(m_workload->problem) : std::vector<core::Bytes> {};
    m_bounded.assign(m_workload ? m_workload->problem.buffers.size() : 0, false);
    m_anyBounded = false;
    if (m_workload && m_workload->graph) {
        std::unordered_map<std::string, bool> estimated;
        for (const auto& t : m_workload->graph->tensors)
            estimated.emplace(t.name, core::sizeIsBound(t));
        for (std::size_t i = 0; i < m_bounded.size(); ++i)
            for (const auto& name : m_workload->problem.buffers[i].tensors)
                if (auto it = estimated.find(name); it != estimated.end() && it->second)
                    m_bounded[i] = m_anyBounded = true;
    }
    m_measured.clear();
    m_peer.reset();
    m_comparison.reset();
    const bool hadMeasurement = m_measurement != nullptr;
    clearMeasurement();
    m_selected = m_hovered = -1;
    m_cursor = -1;
    m_firstVisible = 0;
    m_lastVisible = std::max<double>(steps(), 1);
    emit workloadChanged();
    emit selectionChanged(-1);
    emit hoverChanged(-1);
    emit cursorChanged(-1);
    emit visibleStepsChanged(m_firstVisible, m_lastVisible);
    if (hadMeasurement)
        emit measurementChanged();
}

void PlanDocument::setPlan(core::Plan plan)
{
    if (!m_workload || plan.offsets.size() != m_workload->problem.buffers.size())
        return;
    m_metrics = core::computeMetrics(m_workload->problem, plan);
    m_plan = std::move(plan);
    const bool hadMeasurement = m_measurement != nullptr;
    clearMeasurement();
    emit planChanged();
    if (hadMeasurement) {
        emit overlayChanged();
        emit measurementChanged();
    }
}

void PlanDocument::selectBuffer(int buffer)
{
    if (!m_workload || buffer < -1 || buffer >= static_cast<int>(m_workload->problem.buffers.size()))
        buffer = -1;
    if (buffer == m_selected)
        return;
    m_selected = buffer;
    emit selectionChanged(buffer);
}

void PlanDocument::hoverBuffer(int buffer)
{
    if (!m_workload || buffer < -1 || buffer >= static_cast<int>(m_workload->problem.buffers.size()))
        buffer = -1;
    if (buffer == m_hovered)
        return;
    m_hovered = buffer;
    emit hoverChanged(buffer);
}

void PlanDocument::setCursorStep(core::Step step)
{
    if (steps() == 0 || step < 0)
        step = -1;
    else
        step = std::min(step, steps() - 1);
    if (step == m_cursor)
        return;
    m_cursor = step;
    emit cursorChanged(step);
}

void PlanDocument::setVisibleSteps(double first, double last)
{
    const double total = std::max<double>(steps(), 1);
    const double minimumSpan = std::min(total, 2.0);
    if (last - first < minimumSpan)
        last = first + minimumSpan;
    if (last - first > total) {
        first = 0;
        last = total;
    }
    if (first < 0) {
        last -= first;
        first = 0;
    }
    if (last > total) {
        first -= last - total;
        last = total;
    }
    if (first == m_firstVisible && last == m_lastVisible)
        return;
    m_firstVisible = first;
    m_lastVisible = last;
    emit visibleStepsChanged(first, last);
}

void PlanDocument::fitVisibleSteps() { setVisibleSteps(0, std::max<double>(steps(), 1)); }

void PlanDocument::setMeasuredCurve(std::vector<core::Bytes> curve)
{
    m_measured = std::move(curve);
    emit overlayChanged();
}

void PlanDocument::setBudget(core::Bytes budget)
{
    m_budget = std::max<core::Bytes>(budget, 0);
    emit overlayChanged();
}

// ---------------------------------------------------------------- strategies

const StrategyFacts* PlanDocument::strategyFacts() const
{
    return m_strategyFacts && m_workload && m_strategyFacts->workload == m_workload ? m_strategyFacts.get() : nullptr;
}

void PlanDocument::setStrategyFacts(std::shared_ptr<const StrategyFacts> facts)
{
    m_strategyFacts = std::move(facts);
    emit strategyFactsChanged();
}

// ---------------------------------------------------------------- measured run

void PlanDocument::setMeasurement(std::shared_ptr<const RunMeasurement> measurement)
{
    if (measurement && measurement->workload != m_workload)
        return; // a run of a workload no longer on display
    clearMeasurement();
    if (measurement) {
        m_measurement = std::move(measurement);
        m_measured = m_measurement->arena.stepBytes;
        m_measuredAllocator = m_measurement->perTensor.stepBytes;
    }
    emit overlayChanged();
    emit measurementChanged();
}

void PlanDocument::clearMeasurement()
{
    if (m_measurement)
        m_measured.clear();
    m_measurement.reset();
    m_measuredAllocator.clear();
}

const PeerProfile* PlanDocument::peerProfile() const
{
    return m_peer && m_peer->workload == m_workload ? m_peer.get() : nullptr;
}

void PlanDocument::setPeerProfile(std::shared_ptr<const PeerProfile> profile)
{
    m_peer = std::move(profile);
    emit overlayChanged();
}

const ComparedTrace* PlanDocument::comparison() const
{
    return m_comparison && m_comparison->workload == m_workload ? m_comparison.get() : nullptr;
}

void PlanDocument::setComparison(std::shared_ptr<const ComparedTrace> comparison)
{
    m_comparison = std::move(comparison);
    emit overlayChanged();
}
