// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// MainWindow's Scenarios menu: windows that reuse the engine for other questions than one plan of
// one model (declared in mainwindow.h; kept apart from mainwindow.cpp).
#include "mainwindow.h"

#include "scenariowindows.h"

#include <QAction>
#include <QMenu>
#include <QMenuBar>

void MainWindow::createScenarioMenu()
{
    auto* scenarios = new QMenu(tr("&Scenarios"), this);
    QAction* llm = scenarios->addAction(tr("&LLM Decode with a Paged KV Cache…"), this, &MainWindow::showLlmScenario);
    llm->setToolTip(tr("Contiguous, paged and two-level KV-cache pools over the decode steps of a batch of sequences"));
    QAction* chips = scenarios->addAction(tr("&Accelerator Chips…"), this, &MainWindow::showAccelerator);
    chips->setToolTip(tr("The model on a fixed-memory chip: functional units, deterministic latency, multi-chip stages"));
    const auto menus = menuBar()->actions();
    menuBar()->insertMenu(menus.isEmpty() ? nullptr : menus.last(), scenarios); // before Help
}

void MainWindow::showLlmScenario()
{
    if (!m_llmScenario) {
        m_llmScenario = new LlmScenarioWindow(this);
        m_llmScenario->run(); // the first preset is small: a result is on screen at once
    }
    m_llmScenario->show();
    m_llmScenario->raise();
}

void MainWindow::showAccelerator()
{
    if (!m_accelerator)
        m_accelerator = new AcceleratorWindow(m_document, this);
    m_accelerator->show();
    m_accelerator->raise();
}
