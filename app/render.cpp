// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// The render module, libmemplan-render.so: the Studio's views drawn offscreen, loaded by `memplan
// render` only (renderloader.cpp), so the rest of the command line never maps Qt Widgets.
#include "render.h"
#include "renderabi.h"

#include "arenalayoutview.h"
#include "buffercolors.h"
#include "coloringview.h"
#include "graph/capture.h"
#include "lifetimebarsview.h"
#include "memorycurveview.h"
#include "plandocument.h"
#include "strategymarks.h"

#include <QApplication>
#include <QString>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <system_error>

namespace {
// Qt's platform chatter (no XDG_RUNTIME_DIR, what the offscreen platform cannot do) is not the
// user's business: failures come back through renderViews' result. Critical messages still show.
void quietHandler(QtMsgType type, const QMessageLogContext&, const QString& message)
{
    if (type == QtCriticalMsg || type == QtFatalMsg)
        std::fprintf(stderr, "%s\n", qPrintable(message));
}
} // namespace

namespace {

bool drawViews(const core::Workload& workload, const core::Plan& plan, const RenderOptions& options,
    std::vector<std::filesystem::path>& written, std::string& error, const StrategyMarking& marking)
{
    std::error_code ec;
    std::filesystem::create_directories(options.outDir, ec);
    if (ec) {
        error = options.outDir.string() + ": cannot create the folder: " + ec.message();
        return false;
    }
    // Drawing needs no display: the offscreen platform, unless the caller chose one.
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    qInstallMessageHandler(quietHandler);
    static int argc = 1;
    static char name[] = "memplan";
    static char* argv[] = { name, nullptr };
    const QApplication app(argc, argv);

    PlanDocument document;
    const auto shown = std::make_shared<const core::Workload>(workload);
    if (marking.original && marking.state) // first: the views read the facts when the workload arrives
        document.setStrategyFacts(std::make_shared<const StrategyFacts>(computeStrategyFacts(*marking.original, shown, *marking.state)));
    document.setWorkload(shown);
    document.setPlan(plan);
    MemoryCurveView curve(&document);
    LifetimeBarsView bars(&document);
    ArenaLayoutView arena(&document);
    ColoringView coloring(&document);
    const bool captured = workload.graph && core::hasCategories(*workload.graph);
    const std::string colorBy = options.colorBy.empty() ? (captured ? "category" : "kind") : options.colorBy;
    const auto how = colorBy == "module" ? BufferColoring::Module : colorBy == "category" ? BufferColoring::Category : BufferColoring::Kind;
    bars.setColorMode(how == BufferColoring::Module ? LifetimeBarsView::ColorMode::Module
            : how == BufferColoring::Category       ? LifetimeBarsView::ColorMode::Category
                                                    : LifetimeBarsView::ColorMode::Kind);
    arena.setColoring(how);
    const std::pair<QWidget*, const char*> views[]
        = { { &curve, "memory-curve" }, { &bars, "lifetime-bars" }, { &arena, "arena-layout" }, { &coloring, "coloring" } };
    for (const auto& [view, stem] : views) {
        int height = options.height;
        if (options.fitRows && view != &curve)
            height = std::clamp(static_cast<TimelineView*>(view)->heightForAllRows(options.width), height, 8000);
        view->resize(options.width, height); // exportImage draws at the widget's size
        const auto path = options.outDir / (std::string(stem) + "." + options.format);
        const QString file = QString::fromStdString(path.string());
        QString message;
        const bool ok = view == &curve ? curve.exportImage(file, &message) : static_cast<TimelineView*>(view)->exportImage(file, &message);
        if (!ok) {
            error = message.isEmpty() ? path.string() + ": cannot write the image file" : message.toStdString();
            return false;
        }
        written.push_back(path);
    }
    return true;
}

} // namespace

extern "C" __attribute__((visibility("default"))) bool memplan_render_views(std::uint64_t abi, const RenderCall* call)
{
    if (abi != kRenderAbi)
        return false;
    return drawViews(*call->workload, *call->plan, *call->options, *call->written, *call->error, *call->marking);
}
