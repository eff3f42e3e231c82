// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "latestjob.h"

#include "cost/device.h"
#include "io/workload.h"
#include "scenarios/multichip.h"

#include <QWidget>

#include <atomic>
#include <memory>

class QLabel;
class QSpinBox;
class QTableWidget;
class StagesCanvas;

// A model partitioned over the chips of a fixed-memory accelerator (core::planMultiChip), the
// stages side by side: per chip its fill against capacity (weights, activations, received tensors,
// in MB and %), a miniature of its arena (local step × offset, coloured by local/received/sent),
// arrows with the bytes one chip sends the next, and a table of every transfer. The chip-count box
// (auto = fewest that fit) re-partitions on QThreadPool::globalInstance(); the UI thread never
// waits; a line under it says what changed against the previous count. A newer request cancels the older one, whose result is dropped (LatestJob).
class StagesView : public QWidget {
    Q_OBJECT
public:
    explicit StagesView(QWidget* parent = nullptr);
    ~StagesView() override;

    // Partitions `workload` (which must have a graph) over chips of `device`, in the background.
    void setWorkload(std::shared_ptr<const core::Workload> workload, const core::DeviceProfile& device);
    // 0: the fewest chips that fit; N: spread over exactly N. Re-partitions.
    void setChipCount(int chips);
    int chipCount() const;

    // The latest partition, or null (before the first, while none succeeded, after an error).
    std::shared_ptr<const core::MultiChipPlan> partition() const { return m_partition; }
    // The workload partition() was made from (after a new setWorkload, the old one until the new result lands).
    std::shared_ptr<const core::Workload> partitionedWorkload() const { return m_partitioned; }
    bool isBusy() const { return m_busy; }
    QString errorText() const { return m_error; }
    // What changed from the previous partition of the same model ("" for the first): chips, pooled
    // capacity, fullest chip, chip-to-chip traffic, latency and throughput, before → after.
    QString changeText() const;

signals:
    void partitionReady();
    void partitionFailed(const QString& message);

private:
    void repartition();
    void showPartition();

    QSpinBox* m_chips = nullptr;
    QLabel* m_summary = nullptr;
    QLabel* m_change = nullptr;
    StagesCanvas* m_canvas = nullptr;
    QTableWidget* m_transfers = nullptr;
    std::shared_ptr<const core::Workload> m_workload;
    core::DeviceProfile m_device;
    std::shared_ptr<const core::MultiChipPlan> m_partition;
    std::shared_ptr<const core::MultiChipPlan> m_previous; // the one before m_partition, same workload
    std::shared_ptr<const core::Workload> m_partitioned;   // the workload m_partition belongs to
    std::shared_ptr<std::atomic<bool>> m_cancel;
    LatestJob m_job; // only the latest partition request's result is shown
    bool m_busy = false;
    QString m_error;
};
