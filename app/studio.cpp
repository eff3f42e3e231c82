// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// memplan-studio [MODEL]                  the desktop application; MODEL defaults to example:unet
// memplan-studio --screenshot DIR [MODEL] renders every view and the window to DIR/*.png, then exits
//                 (with --run: after running the plan on the CPU, so the measurements show)
// --dim NAME=V, --input-shape NAME=D0,D1,... and --input NAME=FILE.pb fix what an ONNX model's
// inputs leave open, as for memplan (File > Input Sizes in the window); a run takes the files' contents.
#include "cliargs.h"
#include "mainwindow.h"
#include "planners/planner.h"
#include "plandocument.h"
#include "planners/metrics.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QCommandLineParser>
#include <QTimer>

#include <cstdio>
#include <cstring>

namespace {

void printError(const QString& message) { std::fprintf(stderr, "memplan-studio: %s\n", qPrintable(message)); }

} // namespace

int main(int argc, char** argv)
{
    // Without a display every QApplication aborts. A screenshot, --help and --version need none, so
    // they go offscreen; the window itself gets one line that says what to do instead.
    bool windowless = false;
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        windowless = windowless || std::strcmp(a, "--screenshot") == 0 || std::strncmp(a, "--screenshot=", 13) == 0
            || std::strcmp(a, "--help") == 0 || std::strcmp(a, "-h") == 0 || std::strcmp(a, "--help-all") == 0
            || std::strcmp(a, "--version") == 0 || std::strcmp(a, "-v") == 0;
    }
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") && qEnvironmentVariableIsEmpty("DISPLAY")
        && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY")) {
        if (!windowless) {
            printError(QStringLiteral("no display to open the window on (DISPLAY and WAYLAND_DISPLAY are not set); "
                                      "use --screenshot DIR, or `memplan render`, to draw the views to image files"));
            return 1;
        }
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }

    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("MemPlan"));
    QApplication::setApplicationName(QStringLiteral("MemPlan Studio"));
    QApplication::setApplicationVersion(QStringLiteral("0.1"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Explore how a neural network's tensors share one memory arena."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption screenshotOption(QStringLiteral("screenshot"),
        QStringLiteral("Render every view and the window as PNG files into <dir>, then exit."), QStringLiteral("dir"));
    parser.addOption(screenshotOption);
    const QCommandLineOption plannerOption(QStringLiteral("planner"),
        QStringLiteral("Planner to start with (default: the last one used; best-of-greedy for --screenshot)."),
        QStringLiteral("name"));
    parser.addOption(plannerOption);
    const QCommandLineOption runOption(QStringLiteral("run"),
        QStringLiteral("With --screenshot: run the plan on the CPU first, so the pictures show the measured memory "
                       "and the latency lane."));
    parser.addOption(runOption);
    const QCommandLineOption dimOption(QStringLiteral("dim"),
        QStringLiteral("Value of a symbolic input dimension, as for memplan (repeatable)."), QStringLiteral("NAME=V"));
    parser.addOption(dimOption);
    const QCommandLineOption inputShapeOption(QStringLiteral("input-shape"),
        QStringLiteral("Shape of a graph input whose declared shape is open, as for memplan (repeatable)."),
        QStringLiteral("NAME=D0,D1,..."));
    parser.addOption(inputShapeOption);
    const QCommandLineOption inputOption(QStringLiteral("input"),
        QStringLiteral("Contents of a graph input from an ONNX TensorProto, SequenceProto or OptionalProto file, as for "
                       "memplan: fixes its shape and the sizes computed from its values; a run uses it (repeatable)."),
        QStringLiteral("NAME=FILE.pb"));
    parser.addOption(inputOption);
    const QCommandLineOption workspacesOption(QStringLiteral("workspaces"),
        QStringLiteral("Plan each convolution's im2col workspace as a buffer of its own (the toolbar's Workspaces box)."));
    parser.addOption(workspacesOption);
    parser.addPositionalArgument(QStringLiteral("model"),
        QStringLiteral("ONNX model, JSON graph, allocation CSV or example:NAME (default: example:unet)."),
        QStringLiteral("[model]"));
    parser.process(app);
    if (parser.positionalArguments().size() > 1) {
        printError(QStringLiteral("expected at most one model, got %1").arg(parser.positionalArguments().size()));
        return 1;
    }
    const QString model = parser.positionalArguments().value(0, QStringLiteral("example:unet"));
    // The command line's own reader of --dim and --input-shape, for the same checks and messages.
    CliArgs sizes;
    for (const auto& v : parser.values(dimOption))
        sizes.options.emplace("dim", v.toStdString());
    for (const auto& v : parser.values(inputShapeOption))
        sizes.options.emplace("input-shape", v.toStdString());
    for (const auto& v : parser.values(inputOption))
        sizes.options.emplace("input", v.toStdString());
    const auto load = loadOptionsFrom(sizes);
    const auto files = inputFilesFrom(sizes);
    if (!load || !files) {
        printError(QString::fromStdString((!load ? load.error() : files.error()).message));
        return 1;
    }

    MainWindow window;
    // Screenshots must not depend on what an earlier interactive session left in the settings.
    QString planner = parser.value(plannerOption);
    if (planner.isEmpty() && parser.isSet(screenshotOption))
        planner = QString::fromUtf8(core::kDefaultPlanner.data(), qsizetype(core::kDefaultPlanner.size()));
    if (!planner.isEmpty()) {
        if (!core::plannerByName(planner.toStdString())) {
            printError(QStringLiteral("unknown planner '%1'; choose one of: %2")
                           .arg(planner, QString::fromStdString([] {
                               std::string names;
                               for (const auto& name : core::plannerNames())
                                   names += (names.empty() ? "" : ", ") + name;
                               return names;
                           }())));
            return 1;
        }
        window.setPlannerName(planner);
    }
    if (parser.isSet(screenshotOption)) {
        const QString dir = parser.value(screenshotOption);
        const auto render = [&window, dir] {
            // Let the views repaint before grabbing them.
            QTimer::singleShot(0, &window, [&window, dir] {
                QString error;
                if (!window.renderScreenshots(dir, &error)) {
                    printError(error);
                    QCoreApplication::exit(1);
                    return;
                }
                QCoreApplication::exit(0);
            });
        };
        const bool run = parser.isSet(runOption);
        QObject::connect(
            &window, &MainWindow::planDisplayed, &app,
            [&window, render, run] {
                // Put the step cursor on the peak so the pictures show what is alive there and the narration line.
                window.document()->setCursorStep(core::peakStep(window.document()->workload()->problem));
                if (!run || !window.runAction()->isEnabled()) {
                    if (run) // an allocation problem: buffers without ops, nothing to execute
                        printError(QStringLiteral("--run: %1 has no ops to run; the pictures show the plan only")
                                       .arg(QString::fromStdString(window.document()->workload()->source)));
                    render();
                    return;
                }
                QObject::connect(&window, &MainWindow::runFinished, &window, render, Qt::SingleShotConnection);
                window.runPlan();
            },
            Qt::SingleShotConnection);
        QObject::connect(&window, &MainWindow::errorOccurred, &app, [](const QString& message) {
            printError(message);
            QCoreApplication::exit(1);
        });
        QTimer::singleShot(10 * 60 * 1000, &app, [] {
            printError(QStringLiteral("gave up waiting for the plan after 10 minutes"));
            QCoreApplication::exit(1);
        });
    }
    if (parser.isSet(workspacesOption))
        window.workspacesCheck()->setChecked(true); // before the first load: nothing to re-load yet
    window.show();
    if (load->bindings.dims.empty() && load->bindings.inputShapes.empty() && files->empty())
        window.openFile(model);
    else
        window.openFileWithSizes(model, load->bindings, *files);
    return app.exec();
}
