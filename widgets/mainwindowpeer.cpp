// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// MainWindow's peer profiles: an ONNX Runtime profile read in the background and laid over the
// model on display (widgets/peerprofile.h), again after every change of its workload.
#include "mainwindow.h"

#include "peerprofile.h"
#include "plandocument.h"

#include <QAction>
#include <QFileDialog>
#include <QFileInfo>
#include <QStatusBar>

void MainWindow::openPeerProfileDialog()
{
    const QString dir = QFileInfo(m_peerFile.isEmpty() ? m_currentSpec : m_peerFile).absolutePath();
    const QString path = QFileDialog::getOpenFileName(this, tr("Open ONNX Runtime Profile"),
        m_currentSpec.startsWith(QLatin1String("example:")) ? QString() : dir,
        tr("ONNX Runtime profiles (*.json);;All files (*)"));
    if (!path.isEmpty())
        openPeerProfile(path);
}

void MainWindow::openPeerProfile(const QString& file)
{
    const core::Workload* workload = m_document->workload();
    if (!workload || !workload->graph) {
        onFailure(tr("%1 is an ONNX Runtime profile: open the ONNX model it profiled first (File > Open), then the profile, "
                     "which lays its measured memory over that model's plan")
                      .arg(QFileInfo(file).fileName()));
        return;
    }
    const std::string model = workload->source;
    statusBar()->showMessage(tr("Reading %1…").arg(QFileInfo(file).fileName()));
    struct Read {
        std::shared_ptr<const core::OrtProfile> profile; // null: failed with `error`
        QString error;
    };
    m_peerJob.start(
        this,
        [path = file.toStdString()] {
            Read read;
            if (auto profile = core::loadOrtProfile(path)) // worker thread: pure core code
                read.profile = std::make_shared<const core::OrtProfile>(std::move(*profile));
            else
                read.error = QString::fromStdString(profile.error().message);
            return read;
        },
        [this, file, model](const Read& read) {
            if (!read.profile) {
                statusBar()->clearMessage();
                onFailure(read.error);
                return;
            }
            m_peerFile = file;
            m_peerProfile = read.profile;
            m_peerModel = model;
            layPeerProfile();
        });
}

void MainWindow::layPeerProfile()
{
    auto workload = m_document->sharedWorkload();
    if (!m_peerProfile || !workload || !workload->graph || workload->source != m_peerModel)
        return;
    auto peer = ::layPeerProfile(m_peerProfile, m_peerFile, workload);
    if (!peer) {
        // A strategy may fuse every op the profile ran; the profile stays for the next workload.
        statusBar()->showMessage(tr("ONNX Runtime profile not shown: %1").arg(QString::fromStdString(peer.error().message)), 8000);
        return;
    }
    m_document->setPeerProfile(*peer);
    const auto& overlay = (*peer)->overlay;
    statusBar()->showMessage(tr("ONNX Runtime profile %1: %2 of %3 steps mapped")
                                 .arg(QFileInfo(m_peerFile).fileName())
                                 .arg(overlay.mapped)
                                 .arg(overlay.steps.size()),
        8000);
    emit peerProfileShown();
}
