// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// MainWindow's files: the open dialog, drag and drop, recent files, plan and problem exports, view
// images and the screenshot set. Kept apart from mainwindow.cpp (loading and planning).
#include "mainwindow.h"

#include "arenalayoutview.h"
#include "coloringview.h"
#include "inputsizesdialog.h"
#include "latencylane.h"
#include "lifetimebarsview.h"
#include "mainwindowshared.h"
#include "memorycurveview.h"
#include "messagebanner.h"
#include "plandocument.h"

#include "io/planjson.h"
#include "io/problemcsv.h"

#include <QAction>
#include <QCloseEvent>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QCoreApplication>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMimeData>
#include <QSaveFile>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>

namespace {

using mainwindow::displayName;

const auto kRecentKey = QStringLiteral("recentFiles");
// Per recent file, the input sizes it was opened with: {"dims": {name: v}, "shapes": {input: [d...]},
// "files": {input: path}}. Absent for a file opened without sizes.
const auto kRecentSizesKey = QStringLiteral("recentSizes");
constexpr int kMaxRecent = 8;
// saveState's version: bump it when toolbars or docks change, so an old layout is not restored onto new ones.
constexpr int kWindowStateVersion = 2;

QVariantMap sizesToVariant(const core::ShapeBindings& bindings, const InputSizesDialog::InputFiles& files)
{
    QVariantMap dims, shapes, paths;
    for (const auto& [name, value] : bindings.dims)
        dims.insert(QString::fromStdString(name), QVariant::fromValue<qlonglong>(value));
    for (const auto& [name, shape] : bindings.inputShapes) {
        QVariantList list;
        for (auto d : shape)
            list << QVariant::fromValue<qlonglong>(d);
        shapes.insert(QString::fromStdString(name), list);
    }
    for (const auto& [name, path] : files)
        paths.insert(QString::fromStdString(name), QString::fromStdString(path.string()));
    return { { QStringLiteral("dims"), dims }, { QStringLiteral("shapes"), shapes }, { QStringLiteral("files"), paths } };
}

void sizesFromVariant(const QVariantMap& sizes, core::ShapeBindings& bindings, InputSizesDialog::InputFiles& files)
{
    const QVariantMap dims = sizes.value(QStringLiteral("dims")).toMap();
    for (auto it = dims.begin(); it != dims.end(); ++it)
        bindings.dims[it.key().toStdString()] = it.value().toLongLong();
    const QVariantMap shapes = sizes.value(QStringLiteral("shapes")).toMap();
    for (auto it = shapes.begin(); it != shapes.end(); ++it) {
        std::vector<std::int64_t> shape;
        for (const QVariant& d : it.value().toList())
            shape.push_back(d.toLongLong());
        bindings.inputShapes[it.key().toStdString()] = shape;
    }
    const QVariantMap paths = sizes.value(QStringLiteral("files")).toMap();
    for (auto it = paths.begin(); it != paths.end(); ++it)
        files.emplace_back(it.key().toStdString(), std::filesystem::path(it.value().toString().toStdString()));
}

// "batch = 2, z 2×4, x from x.pb": the sizes in a menu entry.
QString sizesText(const core::ShapeBindings& bindings, const InputSizesDialog::InputFiles& files)
{
    QStringList parts;
    for (const auto& [name, value] : bindings.dims)
        parts << QStringLiteral("%1 = %2").arg(QString::fromStdString(name)).arg(value);
    for (const auto& [name, shape] : bindings.inputShapes) {
        QStringList dims;
        for (auto d : shape)
            dims << QString::number(d);
        parts << QStringLiteral("%1 %2").arg(QString::fromStdString(name), dims.join(QStringLiteral("×")));
    }
    for (const auto& [name, path] : files)
        parts << QObject::tr("%1 from %2").arg(QString::fromStdString(name), QString::fromStdString(path.filename().string()));
    return parts.join(QStringLiteral(", "));
}

// The folder a recent entry names to tell it from another of the same file name: the parent, with
// the home folder as ~.
QString folderText(const QString& spec)
{
    QString dir = QDir::toNativeSeparators(QFileInfo(spec).absolutePath());
    const QString home = QDir::toNativeSeparators(QDir::homePath());
    if (dir.startsWith(home))
        dir = QStringLiteral("~") + dir.mid(home.size());
    return dir;
}

bool writeFile(const QString& path, const std::string& text, QString* error)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)
        || file.write(text.data(), static_cast<qint64>(text.size())) != static_cast<qint64>(text.size())
        || !file.commit()) {
        if (error)
            *error = QObject::tr("Cannot write %1: %2").arg(QDir::toNativeSeparators(path), file.errorString());
        return false;
    }
    return true;
}

} // namespace

// ---------------------------------------------------------------- files

void MainWindow::openFileDialog()
{
    const QString dir
        = m_currentSpec.startsWith(QLatin1String("example:")) ? QString() : QFileInfo(m_currentSpec).absolutePath();
    const QString path = QFileDialog::getOpenFileName(this, tr("Open Model"), dir,
        tr("Models and snapshots (*.onnx *.json *.csv *.pickle *.pkl *.pickle.gz);;ONNX models (*.onnx);;JSON graphs (*.json);;"
           "Allocation problems (*.csv);;PyTorch memory snapshots (*.pickle *.pkl *.pickle.gz);;All files (*)"));
    if (!path.isEmpty())
        openFile(path);
}

void MainWindow::showInputSizes()
{
    if (m_openInputsSpec.isEmpty())
        return;
    const QString spec = m_openInputsSpec;
    const bool given = spec == m_bindingsSpec;
    InputSizesDialog dialog(m_openInputs, given ? m_bindings : core::ShapeBindings {}, given ? m_inputFiles : InputSizesDialog::InputFiles {}, this);
    if (dialog.exec() == QDialog::Accepted)
        openFileWithSizes(spec, dialog.bindings(), dialog.files());
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    const auto urls = event->mimeData()->urls();
    if (!urls.isEmpty() && urls.first().isLocalFile())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    const auto urls = event->mimeData()->urls();
    if (urls.isEmpty() || !urls.first().isLocalFile())
        return;
    event->acceptProposedAction();
    openFile(urls.first().toLocalFile());
}

void MainWindow::addRecentFile(const QString& spec)
{
    if (spec.startsWith(QLatin1String("example:")))
        return;
    QSettings settings;
    QStringList recent = settings.value(kRecentKey).toStringList();
    recent.removeAll(spec);
    recent.prepend(spec);
    while (recent.size() > kMaxRecent)
        recent.removeLast();
    settings.setValue(kRecentKey, recent);
    // The sizes it was opened with come back with it; entries that left the list take theirs along.
    QVariantMap sizes = settings.value(kRecentSizesKey).toMap();
    const bool given = spec == m_bindingsSpec
        && (!m_bindings.dims.empty() || !m_bindings.inputShapes.empty() || !m_inputFiles.empty());
    if (given)
        sizes.insert(spec, sizesToVariant(m_bindings, m_inputFiles));
    else
        sizes.remove(spec);
    for (const QString& key : sizes.keys())
        if (!recent.contains(key))
            sizes.remove(key);
    settings.setValue(kRecentSizesKey, sizes);
}

// ---------------------------------------------------------------- session settings

void MainWindow::restoreSessionSettings()
{
    const QSettings settings;
    if (const QByteArray geometry = settings.value(QStringLiteral("window/geometry")).toByteArray(); !geometry.isEmpty())
        restoreGeometry(geometry);
    if (const QByteArray state = settings.value(QStringLiteral("window/state")).toByteArray(); !state.isEmpty())
        restoreState(state, kWindowStateVersion);
    if (const double limit = settings.value(QStringLiteral("timeLimit")).toDouble(); limit > 0)
        m_timeLimitSpin->setValue(limit);
    if (const int speed = m_speedCombo->findData(settings.value(QStringLiteral("playSpeed"))); speed >= 0)
        m_speedCombo->setCurrentIndex(speed);
}

void MainWindow::saveSessionSettings() const
{
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState(kWindowStateVersion));
    settings.setValue(QStringLiteral("timeLimit"), m_timeLimitSpin->value());
    settings.setValue(QStringLiteral("playSpeed"), m_speedCombo->currentData());
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    saveSessionSettings();
    QMainWindow::closeEvent(event);
}

void MainWindow::openRecentFile(const QString& spec)
{
    const QVariantMap sizes = QSettings().value(kRecentSizesKey).toMap();
    if (!sizes.contains(spec)) {
        openFile(spec);
        return;
    }
    core::ShapeBindings bindings;
    InputSizesDialog::InputFiles files;
    sizesFromVariant(sizes.value(spec).toMap(), bindings, files);
    openFileWithSizes(spec, bindings, files);
}

void MainWindow::rebuildRecentMenu()
{
    m_recentMenu->clear();
    const QSettings settings;
    const QStringList recent = settings.value(kRecentKey).toStringList();
    const QVariantMap sizes = settings.value(kRecentSizesKey).toMap();
    QStringList names;
    for (const QString& spec : recent)
        names << QFileInfo(spec).fileName();
    for (int k = 0; k < recent.size(); ++k) {
        const QString& spec = recent[k];
        // Two entries of one file name say their folders; an entry opened with sizes says them.
        QString label = names[k];
        if (names.count(names[k]) > 1)
            label += QStringLiteral(" — ") + folderText(spec);
        if (sizes.contains(spec)) {
            core::ShapeBindings bindings;
            InputSizesDialog::InputFiles files;
            sizesFromVariant(sizes.value(spec).toMap(), bindings, files);
            label += QStringLiteral(" (%1)").arg(sizesText(bindings, files));
        }
        label.replace(QLatin1Char('&'), QStringLiteral("&&"));
        QAction* action = m_recentMenu->addAction(
            k < 9 ? QStringLiteral("&%1 %2").arg(k + 1).arg(label) : label, this, [this, spec] { openRecentFile(spec); });
        action->setToolTip(QDir::toNativeSeparators(spec));
        action->setStatusTip(QDir::toNativeSeparators(spec));
    }
    if (recent.isEmpty())
        m_recentMenu->addAction(tr("(none)"))->setEnabled(false);
    else {
        m_recentMenu->addSeparator();
        m_recentMenu->addAction(tr("Clear"), this, [] {
            QSettings settings;
            settings.remove(kRecentKey);
            settings.remove(kRecentSizesKey);
        });
    }
}

// ---------------------------------------------------------------- export

bool MainWindow::exportPlanJson(const QString& path, QString* error) const
{
    if (!m_document->hasPlan()) {
        if (error)
            *error = tr("There is no plan to export yet.");
        return false;
    }
    return writeFile(path, core::exportPlanJson(*m_document->workload(), *m_document->plan()), error);
}

bool MainWindow::exportProblemCsv(const QString& path, QString* error) const
{
    if (!m_document->hasPlan()) {
        if (error)
            *error = tr("There is no plan to export yet.");
        return false;
    }
    return writeFile(path, core::exportProblemCsv(m_document->workload()->problem, m_document->plan()), error);
}

void MainWindow::exportViewDialog(QWidget* view, const QString& baseName)
{
    const bool window = view == this;
    const QString path = QFileDialog::getSaveFileName(this, tr("Export Image"), baseName + QStringLiteral(".png"),
        window ? tr("PNG image (*.png)") : tr("PNG image (*.png);;SVG image (*.svg)"));
    if (path.isEmpty())
        return;
    QString error;
    bool ok = false;
    if (window)
        ok = grab().save(path) || (error = tr("Cannot write %1").arg(path), false);
    else if (view == m_memoryCurve)
        ok = m_memoryCurve->exportImage(path, &error);
    else if (view == m_lifetimeBars)
        ok = m_lifetimeBars->exportImage(path, &error);
    else if (view == m_arenaLayout)
        ok = m_arenaLayout->exportImage(path, &error);
    else if (view == m_coloring)
        ok = m_coloring->exportImage(path, &error);
    else if (view == m_latencyLane)
        ok = m_latencyLane->exportImage(path, &error);
    if (ok)
        statusBar()->showMessage(tr("Wrote %1").arg(QDir::toNativeSeparators(path)), 5000);
    else
        m_banner->showMessage(error, MessageBanner::Type::Error);
}

void MainWindow::exportPlanDialog(bool json)
{
    const QString base = displayName(m_currentSpec).section(QLatin1Char('.'), 0, 0).remove(QStringLiteral("example:"));
    const QString path = QFileDialog::getSaveFileName(this, json ? tr("Export Plan as JSON") : tr("Export Plan as CSV"),
        base + (json ? QStringLiteral("-plan.json") : QStringLiteral("-plan.csv")),
        json ? tr("Plan JSON (*.json)") : tr("Allocation CSV (*.csv)"));
    if (path.isEmpty())
        return;
    QString error;
    if (json ? exportPlanJson(path, &error) : exportProblemCsv(path, &error))
        statusBar()->showMessage(tr("Wrote %1").arg(QDir::toNativeSeparators(path)), 5000);
    else
        m_banner->showMessage(error, MessageBanner::Type::Error);
}

bool MainWindow::renderScreenshots(const QString& dir, QString* error)
{
    if (!QDir().mkpath(dir)) {
        if (error)
            *error = tr("Cannot create the folder %1").arg(QDir::toNativeSeparators(dir));
        return false;
    }
    if (!isVisible())
        show();
    QCoreApplication::processEvents();
    const QDir out(dir);
    const int shownTab = m_tabs->currentIndex();
    bool ok = true;
    auto record = [&](bool success, const QString& message) {
        if (!success && ok && error)
            *error = message;
        ok = ok && success;
    };
    QString message;
    record(m_memoryCurve->exportImage(out.filePath(QStringLiteral("memory-curve.png")), &message), message);
    // Tabs are shown one at a time so each view renders at its laid-out size.
    m_tabs->setCurrentWidget(m_lifetimeBars);
    QCoreApplication::processEvents();
    record(m_lifetimeBars->exportImage(out.filePath(QStringLiteral("lifetime-bars.png")), &message), message);
    m_tabs->setCurrentWidget(m_arenaLayout);
    QCoreApplication::processEvents();
    record(m_arenaLayout->exportImage(out.filePath(QStringLiteral("arena-layout.png")), &message), message);
    m_tabs->setCurrentWidget(m_coloring);
    QCoreApplication::processEvents();
    record(m_coloring->exportImage(out.filePath(QStringLiteral("coloring.png")), &message), message);
    if (m_document->measurement()) // after a run only
        record(m_latencyLane->exportImage(out.filePath(QStringLiteral("latency-lane.png")), &message), message);
    m_tabs->setCurrentIndex(shownTab);
    QCoreApplication::processEvents();
    const QString windowPath = out.filePath(QStringLiteral("window.png"));
    record(grab().save(windowPath), tr("Cannot write %1").arg(QDir::toNativeSeparators(windowPath)));
    if (ok)
        record(renderStrategyScreenshots(dir, &message), message);
    return ok;
}
