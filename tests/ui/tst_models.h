// Models of the desktop app: ScenarioModel (tree, editing through the undo stack, validation mapped to items), the
// quick controls' knobs, the span table and the lesson list — each under QAbstractItemModelTester. This header holds
// what the test's files share: the helpers, a trace of long kernel names, and the test class. The tests:
// tst_models.cpp (the scenario editor's models and the quick controls), tst_models_panels.cpp (the span table, the
// panels' content, the lesson list, formatting).
#pragma once

#include "analysis_panel.h"
#include "document_loader.h"
#include "format.h"
#include "lesson_gallery.h"
#include "property_editor.h"
#include "quick_controls.h"
#include "quick_settings.h"
#include "resources.h"
#include "run_controller.h"
#include "scenario_json.h"
#include "scenario_model.h"
#include "span_inspector.h"
#include "span_table_model.h"
#include "trace.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>
#include <QTextDocument>
#include <QUndoStack>

#include <functional>
#include <set>

using namespace streamscope;

inline Scenario loadLesson(const QString& id, const QString& variant = {})
{
    auto preset = findPreset(id.toStdString());
    if (!preset)
        qFatal("no lesson %s: %s", qPrintable(id), preset.error().message.c_str());
    auto loaded = loadScenarioFile(preset->path, variant.toStdString());
    if (!loaded)
        qFatal("lesson %s does not load: %s", qPrintable(id), loaded.error().toString().c_str());
    return std::move(loaded->scenario);
}

inline QString json(const Scenario& s)
{
    return QString::fromStdString(scenarioToJson(s));
}

// Visits every index of a model (depth first), both columns.
inline void forEachIndex(const QAbstractItemModel& m, const std::function<void(const QModelIndex&)>& f,
                         const QModelIndex& parent = {})
{
    for (int r = 0; r < m.rowCount(parent); ++r) {
        for (int c = 0; c < m.columnCount(parent); ++c)
            f(m.index(r, c, parent));
        forEachIndex(m, f, m.index(r, 0, parent));
    }
}

inline int opCount(const Scenario& s, int thread = 0)
{
    return int(s.threads[size_t(thread)].ops.size());
}

// A kernel named as the PyTorch profiler records it: the whole template signature.
const char* const kPyTorchKernel =
    "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, float, float, "
    "at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul> >(int, at::native::AUnaryFunctor<float, "
    "float, float, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul>)";
const QString kPyTorchKernelShort = QStringLiteral("vectorized_elementwise_kernel<…>");
// A mangled symbol, as CUPTI and Nsight record kernels without demangling: vectorAdd(float const*, float const*,
// float*, int).
const char* const kMangledKernel = "_Z9vectorAddPKfS0_Pfi";

// A host thread launching the PyTorch kernel twice and the mangled one once, on one stream.
inline std::shared_ptr<const Trace> kernelNamesTrace()
{
    auto t = std::make_shared<Trace>();
    Track host;
    host.kind = TrackKind::HostThread;
    host.name = "main";
    const uint32_t h = t->addTrack(host);
    Track stream;
    stream.kind = TrackKind::Stream;
    stream.name = "s1";
    stream.device = 0;
    const uint32_t s = t->addTrack(stream);
    auto add = [&](uint32_t track, SpanKind kind, const char* name, int64_t start, int64_t end) {
        SpanInit init;
        init.track = track;
        init.kind = kind;
        init.name = name;
        init.start = start;
        init.end = end;
        return t->addSpan(init);
    };
    const char* kernels[] = {kPyTorchKernel, kPyTorchKernel, kMangledKernel};
    for (int k = 0; k < 3; ++k) {
        const uint32_t launch = add(h, SpanKind::ApiCall, "cudaLaunchKernel", k * 10'000, k * 10'000 + 2'000);
        const uint32_t kernel = add(s, SpanKind::Kernel, kernels[k], 5'000 + k * 20'000, 20'000 + k * 20'000);
        t->addFlow(launch, kernel, FlowKind::Launch);
    }
    t->finalize();
    return t;
}

inline int findSpanNamed(const Trace& t, std::string_view name)
{
    for (uint32_t i = 0; i < t.spanCount(); ++i)
        if (t.spanName(i) == name)
            return int(i);
    return -1;
}

class TestModels : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();

    // ---- ScenarioModel: structure -----------------------------------------------------------------------------
    void treeShape();
    void indexRoundTrip_data();
    void indexRoundTrip();
    void itemForPath_data();
    void itemForPath();

    // ---- ScenarioModel: editing and undo ----------------------------------------------------------------------
    void editingActionsUndoRedo_data();
    void editingActionsUndoRedo();
    void fieldEditsMerge();
    void renamingAStreamRenamesItsUses();
    void movingAStreamToAnotherDevice();
    void newOpsTakeTheStreamAboveAndTheirThreadsDevice();
    void streamChoicesNameTheirGpu();
    void graphNodes();

    // ---- validation mapped to items ---------------------------------------------------------------------------
    void validationErrorOnItem();
    void validationWarningOnField();
    void propertyEditorCommitsUndoableEdits();
    void propertyHeaderFollowsRenamesAndDeletes();

    // ---- quick controls -----------------------------------------------------------------------------------------
    void quickSettingsDetect();
    void quickSettingsApply();
    void quickSettingsStayValid_data();
    void quickSettingsStayValid();
    void quickControlsAreUndoable();

    // ---- span table -------------------------------------------------------------------------------------------
    void spanTable();
    void spanTableProxyOrdersFiltersAndKeepsTheSelection();
    void spanTableShowsShortNames();
    void spanSortOfMillionsIsStableAndStops();
    void inspectorTitlesTheShortNameAndShowsTheFullOne();
    void analysisNamesSpansShortly();

    // ---- panels' content --------------------------------------------------------------------------------------
    void analysisSaysPassFailWhyAndDiagnoses();
    void cancelledAnalysisSkipsItsStages();
    void analysisListsTheCriticalPath();
    void analysisNamesWhatHeldTheCriticalPath();
    void inspectorListsDependencies();
    void repeatsAreToldApart();
    void inspectorSaysWhyASpanStarted();

    // ---- lessons ----------------------------------------------------------------------------------------------
    void lessonList();

    // ---- formatting -------------------------------------------------------------------------------------------
    void parseBytes_data();
    void parseBytes();
};
