// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "io/workload.h"
#include "latestjob.h"
#include "onnx/onnximport.h"
#include "trace/ortprofile.h"

#include <QElapsedTimer>
#include <QMainWindow>
#include <QString>

#include <functional>
#include <memory>

class AcceleratorWindow;
class ElidedLabel;
class ArenaLayoutView;
class ColoringView;
class ComparisonView;
class FrontierView;
class LatencyLane;
class RunController;
struct RunMeasurement;
class LifetimeBarsView;
class LlmScenarioWindow;
class MemoryCurveView;
class MessageBanner;
class PlanDocument;
class PlanningController;
class PlayController;
class QAction;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QMenu;
class QProgressBar;
class QSpinBox;
class QCheckBox;
class QTabWidget;
class QTableView;
class QTimer;
class QToolButton;
class StrategyPanel;
struct StrategyFacts;
class SummaryPanel;
class TensorFilterProxyModel;
class TensorTableModel;
class ToleranceSpinBox;

// MemPlan Studio's window: the four plot views around one PlanDocument, the tensor table and the
// summary in docks, a toolbar (planner, alignment, lifetime-bar sort/color, play controls, fit),
// a non-modal error banner, File > Open / Recent / Export, and Model > Training Step
// (mainwindowtraining.cpp). Loading and planning go through a
// PlanningController (worker threads); the UI thread never blocks. A failed open or plan shows the
// banner and keeps the previous model. The Strategies dock (StrategyPanel) swaps in a transformed
// workload; Window > Compare A/B opens a ComparisonView (mainwindowstrategies.cpp).
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    PlanDocument* document() const { return m_document; }
    PlanningController* controller() const { return m_controller; }
    PlayController* playController() const { return m_play; }
    SummaryPanel* summaryPanel() const { return m_summary; }
    MessageBanner* messageBanner() const { return m_banner; }
    QTableView* tensorTable() const { return m_table; }
    TensorTableModel* tensorModel() const { return m_tableModel; }
    TensorFilterProxyModel* tensorProxy() const { return m_proxy; }
    LifetimeBarsView* lifetimeBarsView() const { return m_lifetimeBars; }
    ArenaLayoutView* arenaLayoutView() const { return m_arenaLayout; }
    ColoringView* coloringView() const { return m_coloring; }
    MemoryCurveView* memoryCurveView() const { return m_memoryCurve; }
    // View > Memory Curve Against Time, checked or not (it applies to snapshots with event times).
    void showTimeAxis(bool on);
    QComboBox* plannerCombo() const { return m_plannerCombo; }
    QDoubleSpinBox* timeLimitSpin() const { return m_timeLimitSpin; } // seconds, for search planners (exact)
    QToolButton* stopButton() const { return m_stopButton; }
    QLabel* busyLabel() const { return m_busyLabel; } // "Loading…", "Planning…" or the live search progress
    // Strategies: the dock that applies them to the model on display, and the A/B comparison window
    // (null until first shown).
    StrategyPanel* strategyPanel() const { return m_strategyPanel; }
    ComparisonView* comparisonView() const { return m_comparison; }
    FrontierView* frontierView() const { return m_frontierView; }
    // Scenarios menu windows (mainwindowscenarios.cpp); null until first shown.
    LlmScenarioWindow* llmScenarioWindow() const { return m_llmScenario; }
    AcceleratorWindow* acceleratorWindow() const { return m_accelerator; }

    // --- Run the plan (executor) ---
    RunController* runController() const { return m_runController; }
    LatencyLane* latencyLane() const { return m_latencyLane; }
    QAction* runAction() const { return m_runAction; }
    QAction* exportLatencyAction() const { return m_exportLatencyAction; } // File > Export, after a run
    QAction* cancelRunAction() const { return m_cancelRunAction; }
    QComboBox* deviceCombo() const { return m_deviceCombo; } // "cpu"; "cuda" disabled without a device
    QSpinBox* repeatSpin() const { return m_repeatSpin; }   // timed runs per allocation mode
    ToleranceSpinBox* toleranceSpin() const { return m_toleranceSpin; } // cuda: GPU vs CPU relative tolerance
    QProgressBar* runProgressBar() const { return m_runProgress; }

    QString currentSpec() const { return m_currentSpec; } // the model on display (path or example:NAME)
    QString plannerName() const;
    void setPlannerName(const QString& name); // re-plans when it changes
    // What the Studio remembers between sessions, on purpose: the planner (as it changes), and,
    // restored here and saved when the window closes, the window's size, toolbars and docks, the
    // search time limit and the play speed. What belongs to one model (strategies, budget, training
    // step, alignment, workspaces) is not carried to the next session; input sizes come back with
    // Open Recent. The interactive Studio calls this; tests and --screenshot start from the defaults.
    void restoreSessionSettings();
    void saveSessionSettings() const;
    // 0: the workload's default alignment (256 for graphs, 1 for allocation problems). Re-loads.
    void setAlignment(core::Bytes alignment);
    // Plan each Conv's im2col workspace as a buffer of its own (core::LoadOptions::workspaces). Re-loads.
    void setWorkspaces(bool on);
    QCheckBox* workspacesCheck() const { return m_workspacesCheck; }
    // File > Input Sizes: enabled once a load of an ONNX model says what its inputs leave open
    // (after a failed load, or one given sizes), for that model.
    QAction* inputSizesAction() const { return m_inputSizesAction; }
    const core::OpenInputs& openInputs() const { return m_openInputs; }
    // The sizes the model on display (or being loaded) was given; empty for any other.
    core::ShapeBindings shapeBindings() const;
    // The input files given for the model being shown or loaded (File > Input Sizes, --input).
    std::vector<std::pair<std::string, std::filesystem::path>> inputFiles() const;

    // --- Training step (Model menu, mainwindowtraining.cpp) ---
    // Model > Training Step: the model on display planned for one training step, its backward pass
    // appended (core::appendBackwardPass) in a worker; then the strategies and the planner run on it.
    // Belongs to the model, as strategies do: kept through reloads of the same model (alignment,
    // workspaces, input sizes), turned off when another model opens. Disabled, with the reason as its
    // tooltip, for an allocation problem and for a graph that already is a training step (captured
    // with its backward pass).
    QAction* trainingAction() const { return m_trainingAction; }
    // Model > Weight Gradients Outside the Arena (TrainingOptions::weightGradientsInArena false, as
    // --persistent-grads): enabled while the training step is on.
    QAction* persistentGradientsAction() const { return m_persistentGradsAction; }
    bool isTrainingStep() const; // the training step is asked for (it may still be deriving)
    // The model as loaded, before any backward pass or strategy; null before the first load.
    std::shared_ptr<const core::Workload> forwardWorkload() const { return m_forward; }

    // Exports; `error` gets a message naming the file on failure.
    bool exportPlanJson(const QString& path, QString* error = nullptr) const;
    bool exportProblemCsv(const QString& path, QString* error = nullptr) const;
    // Renders memory-curve.png, lifetime-bars.png, arena-layout.png, coloring.png and window.png
    // into `dir` (created when missing), then strategies.png (the window with a strategy applied, plus
    // the marked views as *-strategies.png) and compare.png (the A/B window). Call once a plan is
    // displayed; waits (spinning the event loop) for the background work of the strategy pictures.
    // After a run (runFinished()) the memory curve carries the measured series and latency-lane.png
    // is written too.
    bool renderScreenshots(const QString& dir, QString* error = nullptr);

public slots:
    // `spec`: a file path or "example:NAME". Loads in the background; on failure the banner names
    // the file and the previous model stays.
    void openFile(const QString& spec);
    // openFile with symbolic dimensions and input shapes fixed (as --dim and --input-shape do); they
    // stay with `spec` for reloads (alignment, workspaces) until another model is opened.
    void openFileWithSizes(const QString& spec, const core::ShapeBindings& bindings,
        const std::vector<std::pair<std::string, std::filesystem::path>>& inputFiles = {});
    void showInputSizes(); // the dialog for the open model's sizes; reloads with them on OK
    void openFileDialog();
    // Asks for the training step of the model on display (or the next one loaded, when none is yet).
    // Turning it on where it cannot apply leaves it off and says why in the banner.
    void setTrainingStep(bool on);
    void setPersistentGradients(bool on); // re-derives while the training step is on
    // Reads an ONNX Runtime profile (core/trace/ortprofile.h) in the background and lays it over the
    // model on display, and again over each workload of the same model (strategies, replans); the
    // memory curve and the summary show it. On failure the banner says why.
    void openPeerProfile(const QString& file);
    void openPeerProfileDialog();
    // Diffs another snapshot or model (core/trace/tracediff.h) against the workload on display in
    // the background: the memory curve adds the other side's curve on this axis (aligned by
    // allocation), the summary what makes the peaks differ. On failure the banner names the file.
    void compareWith(const QString& file);
    void openCompareDialog();
    void fit();
    // Stops the running plan and keeps the best plan found so far (search planners); see PlanningController::stop.
    void stopPlanning();
    void showComparison(); // opens the A/B comparison window on the current model
    void showLlmScenario(); // Scenarios > LLM decode with a paged KV cache
    void showAccelerator(); // Scenarios > Accelerator chips, following the model on display
    // Runs the plan on display on the executor chosen in the toolbar; ignored without a plan of a graph.
    void runPlan();
    void cancelRun();

signals:
    void planDisplayed(); // a plan for the current workload reached the document
    void errorOccurred(const QString& message); // load, plan or run failure (also shown in the banner)
    void runFinished(); // a measurement reached the document
    void peerProfileShown(); // a peer profile was laid over the workload on display
    void comparisonShown(); // another snapshot or model was diffed against the workload on display

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void createViews();
    void createDocks();
    void createActions();
    void createToolBar();
    void createStatusBar();
    void connectDocument();

    void reload();
    void replan();
    // Adds the "as recorded" planner entry, selected, for a workload with a recorded placement;
    // removes it (back to the saved planner) for any other. Emits no change signal.
    void syncRecordedPlanner(const core::Workload& workload);
    void onLoadFinished(std::shared_ptr<const core::Workload> workload);
    // The model's workload to show (as loaded, or its training step): the document, title, notes,
    // comparison and strategy panel take it, then it is planned (or the strategies run first).
    void showWorkload(std::shared_ptr<const core::Workload> workload);
    void onPlanReady(const core::Plan& plan);
    void onFailure(const QString& message);
    void onBusyChanged(bool busy);
    void onPlanProgress(qint64 bestArena, qint64 lowerBound, double seconds, bool provenOptimal);
    void updateTimeLimitEnabled();
    void onTableCurrentChanged();
    void onDocumentSelection(int buffer);
    // Runs a change of the table's filters without letting it change the shared selection.
    void refilter(const std::function<void()>& change);
    // "dimension batch and the shape of input z": what a model's inputs leave open, for the banner.
    static QString openSizesText(const core::OpenInputs& open);
    void updateCursorLabel();
    void updateTitle();
    void updateActions();
    void addRecentFile(const QString& spec);
    void layPeerProfile(); // the loaded peer profile over the document's workload, when it is of the profile's model
    void rebuildRecentMenu();
    // Opens a recent file with the input sizes it was last opened with, if any.
    void openRecentFile(const QString& spec);
    void exportViewDialog(QWidget* view, const QString& baseName);
    void exportPlanDialog(bool json);
    // Run the plan: toolbar, progress and results (mainwindow_run.cpp keeps them apart).
    void createRunControls();
    void createPlayControls(); // step back, play, step forward and the speed, on the Run row
    void updateRunEnabled();
    void onRunFinished(std::shared_ptr<const RunMeasurement> measurement);

    // Strategies (strategy panel, A/B comparison).
    void createStrategyDock();
    void connectStrategies();
    void onStrategyWorkload(std::shared_ptr<const core::Workload> workload, std::shared_ptr<const StrategyFacts> facts,
        core::Bytes budget);
    bool renderStrategyScreenshots(const QString& dir, QString* error);

    // Training step (mainwindowtraining.cpp).
    void createTrainingMenu();
    // Shows m_forward, or derives its training step when that is asked for and applies.
    void applyTrainingStep();
    void onTrainingReady(std::shared_ptr<const core::Workload> forward, std::shared_ptr<const core::Workload> training);
    void onTrainingFailed(std::shared_ptr<const core::Workload> forward, const QString& message);
    // Unchecks it, shows the forward pass and says why (`reason`, core's message or the window's own).
    void refuseTrainingStep(const QString& reason);
    void updateTrainingActions();

    // Scenarios (LLM decode with a paged KV cache, accelerator chips).
    void createScenarioMenu();

    PlanDocument* m_document;
    PlanningController* m_controller;
    PlayController* m_play;

    MessageBanner* m_banner = nullptr;
    QTabWidget* m_tabs = nullptr;
    LifetimeBarsView* m_lifetimeBars = nullptr;
    ArenaLayoutView* m_arenaLayout = nullptr;
    ColoringView* m_coloring = nullptr;
    MemoryCurveView* m_memoryCurve = nullptr;
    SummaryPanel* m_summary = nullptr;
    QTableView* m_table = nullptr;
    TensorTableModel* m_tableModel = nullptr;
    TensorFilterProxyModel* m_proxy = nullptr;
    QLineEdit* m_filterEdit = nullptr;
    QComboBox* m_kindCombo = nullptr;
    QComboBox* m_categoryCombo = nullptr; // a captured step's category filter (hidden otherwise)
    QComboBox* m_minSizeCombo = nullptr;

    QComboBox* m_plannerCombo = nullptr;
    QSpinBox* m_alignmentSpin = nullptr;
    QTimer* m_alignmentTimer = nullptr;
    QCheckBox* m_workspacesCheck = nullptr;
    QDoubleSpinBox* m_timeLimitSpin = nullptr;
    QTimer* m_timeLimitTimer = nullptr;
    QComboBox* m_sortCombo = nullptr;
    QComboBox* m_colorCombo = nullptr;
    QComboBox* m_speedCombo = nullptr;
    QAction* m_openAction = nullptr;
    QAction* m_fitAction = nullptr;
    QAction* m_playAction = nullptr;
    QAction* m_stepBackAction = nullptr;
    QAction* m_stepForwardAction = nullptr;
    QAction* m_exportJsonAction = nullptr;
    QAction* m_exportCsvAction = nullptr;
    QAction* m_exportLatencyAction = nullptr;
    QMenu* m_recentMenu = nullptr;
    QMenu* m_exportMenu = nullptr;

    ElidedLabel* m_narrationLabel = nullptr; // the play narration, cut to the room left by the step readout
    QLabel* m_cursorLabel = nullptr;
    QLabel* m_busyLabel = nullptr;
    QProgressBar* m_busyBar = nullptr;
    QToolButton* m_cancelButton = nullptr;
    QToolButton* m_stopButton = nullptr;

    StrategyPanel* m_strategyPanel = nullptr;
    ComparisonView* m_comparison = nullptr;
    FrontierView* m_frontierView = nullptr; // the Frontier tab (mainwindowstrategies.cpp)
    LlmScenarioWindow* m_llmScenario = nullptr;
    AcceleratorWindow* m_accelerator = nullptr;

    QString m_currentSpec; // on display
    QString m_pendingSpec; // being loaded
    core::ShapeBindings m_bindings; // sizes given for m_bindingsSpec
    std::vector<std::pair<std::string, std::filesystem::path>> m_inputFiles; // and its inputs' files
    QString m_bindingsSpec;
    core::OpenInputs m_openInputs; // what m_openInputsSpec's inputs leave open
    QString m_openInputsSpec;
    QAction* m_inputSizesAction = nullptr;
    // Training step.
    QAction* m_trainingAction = nullptr;
    QAction* m_persistentGradsAction = nullptr;
    std::shared_ptr<const core::Workload> m_forward; // the model on display as loaded
    std::shared_ptr<const core::Workload> m_shown;   // what showWorkload last took: m_forward or its training step
    QString m_planningWith; // planner of the running plan, for the progress line
    QString m_loadingName; // the source a load in progress reads, as the busy label names it
    // A peer runtime's profile (openPeerProfile): the file, what it read, the model it belongs to.
    QString m_peerFile;
    std::shared_ptr<const core::OrtProfile> m_peerProfile;
    std::string m_peerModel;
    LatestJob m_peerJob;
    QAction* m_peerProfileAction = nullptr;
    LatestJob m_compareJob;
    QAction* m_compareAction = nullptr;
    QAction* m_timeAxisAction = nullptr; // View > Memory Curve Against Time (a snapshot with event times)
    bool m_syncingSelection = false;
    double m_planTimeLimit = 0; // seconds the running plan's search may take (0: not a search planner)

    // Run the plan.
    RunController* m_runController = nullptr;
    LatencyLane* m_latencyLane = nullptr;
    QAction* m_runAction = nullptr;
    QAction* m_cancelRunAction = nullptr;
    QComboBox* m_deviceCombo = nullptr;
    QSpinBox* m_repeatSpin = nullptr;
    ToleranceSpinBox* m_toleranceSpin = nullptr;
    QProgressBar* m_runProgress = nullptr;
    QElapsedTimer m_runClock; // since the run started: the status bar's estimate
};
