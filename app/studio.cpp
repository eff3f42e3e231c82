// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// memplan-studio [MODEL]                  the desktop application; MODEL defaults to example:unet
// memplan-studio --screenshot DIR [MODEL] renders every view and the window to DIR/*.png, then exits
//                 (with --run: after running the plan on the CPU, so the measurements show)
// --dim NAME=V, --input-shape NAME=D0,D1,... and --input NAME=FILE.pb fix what an ONNX model's
// inputs leave open, as for memplan (File > Input Sizes in the window); a run takes the files' contents.
// --training [--persistent-grads] opens the model's training step (Model > Training Step), and
// --checkpoint sqrt|N recompute with the checkpoint policy on it (the Strategies dock), as for memplan.
#include "cliargs.h"
#include "mainwindow.h"
#include "planners/planner.h"
#include "plandocument.h"
#include "strategypanel.h"
#include "planners/metrics.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QCommandLineParser>
#include <QTimer>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>

namespace {

void printError(const QString& message) { std::fprintf(stderr, "memplan-studio: %s\n", qPrintable(message)); }

// Without a display every QApplication aborts. A screenshot, --help and --version need none, so
// they go offscreen; the window itself gets one line that says what to do instead. False: exit 1.
bool chooseDisplay(int argc, char** argv)
{
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
            return false;
        }
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    return true;
}

// The command line, read and checked.
struct StudioOptions {
    QString model;
    QString planner;    // empty: the last one used
    std::optional<QString> screenshot; // unset: the interactive window
    bool run = false;
    bool workspaces = false;
    bool training = false;
    bool persistentGrads = false;
    std::optional<int> checkpointEvery; // --checkpoint: 0 sqrt, else N
    QString peerProfile; // --ort-profile: laid over the model once its plan shows
    QString compareWith; // --compare-with: diffed against the model once its plan shows
    bool timeAxis = false; // --time-axis: a snapshot's memory curve against its event times
    core::LoadOptions load;
    std::vector<std::pair<std::string, std::filesystem::path>> files;
};

// --help and --version exit here (QCommandLineParser::process); a bad command line gives nullopt.
std::optional<StudioOptions> readOptions(const QApplication& app)
{
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
    const QCommandLineOption trainingOption(QStringLiteral("training"),
        QStringLiteral("Plan one training step: the model's backward pass appended (Model > Training Step), as for memplan."));
    parser.addOption(trainingOption);
    const QCommandLineOption persistentGradsOption(QStringLiteral("persistent-grads"),
        QStringLiteral("With --training: weight gradients are persistent buffers outside the arena (Model > Weight "
                       "Gradients Outside the Arena)."));
    parser.addOption(persistentGradsOption);
    const QCommandLineOption checkpointOption(QStringLiteral("checkpoint"),
        QStringLiteral("On a training step (--training, or a captured one): recompute with the checkpoint policy, keeping "
                       "the outputs of every N-th forward op (sqrt: N = round(sqrt(forward ops))), as for memplan."),
        QStringLiteral("sqrt|N"));
    parser.addOption(checkpointOption);
    const QCommandLineOption peerProfileOption(QStringLiteral("ort-profile"),
        QStringLiteral("An ONNX Runtime profile (enableProfiling) of the model, laid over its plan."), QStringLiteral("file"));
    parser.addOption(peerProfileOption);
    const QCommandLineOption compareOption(QStringLiteral("compare-with"),
        QStringLiteral("Another PyTorch memory snapshot or model, set beside this one as File > Compare With does."), QStringLiteral("file"));
    parser.addOption(compareOption);
    const QCommandLineOption timeAxisOption(QStringLiteral("time-axis"),
        QStringLiteral("Draw a memory snapshot's curve against the time of its events (View > Memory Curve Against Time)."));
    parser.addOption(timeAxisOption);
    parser.addPositionalArgument(QStringLiteral("model"),
        QStringLiteral("ONNX model, JSON graph, allocation CSV or example:NAME (default: example:unet)."),
        QStringLiteral("[model]"));
    parser.process(app);
    if (parser.positionalArguments().size() > 1) {
        printError(QStringLiteral("expected at most one model, got %1").arg(parser.positionalArguments().size()));
        return std::nullopt;
    }
    StudioOptions options;
    options.model = parser.positionalArguments().value(0, QStringLiteral("example:unet"));
    if (parser.isSet(screenshotOption))
        options.screenshot = parser.value(screenshotOption);
    options.run = parser.isSet(runOption);
    options.workspaces = parser.isSet(workspacesOption);
    options.training = parser.isSet(trainingOption);
    options.persistentGrads = parser.isSet(persistentGradsOption);
    if (options.persistentGrads && !options.training) {
        printError(QStringLiteral("--persistent-grads needs --training"));
        return std::nullopt;
    }
    if (parser.isSet(checkpointOption)) {
        const QString text = parser.value(checkpointOption);
        const auto every = parseCheckpointEvery(text.toStdString());
        if (!every) {
            printError(QStringLiteral("--checkpoint '%1': %2").arg(text, QLatin1String(kCheckpointExpected)));
            return std::nullopt;
        }
        options.checkpointEvery = *every;
    }
    options.peerProfile = parser.value(peerProfileOption);
    options.compareWith = parser.value(compareOption);
    options.timeAxis = parser.isSet(timeAxisOption);
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
        return std::nullopt;
    }
    options.load = *load;
    options.files = *files;
    // Screenshots must not depend on what an earlier interactive session left in the settings.
    options.planner = parser.value(plannerOption);
    if (options.planner.isEmpty() && parser.isSet(screenshotOption))
        options.planner = QString::fromUtf8(core::kDefaultPlanner.data(), qsizetype(core::kDefaultPlanner.size()));
    if (!options.planner.isEmpty() && !core::plannerByName(options.planner.toStdString())) {
        printError(QStringLiteral("unknown planner '%1'; choose one of: %2")
                       .arg(options.planner, QString::fromStdString([] {
                           std::string names;
                           for (const auto& name : core::plannerNames())
                               names += (names.empty() ? "" : ", ") + name;
                           return names;
                       }())));
        return std::nullopt;
    }
    return options;
}

// --screenshot DIR: once the plan shows (and with --run, once it has run), every view and the
// window to DIR, then the application exits with 0, or 1 and one line on an error.
void scheduleScreenshots(QApplication& app, MainWindow& window, const QString& dir, bool run, bool peerProfile, bool compare)
{
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
    QObject::connect(
        &window, &MainWindow::planDisplayed, &app,
        [&window, render, run, peerProfile, compare] {
            // Put the step cursor on the peak so the pictures show what is alive there and the narration line.
            window.document()->setCursorStep(core::peakStep(window.document()->workload()->problem));
            if (peerProfile && !window.document()->peerProfile()) { // --ort-profile: once it lies over the plan
                QObject::connect(&window, &MainWindow::peerProfileShown, &window, render, Qt::SingleShotConnection);
                return;
            }
            if (compare && !window.document()->comparison()) { // --compare-with: once the comparison shows
                QObject::connect(&window, &MainWindow::comparisonShown, &window, render, Qt::SingleShotConnection);
                return;
            }
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

} // namespace

int main(int argc, char** argv)
{
    if (!chooseDisplay(argc, argv))
        return 1;
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("MemPlan"));
    QApplication::setApplicationName(QStringLiteral("MemPlan Studio"));
    QApplication::setApplicationVersion(QStringLiteral(MEMPLAN_VERSION));
    const auto options = readOptions(app);
    if (!options)
        return 1;

    MainWindow window;
    if (!options->screenshot) // pictures are drawn at the defaults, whatever the last session left
        window.restoreSessionSettings();
    if (!options->planner.isEmpty())
        window.setPlannerName(options->planner);
    if (options->screenshot)
        scheduleScreenshots(app, window, *options->screenshot, options->run, !options->peerProfile.isEmpty(), !options->compareWith.isEmpty());
    if (!options->peerProfile.isEmpty())
        QObject::connect(
            &window, &MainWindow::planDisplayed, &window, [&window, file = options->peerProfile] { window.openPeerProfile(file); },
            Qt::SingleShotConnection);
    if (!options->compareWith.isEmpty())
        QObject::connect(
            &window, &MainWindow::planDisplayed, &window, [&window, file = options->compareWith] { window.compareWith(file); },
            Qt::SingleShotConnection);
    window.showTimeAxis(options->timeAxis);
    if (options->workspaces)
        window.workspacesCheck()->setChecked(true); // before the first load: nothing to re-load yet
    window.setTrainingStep(options->training); // likewise: the first load takes them
    window.setPersistentGradients(options->persistentGrads);
    if (options->checkpointEvery) {
        window.strategyPanel()->setStrategyChecked(QStringLiteral("recompute"), true);
        window.strategyPanel()->setCheckpointEvery(options->checkpointEvery);
        // As memplan's --checkpoint, it needs a backward pass; without one the dock's recompute is greedy.
        QObject::connect(
            &window, &MainWindow::planDisplayed, &window,
            [&window] {
                if (!window.strategyPanel()->checkpointApplies())
                    printError(QStringLiteral("--checkpoint: %1 has no backward pass (add --training); recompute is greedy")
                                   .arg(QString::fromStdString(window.document()->workload()->source)));
            },
            Qt::SingleShotConnection);
    }
    window.show();
    if (options->load.bindings.dims.empty() && options->load.bindings.inputShapes.empty() && options->files.empty())
        window.openFile(options->model);
    else
        window.openFileWithSizes(options->model, options->load.bindings, options->files);
    return app.exec();
}
