// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// MainWindow's strategy parts, kept out of mainwindow.cpp: the strategy dock, the A/B comparison
// window, showing a transformed workload, and the strategy screenshots.
#include "mainwindow.h"

#include "arenalayoutview.h"
#include "comparisonview.h"
#include "frontierview.h"
#include "lifetimebarsview.h"
#include "memorycurveview.h"
#include "messagebanner.h"
#include "plandocument.h"
#include "planningcontroller.h"
#include "strategycontroller.h"
#include "strategypanel.h"

#include "planners/planner.h"

#include <QAction>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QMenu>
#include <QMenuBar>
#include <QStatusBar>
#include <QTabWidget>
#include <QThread>

#include <functional>

namespace {

constexpr int kScreenshotWaitMs = 5 * 60 * 1000;
const QString kShotStrategies[] = { QStringLiteral("fuse"), QStringLiteral("swap"), QStringLiteral("inplace") };

// Spins the event loop until `done` or the timeout; for the screenshot path only (never in interactive use).
bool waitUntil(const std::function<bool()>& done, int timeoutMs = kScreenshotWaitMs)
{
    QElapsedTimer clock;
    clock.start();
    while (!done()) {
        if (clock.elapsed() > timeoutMs)
            return false;
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
        QThread::msleep(5);
    }
    return true;
}

} // namespace

void MainWindow::createStrategyDock()
{
    m_strategyPanel = new StrategyPanel(this);
    auto* dock = new QDockWidget(tr("Strategies"), this);
    dock->setObjectName(QStringLiteral("strategiesDock"));
    dock->setWidget(m_strategyPanel);
    // A tab beside the summary: the plot views keep the window's width.
    if (auto* summary = findChild<QDockWidget*>(QStringLiteral("summaryDock"))) {
        tabifyDockWidget(summary, dock);
        summary->raise();
    } else {
        addDockWidget(Qt::LeftDockWidgetArea, dock);
    }
}

void MainWindow::connectStrategies()
{
    m_strategyPanel->setPlannerName(plannerName());
    connect(m_plannerCombo, &QComboBox::currentTextChanged, m_strategyPanel, &StrategyPanel::setPlannerName);
    connect(m_strategyPanel, &StrategyPanel::workloadReady, this, &MainWindow::onStrategyWorkload);
    connect(m_strategyPanel, &StrategyPanel::failed, this, &MainWindow::onFailure);

    // The frontier tab beside the views: its points apply through the strategy panel, and the
    // panel's budget moves along it once computed.
    m_frontierView = new FrontierView(this);
    m_frontierView->setPlannerName(plannerName());
    m_tabs->addTab(m_frontierView, tr("Frontier"));
    m_tabs->setTabToolTip(m_tabs->indexOf(m_frontierView),
        tr("Peak memory against estimated extra time over recompute, checkpoint and swap decisions; click a point to apply it"));
    connect(m_plannerCombo, &QComboBox::currentTextChanged, m_frontierView, [this](const QString& name) {
        if (core::plannerByName(name.toStdString())) // "as recorded" is no planner
            m_frontierView->setPlannerName(name);
    });
    connect(m_frontierView, &FrontierView::frontierReady, m_strategyPanel, &StrategyPanel::setFrontier);
    connect(m_frontierView, &FrontierView::pointChosen, m_strategyPanel, &StrategyPanel::applyFrontierPoint);
    connect(this, &MainWindow::planDisplayed, m_frontierView, [this] {
        m_frontierView->setOriginal(m_strategyPanel->original() ? m_strategyPanel->original() : m_document->sharedWorkload());
        m_frontierView->setDevice(m_strategyPanel->device());
        const auto outcome = m_strategyPanel->outcome();
        if (const core::Plan* plan = m_document->plan())
            m_frontierView->setCurrent(plan->arenaSize, outcome ? outcome->estimatedSeconds - outcome->baseSeconds : 0.0);
    });

    // Window menu, before Help.
    auto* window = new QMenu(tr("&Window"), this);
    QAction* compare = window->addAction(tr("&Compare A/B…"), this, &MainWindow::showComparison);
    compare->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_K));
    compare->setToolTip(tr("Compare two configurations (strategies, planner, device) side by side"));
    const auto menus = menuBar()->actions();
    menuBar()->insertMenu(menus.isEmpty() ? nullptr : menus.last(), window);
}

void MainWindow::showComparison()
{
    if (!m_comparison) {
        m_comparison = new ComparisonView(this);
        m_comparison->setWindowFlag(Qt::Window);
        m_comparison->resize(m_comparison->sizeHint());
        connect(m_comparison, &ComparisonView::failed, this,
            [this](const QString& message) { statusBar()->showMessage(tr("A/B comparison: %1").arg(message), 8000); });
        // It starts from what the main window uses: A is its strategies and planner, B the same with
        // every strategy that lowers the bound without host traffic added. Later openings keep the
        // user's choices.
        const QStringList current = m_strategyPanel->checkedStrategies();
        QStringList more = current;
        for (const QString& name : { QStringLiteral("fuse"), QStringLiteral("recompute"), QStringLiteral("inplace") })
            if (!more.contains(name))
                more << name;
        const QString planner = core::plannerByName(plannerName().toStdString())
            ? plannerName()
            : QString::fromUtf8(core::kDefaultPlanner.data(), qsizetype(core::kDefaultPlanner.size())); // "as recorded" is no planner
        m_comparison->setConfiguration(ComparisonView::A, current, planner, QString());
        m_comparison->setConfiguration(ComparisonView::B, more, planner, QString());
    }
    // The comparison starts from the model as loaded, not from what the strategy panel made of it.
    m_comparison->setOriginal(m_strategyPanel->original() ? m_strategyPanel->original() : m_document->sharedWorkload());
    m_comparison->show();
    m_comparison->raise();
}

void MainWindow::onStrategyWorkload(
    std::shared_ptr<const core::Workload> workload, std::shared_ptr<const StrategyFacts> facts, core::Bytes budget)
{
    m_document->setStrategyFacts(std::move(facts)); // first: views rebuilding on workloadChanged read them
    m_document->setWorkload(std::move(workload));
    m_document->setBudget(budget);
    updateTitle();
    replan();
}

bool MainWindow::renderStrategyScreenshots(const QString& dir, QString* error)
{
    const QDir out(dir);
    auto fail = [error](const QString& message) {
        if (error)
            *error = message;
        return false;
    };
    auto* dock = findChild<QDockWidget*>(QStringLiteral("strategiesDock"));
    if (dock) {
        dock->show();
        dock->raise();
    }
    const QStringList before = m_strategyPanel->checkedStrategies();
    const bool budgetWasOn = m_strategyPanel->budgetEnabled();
    auto planShown = [this] {
        return !m_strategyPanel->controller()->isBusy() && !m_controller->isBusy() && m_document->hasPlan();
    };
    if (m_strategyPanel->original() && m_strategyPanel->original()->graph) {
        // Fused groups, host trips and in-place buffers all have marks to show; keep the user's choice if any.
        if (before.isEmpty() && !budgetWasOn) {
            for (const auto& name : kShotStrategies)
                m_strategyPanel->setStrategyChecked(name, true);
            m_strategyPanel->rerun();
        }
        if (!waitUntil([&] { return planShown() && m_document->strategyFacts(); }))
            return fail(tr("Gave up waiting for the strategies to apply"));
        const int colorIndex = m_colorCombo->currentIndex();
        m_colorCombo->setCurrentIndex(m_colorCombo->findData(static_cast<int>(LifetimeBarsView::ColorMode::Strategy)));
        m_tabs->setCurrentWidget(m_lifetimeBars);
        QCoreApplication::processEvents();
        const QString path = out.filePath(QStringLiteral("strategies.png"));
        if (!grab().save(path))
            return fail(tr("Cannot write %1").arg(QDir::toNativeSeparators(path)));
        // The views on their own: the bars in the user's color mode, so the marks show as hatch and outline.
        m_colorCombo->setCurrentIndex(colorIndex);
        QCoreApplication::processEvents();
        QString message;
        if (!m_memoryCurve->exportImage(out.filePath(QStringLiteral("memory-curve-strategies.png")), &message)
            || !m_lifetimeBars->exportImage(out.filePath(QStringLiteral("lifetime-bars-strategies.png")), &message))
            return fail(message);
        m_tabs->setCurrentWidget(m_arenaLayout);
        QCoreApplication::processEvents();
        if (!m_arenaLayout->exportImage(out.filePath(QStringLiteral("arena-layout-strategies.png")), &message))
            return fail(message);
        m_tabs->setCurrentWidget(m_lifetimeBars);
        // Back to what the user had.
        if (before.isEmpty() && !budgetWasOn) {
            for (const auto& name : kShotStrategies)
                m_strategyPanel->setStrategyChecked(name, false);
            m_strategyPanel->rerun();
            if (!waitUntil([&] { return planShown() && !m_document->strategyFacts(); }))
                return fail(tr("Gave up waiting for the original model to come back"));
        }
    }

    showComparison();
    QCoreApplication::processEvents();
    if (!waitUntil([this] { return !m_comparison->isBusy() && m_comparison->outcome(ComparisonView::A); }))
        return fail(tr("Gave up waiting for the A/B comparison"));
    QCoreApplication::processEvents();
    const QString comparePath = out.filePath(QStringLiteral("compare.png"));
    const bool saved = m_comparison->grab().save(comparePath);
    m_comparison->hide();
    return saved || fail(tr("Cannot write %1").arg(QDir::toNativeSeparators(comparePath)));
}
