// Models of the desktop app: ScenarioModel (tree, editing through the undo stack, validation mapped to items), the
// quick controls' knobs, the span table and the lesson list — each under QAbstractItemModelTester.
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

using namespace streamscope;

namespace {

Scenario loadLesson(const QString& id, const QString& variant = {})
{
    auto preset = findPreset(id.toStdString());
    if (!preset)
        qFatal("no lesson %s: %s", qPrintable(id), preset.error().message.c_str());
    auto loaded = loadScenarioFile(preset->path, variant.toStdString());
    if (!loaded)
        qFatal("lesson %s does not load: %s", qPrintable(id), loaded.error().toString().c_str());
    return std::move(loaded->scenario);
}

QString json(const Scenario& s)
{
    return QString::fromStdString(scenarioToJson(s));
}

// Visits every index of a model (depth first), both columns.
void forEachIndex(const QAbstractItemModel& m, const std::function<void(const QModelIndex&)>& f,
                  const QModelIndex& parent = {})
{
    for (int r = 0; r < m.rowCount(parent); ++r) {
        for (int c = 0; c < m.columnCount(parent); ++c)
            f(m.index(r, c, parent));
        forEachIndex(m, f, m.index(r, 0, parent));
    }
}

int opCount(const Scenario& s, int thread = 0)
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
std::shared_ptr<const Trace> kernelNamesTrace()
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

int findSpanNamed(const Trace& t, std::string_view name)
{
    for (uint32_t i = 0; i < t.spanCount(); ++i)
        if (t.spanName(i) == name)
            return int(i);
    return -1;
}

} // namespace

class TestModels : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QVERIFY2(!listPresets().empty(), "no lessons found: set STREAMSCOPE_RESOURCES"); }

    // ---- ScenarioModel: structure -----------------------------------------------------------------------------

    void treeShape()
    {
        ScenarioModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setScenario(loadLesson(QStringLiteral("01")));
        QCOMPARE(model.rowCount(), 3);
        const QModelIndex devices = model.indexOf(ScenarioItemRef{ScenarioItemType::DevicesGroup});
        const QModelIndex threads = model.indexOf(ScenarioItemRef{ScenarioItemType::ThreadsGroup});
        QCOMPARE(model.rowCount(devices), 1);
        QCOMPARE(model.rowCount(model.index(0, 0, devices)), 2); // s1, s2 under GPU 0
        QCOMPARE(model.index(1, 0, model.index(0, 0, devices)).data().toString(), QStringLiteral("s2"));
        QCOMPARE(model.rowCount(threads), 1);
        QCOMPARE(model.rowCount(model.index(0, 0, threads)), 2); // matmul, transpose
        QCOMPARE(model.index(0, 0, model.index(0, 0, threads)).data().toString(), QStringLiteral("matmul"));
        QVERIFY(model.index(0, ScenarioModel::DetailsColumn, model.index(0, 0, threads))
                    .data()
                    .toString()
                    .contains(QStringLiteral("kernel matmul")));
        QVERIFY(model.issues().empty());
        QVERIFY(model.validatedScenario());
    }

    void indexRoundTrip_data()
    {
        QTest::addColumn<QString>("lesson");
        for (const PresetInfo& p : listPresets())
            QTest::newRow(p.id.c_str()) << QString::fromStdString(p.id);
    }

    // Every index names an item whose index is the same again; parent() agrees with the item.
    void indexRoundTrip()
    {
        QFETCH(QString, lesson);
        ScenarioModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setScenario(loadLesson(lesson));
        int items = 0;
        forEachIndex(model, [&](const QModelIndex& i) {
            const ScenarioItemRef ref = model.itemAt(i);
            QVERIFY(ref.isValid());
            QCOMPARE(model.indexOf(ref, i.column()), i);
            ++items;
        });
        QVERIFY(items > 5);
    }

    void itemForPath_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<int>("type");
        QTest::addColumn<int>("a");
        QTest::addColumn<int>("b");
        QTest::addColumn<int>("c");
        QTest::addColumn<QString>("field");
        QTest::newRow("op field") << "/threads/1/ops/3/stream" << int(ScenarioItemType::Op) << 1 << 3 << -1 << "stream";
        QTest::newRow("grid element") << "/threads/0/ops/2/grid/0" << int(ScenarioItemType::Op) << 0 << 2 << -1
                                      << "grid/0";
        QTest::newRow("graph node") << "/threads/0/ops/2/ops/1/kernel" << int(ScenarioItemType::GraphNode) << 0 << 2
                                    << 1 << "kernel";
        QTest::newRow("thread") << "/threads/2/repeat" << int(ScenarioItemType::Thread) << 2 << -1 << -1 << "repeat";
        QTest::newRow("stream") << "/streams/4/kind" << int(ScenarioItemType::Stream) << 4 << -1 << -1 << "kind";
        QTest::newRow("device") << "/devices/1/index" << int(ScenarioItemType::Device) << 1 << -1 << -1 << "index";
        QTest::newRow("run") << "/run/warmup" << int(ScenarioItemType::Settings) << -1 << -1 << -1 << "run/warmup";
        QTest::newRow("threads") << "/threads" << int(ScenarioItemType::ThreadsGroup) << -1 << -1 << -1 << "";
        QTest::newRow("root") << "" << int(ScenarioItemType::Settings) << -1 << -1 << -1 << "";
    }

    void itemForPath()
    {
        QFETCH(QString, path);
        QFETCH(int, type);
        QFETCH(int, a);
        QFETCH(int, b);
        QFETCH(int, c);
        QFETCH(QString, field);
        QString gotField;
        const ScenarioItemRef ref = ScenarioModel::itemForPath(path, &gotField);
        QCOMPARE(int(ref.type), type);
        QCOMPARE(ref.a, a);
        QCOMPARE(ref.b, b);
        QCOMPARE(ref.c, c);
        QCOMPARE(gotField, field);
    }

    // ---- ScenarioModel: editing and undo ----------------------------------------------------------------------

    void editingActionsUndoRedo_data()
    {
        QTest::addColumn<QString>("lesson");
        for (const char* id : {"01", "03", "05", "07", "08", "14"})
            QTest::newRow(id) << QString::fromLatin1(id);
    }

    // A run of every kind of edit with the tester watching; undoing all restores the scenario exactly, redoing all
    // gives the edited one again.
    void editingActionsUndoRedo()
    {
        QFETCH(QString, lesson);
        ScenarioModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setScenario(loadLesson(lesson));
        const QString original = json(model.scenario());
        QSignalSpy changed(&model, &ScenarioModel::scenarioChanged);

        const ScenarioItemRef op0 = ScenarioItemRef::op(0, 0);
        const ScenarioItemRef added = model.addOp(op0, OpKind::HostWork);
        QCOMPARE(added, ScenarioItemRef::op(0, 1));
        QVERIFY(model.op(added)->kind == OpKind::HostWork);
        const ScenarioItemRef moved = model.move(added, -1);
        QCOMPARE(moved, ScenarioItemRef::op(0, 0));
        QVERIFY(model.op(moved)->kind == OpKind::HostWork);
        const ScenarioItemRef dup = model.duplicate(ScenarioItemRef::op(0, 1));
        QCOMPARE(dup, ScenarioItemRef::op(0, 2));
        QVERIFY(model.remove(ScenarioItemRef::op(0, 0)));
        const ScenarioItemRef stream = model.addStream(ScenarioItemRef::device(0));
        QVERIFY(model.stream(stream));
        QVERIFY(model.canMove(ScenarioItemRef::stream(0), +1));
        model.move(ScenarioItemRef::stream(0), +1);
        const ScenarioItemRef thread = model.addThread();
        QVERIFY(model.thread(thread));
        model.duplicate(ScenarioItemRef::thread(0));
        model.move(ScenarioItemRef::thread(1), -1);
        model.addDevice();
        model.remove(thread);

        const QString edited = json(model.scenario());
        QVERIFY(edited != original);
        QVERIFY(changed.count() >= 10);
        QVERIFY(model.undoStack()->count() >= 10);
        while (model.undoStack()->canUndo())
            model.undoStack()->undo();
        QCOMPARE(json(model.scenario()), original);
        QVERIFY(model.issues().empty());
        while (model.undoStack()->canRedo())
            model.undoStack()->redo();
        QCOMPARE(json(model.scenario()), edited);
    }

    void fieldEditsMerge()
    {
        ScenarioModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setScenario(loadLesson(QStringLiteral("04")));
        const ScenarioItemRef work1 = ScenarioItemRef::op(0, 0);
        const double before = model.op(work1)->durationUs;
        QSignalSpy dataChanged(&model, &QAbstractItemModel::dataChanged);
        // Spin-box clicks on one field of one op are one undo step.
        for (double d : {1100.0, 1200.0, 1300.0}) {
            Op op = *model.op(work1);
            op.durationUs = d;
            model.setOp(work1, op, QStringLiteral("duration"));
        }
        QCOMPARE(model.undoStack()->count(), 1);
        QCOMPARE(model.op(work1)->durationUs, 1300.0);
        QVERIFY(!dataChanged.isEmpty());
        QCOMPARE(model.index(0, 0, model.indexOf(ScenarioItemRef::thread(0))), model.indexOf(work1));
        // Another field is another step.
        Op op = *model.op(work1);
        op.name = "renamed";
        model.setOp(work1, op, QStringLiteral("name"));
        QCOMPARE(model.undoStack()->count(), 2);
        QCOMPARE(model.indexOf(work1).data().toString(), QStringLiteral("renamed"));
        model.undoStack()->undo();
        model.undoStack()->undo();
        QCOMPARE(model.op(work1)->durationUs, before);
        QVERIFY(model.undoStack()->isClean());
    }

    void renamingAStreamRenamesItsUses()
    {
        ScenarioModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setScenario(loadLesson(QStringLiteral("08")));
        StreamSpec s0 = *model.stream(ScenarioItemRef::stream(0));
        QCOMPARE(s0.name, std::string("s0"));
        s0.name = "copy-in";
        model.setStream(0, s0, QStringLiteral("name"));
        QVERIFY2(model.issues().empty(), "the ops follow the new name, so the scenario stays valid");
        QCOMPARE(model.op(ScenarioItemRef::op(0, 0))->stream, std::string("copy-in"));
        QCOMPARE(model.op(ScenarioItemRef::op(0, 12))->stream, std::string("copy-in"));
        QCOMPARE(model.op(ScenarioItemRef::op(0, 3))->stream, std::string("s1"));
        model.undoStack()->undo();
        QCOMPARE(model.op(ScenarioItemRef::op(0, 0))->stream, std::string("s0"));
        QCOMPARE(model.stream(ScenarioItemRef::stream(0))->name, std::string("s0"));
    }

    void movingAStreamToAnotherDevice()
    {
        ScenarioModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setScenario(loadLesson(QStringLiteral("07")));
        QVERIFY(model.scenario().devices.size() >= 2);
        const QModelIndex gpu0 = model.indexOf(ScenarioItemRef::device(0));
        const QModelIndex gpu1 = model.indexOf(ScenarioItemRef::device(1));
        const int rows0 = model.rowCount(gpu0), rows1 = model.rowCount(gpu1);
        // The first stream of GPU 0 goes to GPU 1.
        const ScenarioItemRef first = model.itemAt(model.index(0, 0, gpu0));
        QPersistentModelIndex keep(model.indexOf(first));
        StreamSpec s = *model.stream(first);
        s.device = model.scenario().devices[1].index;
        model.setStream(first.a, s, QStringLiteral("device"));
        QCOMPARE(model.rowCount(gpu0), rows0 - 1);
        QCOMPARE(model.rowCount(gpu1), rows1 + 1);
        QVERIFY(keep.isValid());
        QCOMPARE(keep.parent(), QModelIndex(gpu1));
        QCOMPARE(model.itemAt(keep), first);
        model.undoStack()->undo();
        QCOMPARE(model.rowCount(gpu0), rows0);
        QCOMPARE(keep.parent(), QModelIndex(gpu0));
    }

    void graphNodes()
    {
        ScenarioModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        Scenario s = loadLesson(QStringLiteral("01"));
        s.threads[0].ops.push_back(ScenarioModel::defaultOp(s, 0, OpKind::Graph));
        model.setScenario(s);
        const ScenarioItemRef graph = ScenarioItemRef::op(0, 2);
        QCOMPARE(model.rowCount(model.indexOf(graph)), 3);
        const ScenarioItemRef node = model.addGraphNode(graph, OpKind::Memset);
        QCOMPARE(node, ScenarioItemRef::node(0, 2, 3));
        QCOMPARE(model.rowCount(model.indexOf(graph)), 4);
        QCOMPARE(model.indexOf(node).parent(), model.indexOf(graph));
        QVERIFY(model.issues().empty());
        // The graph moves up: its nodes go with it.
        QPersistentModelIndex nodeIndex(model.indexOf(node));
        const ScenarioItemRef up = model.move(graph, -1);
        QCOMPARE(up, ScenarioItemRef::op(0, 1));
        QCOMPARE(model.itemAt(nodeIndex), ScenarioItemRef::node(0, 1, 3));
        // No longer a graph: the nodes go; undo brings them back.
        Op k = *model.op(up);
        k.kind = OpKind::Kernel;
        k.ops.clear();
        k.durationUs = 10;
        k.grid = Dim3{1, 1, 1};
        k.gridGiven = true;
        model.setOp(up, k, QStringLiteral("operation"));
        QCOMPARE(model.rowCount(model.indexOf(up)), 0);
        QVERIFY(!nodeIndex.isValid());
        model.undoStack()->undo();
        QCOMPARE(model.rowCount(model.indexOf(up)), 4);
    }

    // ---- validation mapped to items ---------------------------------------------------------------------------

    void validationErrorOnItem()
    {
        ScenarioModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setScenario(loadLesson(QStringLiteral("01")));
        QSignalSpy validation(&model, &ScenarioModel::validationChanged);
        const ScenarioItemRef transpose = ScenarioItemRef::op(0, 1);
        Op op = *model.op(transpose);
        op.stream = "nope";
        model.setOp(transpose, op, QStringLiteral("stream"));

        QCOMPARE(validation.count(), 1);
        QVERIFY(!model.validatedScenario());
        const auto error = model.error();
        QVERIFY(error);
        QCOMPARE(error->path, QStringLiteral("/threads/0/ops/1/stream"));
        QCOMPARE(error->item, transpose);
        QCOMPARE(error->field, QStringLiteral("stream"));
        QVERIFY(error->message.contains(QStringLiteral("nope")));
        // On the op, and on its ancestors so that a collapsed tree shows it; not on its sibling.
        const QModelIndex opIndex = model.indexOf(transpose);
        QCOMPARE(opIndex.data(ScenarioModel::IssueSeverityRole).toInt(), 0);
        QVERIFY(opIndex.data(ScenarioModel::IssueMessageRole).toString().contains(QStringLiteral("nope")));
        QVERIFY(!opIndex.data(Qt::DecorationRole).isNull());
        QCOMPARE(opIndex.parent().data(ScenarioModel::IssueSeverityRole).toInt(), 0);
        QCOMPARE(opIndex.parent().parent().data(ScenarioModel::IssueSeverityRole).toInt(), 0);
        QCOMPARE(model.indexOf(ScenarioItemRef::op(0, 0)).data(ScenarioModel::IssueSeverityRole).toInt(), -1);

        // The property editor shows it under the field.
        PropertyEditor editor;
        editor.setModel(&model);
        editor.setCurrentIndex(opIndex);
        QVERIFY(editor.fieldEditor(QStringLiteral("stream")));
        QVERIFY2(editor.fieldMessage(QStringLiteral("stream")).contains(QStringLiteral("nope")),
                 qPrintable(editor.fieldMessage(QStringLiteral("stream"))));
        QVERIFY(editor.fieldMessage(QStringLiteral("name")).isEmpty());

        model.undoStack()->undo();
        QVERIFY(model.issues().empty());
        QVERIFY(model.validatedScenario());
        QCOMPARE(opIndex.data(ScenarioModel::IssueSeverityRole).toInt(), -1);
        QVERIFY(editor.fieldMessage(QStringLiteral("stream")).isEmpty());
    }

    void validationWarningOnField()
    {
        ScenarioModel model;
        model.setScenario(loadLesson(QStringLiteral("08")));
        const ScenarioItemRef h2d = ScenarioItemRef::op(0, 0);
        Op op = *model.op(h2d);
        op.pinned = false;
        model.setOp(h2d, op, QStringLiteral("host memory"));
        QVERIFY2(model.validatedScenario(), "a pageable async copy is legal");
        const auto issues = model.issuesAt(h2d);
        QCOMPARE(issues.size(), size_t(1));
        QCOMPARE(issues[0].severity, ScenarioIssue::Severity::Warning);
        QCOMPARE(issues[0].field, QStringLiteral("host"));
        QCOMPARE(model.indexOf(h2d).data(ScenarioModel::IssueSeverityRole).toInt(), 1);
    }

    void propertyEditorCommitsUndoableEdits()
    {
        ScenarioModel model;
        model.setScenario(loadLesson(QStringLiteral("04")));
        PropertyEditor editor;
        editor.setModel(&model);
        editor.setCurrentIndex(model.indexOf(ScenarioItemRef::op(0, 0)));
        auto* duration = qobject_cast<QDoubleSpinBox*>(editor.fieldEditor(QStringLiteral("duration_us")));
        QVERIFY(duration);
        QCOMPARE(duration->value(), 1000.0);
        duration->setValue(250.0);
        QCOMPARE(model.op(ScenarioItemRef::op(0, 0))->durationUs, 250.0);
        auto* stream = qobject_cast<QComboBox*>(editor.fieldEditor(QStringLiteral("stream")));
        QVERIFY(stream);
        const int s3 = stream->findData(QStringLiteral("s3"));
        QVERIFY(s3 >= 0);
        stream->setCurrentIndex(s3);
        Q_EMIT stream->activated(s3);
        QCOMPARE(model.op(ScenarioItemRef::op(0, 0))->stream, std::string("s3"));
        QCOMPARE(model.undoStack()->count(), 2);
        model.undoStack()->undo();
        model.undoStack()->undo();
        QCOMPARE(duration->value(), 1000.0); // the editor follows undo
        QCOMPARE(stream->currentData().toString(), QStringLiteral("s1"));
        // The kind changes the form.
        auto* kind = qobject_cast<QComboBox*>(editor.fieldEditor(QStringLiteral("op")));
        const int memcpy = kind->findData(int(OpKind::Memcpy));
        kind->setCurrentIndex(memcpy);
        Q_EMIT kind->activated(memcpy);
        QVERIFY(model.op(ScenarioItemRef::op(0, 0))->kind == OpKind::Memcpy);
        QVERIFY(editor.fieldEditor(QStringLiteral("bytes")));
        QVERIFY(!editor.fieldEditor(QStringLiteral("duration_us")));
    }

    // ---- quick controls -----------------------------------------------------------------------------------------

    void quickSettingsDetect()
    {
        const QuickSettings l01 = detectQuickSettings(loadLesson(QStringLiteral("01")));
        QCOMPARE(l01.threads, 1);
        QCOMPARE(l01.streamsPerThread, 2);
        QCOMPARE(l01.chunks, 2);
        QCOMPARE(l01.memory, MemoryMode::None);
        QCOMPARE(l01.streamMode, DefaultStreamMode::NonBlocking);
        const QuickSettings l08 = detectQuickSettings(loadLesson(QStringLiteral("08")));
        QCOMPARE(l08.streamsPerThread, 4);
        QCOMPARE(l08.chunks, 8);
        QCOMPARE(l08.memory, MemoryMode::Pinned);
        QCOMPARE(detectQuickSettings(loadLesson(QStringLiteral("04"), QStringLiteral("blocking"))).streamMode,
                 DefaultStreamMode::Legacy);
        QCOMPARE(detectQuickSettings(loadLesson(QStringLiteral("04"), QStringLiteral("per-thread-default"))).streamMode,
                 DefaultStreamMode::PerThread);
    }

    void quickSettingsApply()
    {
        const Scenario base = loadLesson(QStringLiteral("08"));
        const QuickSettings q = detectQuickSettings(base);
        // Fewer chunks, then back: exactly the base again (knobs always derive from the base).
        QuickSettings fewer = q;
        fewer.chunks = 4;
        const Scenario four = applyQuickSettings(base, q, fewer);
        QCOMPARE(opCount(four), 4 * 3 + 1);
        QCOMPARE(json(applyQuickSettings(base, q, q)), json(base));
        // One stream: everything in s0.
        QuickSettings one = q;
        one.streamsPerThread = 1;
        const Scenario serial = applyQuickSettings(base, q, one);
        for (const Op& op : serial.threads[0].ops)
            QVERIFY(op.stream.empty() || op.stream == "s0");
        QCOMPARE(serial.streams.size(), size_t(1));
        // Six streams: two new ones, used round-robin.
        QuickSettings six = q;
        six.streamsPerThread = 6;
        const Scenario wide = applyQuickSettings(base, q, six);
        QCOMPARE(wide.streams.size(), size_t(6));
        QCOMPARE(wide.threads[0].ops[3 * 5].stream, wide.streams[5].name);
        // Pageable memory, double kernel work.
        QuickSettings slow = q;
        slow.memory = MemoryMode::Pageable;
        slow.kernelScale = 2.0;
        const Scenario pageable = applyQuickSettings(base, q, slow);
        QCOMPARE(pageable.threads[0].ops[0].pinned, false);
        QCOMPARE(pageable.threads[0].ops[1].durationUs, 2 * base.threads[0].ops[1].durationUs);
        // Two host threads: the clone has streams of its own.
        QuickSettings two = q;
        two.threads = 2;
        const Scenario threads = applyQuickSettings(base, q, two);
        QCOMPARE(threads.threads.size(), size_t(2));
        QCOMPARE(threads.streams.size(), size_t(8));
        QVERIFY(threads.threads[1].ops[0].stream != threads.threads[0].ops[0].stream);
    }

    void quickSettingsStayValid_data()
    {
        QTest::addColumn<QString>("lesson");
        for (const PresetInfo& p : listPresets())
            QTest::newRow(p.id.c_str()) << QString::fromStdString(p.id);
    }

    // Every knob on every lesson gives a scenario the core accepts and the simulator runs.
    void quickSettingsStayValid()
    {
        QFETCH(QString, lesson);
        const Scenario base = loadLesson(lesson);
        const QuickSettings q = detectQuickSettings(base);
        std::vector<std::pair<const char*, QuickSettings>> cases;
        auto add = [&](const char* name, const std::function<void(QuickSettings&)>& f) {
            QuickSettings w = q;
            f(w);
            cases.emplace_back(name, w);
        };
        add("threads+1", [](QuickSettings& w) { w.threads += 1; });
        add("threads 3", [](QuickSettings& w) { w.threads = 3; });
        if (q.streamsPerThread > 0) {
            add("streams 1", [](QuickSettings& w) { w.streamsPerThread = 1; });
            add("streams+2", [](QuickSettings& w) { w.streamsPerThread += 2; });
            add("chunks*2", [](QuickSettings& w) { w.chunks *= 2; });
            add("chunks 1", [](QuickSettings& w) { w.chunks = 1; });
        }
        if (q.memory != MemoryMode::None)
            add("pageable", [](QuickSettings& w) { w.memory = MemoryMode::Pageable; });
        add("kernels x0.5", [](QuickSettings& w) { w.kernelScale = 0.5; });
        add("legacy", [](QuickSettings& w) { w.streamMode = DefaultStreamMode::Legacy; });
        add("per-thread", [](QuickSettings& w) { w.streamMode = DefaultStreamMode::PerThread; });
        add("non-blocking", [](QuickSettings& w) { w.streamMode = DefaultStreamMode::NonBlocking; });
        for (const auto& [name, wanted] : cases) {
            const Scenario derived = applyQuickSettings(base, q, wanted);
            auto valid = validateScenario(derived);
            QVERIFY2(valid,
                     qPrintable(QStringLiteral("%1: %2").arg(QLatin1String(name), qs(valid.error().toString()))));
            auto trace = RunController::simulate(valid->scenario);
            QVERIFY2(trace, qPrintable(QLatin1String(name)));
            QVERIFY(trace->spanCount() > 0);
        }
    }

    void quickControlsAreUndoable()
    {
        ScenarioModel model;
        model.setScenario(loadLesson(QStringLiteral("08")));
        QuickControls controls;
        controls.setModel(&model);
        QCOMPARE(controls.chunksBox()->value(), 8);
        QSignalSpy changed(&model, &ScenarioModel::scenarioChanged);
        controls.chunksBox()->setValue(5);
        controls.chunksBox()->setValue(4); // one step with the one before: the same knob
        QCOMPARE(changed.count(), 2);
        QCOMPARE(model.undoStack()->count(), 1);
        QCOMPARE(opCount(model.scenario()), 4 * 3 + 1);
        QVERIFY(model.quickState());
        controls.streamsBox()->setValue(2);
        QCOMPARE(model.undoStack()->count(), 2);
        QCOMPARE(controls.chunksBox()->value(), 4);
        QCOMPARE(controls.streamsBox()->value(), 2);
        model.undoStack()->undo();
        QCOMPARE(controls.streamsBox()->value(), 4);
        QCOMPARE(controls.chunksBox()->value(), 4);
        model.undoStack()->undo();
        QCOMPARE(controls.chunksBox()->value(), 8);
        QCOMPARE(opCount(model.scenario()), 8 * 3 + 1);
        // A hand edit makes the scenario as it is the base of the knobs.
        model.undoStack()->redo();
        model.remove(ScenarioItemRef::op(0, 0));
        QVERIFY(!model.quickState());
        QCOMPARE(controls.settings().chunks, detectQuickSettings(model.scenario()).chunks);
    }

    // ---- span table -------------------------------------------------------------------------------------------

    void spanTable()
    {
        auto simulated = RunController::simulate(loadLesson(QStringLiteral("08")));
        QVERIFY(simulated);
        auto trace = std::make_shared<const Trace>(std::move(simulated).value());
        SpanTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        SpanTableProxy proxy;
        QAbstractItemModelTester proxyTester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        proxy.setSourceModel(&model);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        model.setTrace(trace);
        QCOMPARE(reset.count(), 1);
        QCOMPARE(model.rowCount(), int(trace->spanCount()));
        QCOMPARE(model.index(3, SpanTableModel::NameColumn).data().toString(), qs(trace->spanName(3)));
        QCOMPARE(model.index(3, 0).data(SpanTableModel::SpanIndexRole).toInt(), 3);

        // Sorted by duration (numbers, not text), longest first.
        proxy.sort(SpanTableModel::DurationColumn, Qt::DescendingOrder);
        int64_t last = std::numeric_limits<int64_t>::max();
        for (int r = 0; r < proxy.rowCount(); ++r) {
            const int span = proxy.spanAtRow(r);
            QCOMPARE(proxy.rowOfSpan(span), r);
            QVERIFY(trace->duration(uint32_t(span)) <= last);
            last = trace->duration(uint32_t(span));
        }
        // Filtered to the copies host to device.
        proxy.setFilterText(QStringLiteral("h2d"));
        QCOMPARE(proxy.rowCount(), 8);
        for (int r = 0; r < proxy.rowCount(); ++r)
            QVERIFY(proxy.index(r, SpanTableModel::NameColumn).data().toString().contains(QStringLiteral("h2d")));
        const int kernel = [&] {
            for (uint32_t i = 0; i < trace->spanCount(); ++i)
                if (trace->spans.kind[i] == SpanKind::Kernel)
                    return int(i);
            return -1;
        }();
        QCOMPARE(proxy.rowOfSpan(kernel), -1);
        proxy.setFilterText({});
        QCOMPARE(proxy.rowCount(), model.rowCount());
        model.setTrace(nullptr);
        QCOMPARE(proxy.rowCount(), 0);
    }

    // Kernel signatures are shown by their short name; the full demangled one is the tooltip and is searched too.
    void spanTableShowsShortNames()
    {
        const auto trace = kernelNamesTrace();
        SpanTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        SpanTableProxy proxy;
        proxy.setSourceModel(&model);
        model.setTrace(trace);
        const int kernel = findSpanNamed(*trace, kPyTorchKernel);
        const int mangled = findSpanNamed(*trace, kMangledKernel);
        const int launch = findSpanNamed(*trace, "cudaLaunchKernel");
        QVERIFY(kernel >= 0 && mangled >= 0 && launch >= 0);
        const QModelIndex name = model.index(kernel, SpanTableModel::NameColumn);
        QCOMPARE(name.data().toString(), kPyTorchKernelShort);
        QCOMPARE(name.data(Qt::ToolTipRole).toString(), QString::fromUtf8(kPyTorchKernel));
        QCOMPARE(name.data(SpanTableModel::SortRole).toString(), kPyTorchKernelShort);
        const QModelIndex symbol = model.index(mangled, SpanTableModel::NameColumn);
        QCOMPARE(symbol.data().toString(), QStringLiteral("vectorAdd"));
        QCOMPARE(symbol.data(Qt::ToolTipRole).toString(),
                 QStringLiteral("vectorAdd(float const*, float const*, float*, int)"));
        // Names that are already short stay as they are, in the tooltip too.
        QCOMPARE(model.index(launch, SpanTableModel::NameColumn).data().toString(), QStringLiteral("cudaLaunchKernel"));
        QCOMPARE(model.index(launch, SpanTableModel::NameColumn).data(Qt::ToolTipRole).toString(),
                 QStringLiteral("cudaLaunchKernel"));

        // The filter finds a kernel by what only its full name says, by its short name, and by the demangled
        // parameters of a mangled symbol.
        proxy.setFilterText(QStringLiteral("MulFunctor"));
        QCOMPARE(proxy.rowCount(), 2);
        for (int r = 0; r < proxy.rowCount(); ++r)
            QCOMPARE(trace->spanName(uint32_t(proxy.spanAtRow(r))), std::string_view(kPyTorchKernel));
        proxy.setFilterText(QStringLiteral("vectorized_elementwise"));
        QCOMPARE(proxy.rowCount(), 2);
        proxy.setFilterText(QStringLiteral("float const*"));
        QCOMPARE(proxy.rowCount(), 1);
        QCOMPARE(proxy.spanAtRow(0), mangled);
        proxy.setFilterText(QStringLiteral("vectorAdd"));
        QCOMPARE(proxy.rowCount(), 1);
        proxy.setFilterText(QStringLiteral("launchkernel"));
        QCOMPARE(proxy.rowCount(), 3);
        proxy.setFilterText(QStringLiteral("no such kernel"));
        QCOMPARE(proxy.rowCount(), 0);
        proxy.setFilterText({});
        QCOMPARE(proxy.rowCount(), int(trace->spanCount()));
        // Sorted by the name shown.
        proxy.sort(SpanTableModel::NameColumn, Qt::AscendingOrder);
        QStringList shown;
        for (int r = 0; r < proxy.rowCount(); ++r)
            shown << proxy.index(r, SpanTableModel::NameColumn).data().toString();
        QStringList sorted = shown;
        std::sort(sorted.begin(), sorted.end());
        QCOMPARE(shown, sorted);
    }

    void inspectorTitlesTheShortNameAndShowsTheFullOne()
    {
        const auto trace = kernelNamesTrace();
        const int kernel = findSpanNamed(*trace, kPyTorchKernel);
        const QString html = spanInspectorHtml(*trace, kernel);
        // The short name is the title; the full demangled one follows, once, under "Full name".
        QVERIFY2(
            html.contains(QStringLiteral("</span> ") + kPyTorchKernelShort.toHtmlEscaped() + QStringLiteral("</h3>")),
            qPrintable(html));
        QVERIFY(html.contains(QStringLiteral("Full name")));
        QCOMPARE(html.count(QString::fromUtf8(kPyTorchKernel).toHtmlEscaped()), 1);
        // The text of the inspector, as the reader sees (and selects) it.
        QTextDocument doc;
        doc.setHtml(html);
        const QString text = doc.toPlainText();
        QVERIFY(text.startsWith(QStringLiteral("■ ") + kPyTorchKernelShort));
        QVERIFY(text.contains(QString::fromUtf8(kPyTorchKernel)));
        // What launched it is listed by its name; the launch lists the kernel by its short name only.
        QVERIFY(text.contains(QStringLiteral("launched by ■ cudaLaunchKernel")));
        int launch = -1;
        for (const Flow& f : trace->flows)
            if (int(f.to) == kernel)
                launch = int(f.from);
        QVERIFY(launch >= 0);
        const QString launchHtml = spanInspectorHtml(*trace, launch);
        QVERIFY(launchHtml.contains(kPyTorchKernelShort.toHtmlEscaped()));
        QVERIFY(!launchHtml.contains(QStringLiteral("MulFunctor")));
        QVERIFY(!launchHtml.contains(QStringLiteral("Full name"))); // "cudaLaunchKernel" says it all

        // A mangled symbol: demangled in full, and the symbol as recorded.
        const QString symbolHtml = spanInspectorHtml(*trace, findSpanNamed(*trace, kMangledKernel));
        QVERIFY(symbolHtml.contains(QStringLiteral("vectorAdd</h3>")));
        QVERIFY(symbolHtml.contains(QStringLiteral("vectorAdd(float const*, float const*, float*, int)")));
        QVERIFY(symbolHtml.contains(QString::fromUtf8(kMangledKernel)));
    }

    void analysisNamesSpansShortly()
    {
        const auto analyzed = makeAnalyzedTrace(Trace(*kernelNamesTrace()));
        QVERIFY(!analyzed->report.criticalPath.segments.empty());
        const QString html = analysisHtml(analyzed.get(), {}, {});
        QVERIFY(html.contains(QStringLiteral("Critical path")));
        QVERIFY(html.contains(kPyTorchKernelShort.toHtmlEscaped()));
        QVERIFY2(!html.contains(QStringLiteral("MulFunctor")), qPrintable(html));
        QVERIFY(!html.contains(QString::fromUtf8(kMangledKernel)));
    }

    // ---- panels' content --------------------------------------------------------------------------------------

    void analysisSaysPassFailWhyAndDiagnoses()
    {
        auto pinned = RunController::simulate(loadLesson(QStringLiteral("09")));
        QVERIFY(pinned);
        const auto good = makeAnalyzedTrace(std::move(pinned).value());
        QVERIFY(!good->report.checks.empty());
        const QString html = analysisHtml(good.get(), {}, {});
        QVERIFY(html.contains(QStringLiteral("PASS")));
        QVERIFY(!html.contains(QStringLiteral("FAIL")));
        QVERIFY(html.contains(qs(good->report.checks.front().expectation.why).toHtmlEscaped()));
        QVERIFY(html.contains(QStringLiteral("Makespan")));

        // The contrasting variant fails its key check, and a diagnostic says why, with a link to the spans.
        auto pageable = RunController::simulate(loadLesson(QStringLiteral("09"), QStringLiteral("pageable")), {},
                                                QStringLiteral("pageable"));
        QVERIFY(pageable);
        const auto bad = makeAnalyzedTrace(std::move(pageable).value());
        const QString badHtml = analysisHtml(bad.get(), QStringLiteral("Lesson"), QStringLiteral("Text"),
                                             QStringLiteral("Variant “pageable”"));
        QVERIFY(badHtml.contains(QStringLiteral("FAIL")));
        QVERIFY(badHtml.contains(QStringLiteral("Variant “pageable”")));
        QVERIFY2(!bad->report.diagnostics.empty(), "pageable copies are diagnosed");
        // The variant's effect comes first, named by the analysis, with a link to its spans.
        QCOMPARE(bad->report.effect, QStringLiteral("pageable-memcpy"));
        QVERIFY(badHtml.contains(QStringLiteral("What this run shows")));
        QVERIFY(badHtml.contains(QStringLiteral("Copies from pageable host memory block the host")));
        QVERIFY(badHtml.contains(qs(bad->report.diagnostics.front().message).toHtmlEscaped()));
        QVERIFY(badHtml.contains(QStringLiteral("href='span:")));
        // The lesson's own run shows copies overlapping kernels; its other findings are listed as diagnostics.
        QCOMPARE(good->report.effect, QStringLiteral("copy-compute-overlap"));
        QVERIFY(html.contains(QStringLiteral("What this run shows")));
        QVERIFY(html.contains(QStringLiteral("Copies overlapped kernels")));
        QVERIFY(html.contains(QStringLiteral("Diagnostics")));
        QVERIFY(!html.contains(QStringLiteral("does not show in this run")));
        // A trace whose effect the analysis does not find says so.
        auto serial = RunController::simulate(loadLesson(QStringLiteral("08"), QStringLiteral("one-stream")), {},
                                              QStringLiteral("one-stream"));
        QVERIFY(serial);
        auto wrong = makeAnalyzedTrace(std::move(serial).value());
        const_cast<AnalyzedTrace&>(*wrong).report.effect = QStringLiteral("copy-compute-overlap");
        QVERIFY(analysisHtml(wrong.get(), {}, {}).contains(QStringLiteral("does not show in this run")));
    }

    void analysisListsTheCriticalPath()
    {
        // One stream: the path runs through every kernel, each released by the one before it (stream order).
        auto serial = RunController::simulate(loadLesson(QStringLiteral("02")));
        QVERIFY(serial);
        const auto at = makeAnalyzedTrace(std::move(serial).value());
        const CriticalPath& path = at->report.criticalPath;
        QVERIFY(path.segments.size() >= 20);
        const QString html = analysisHtml(at.get(), {}, {});
        QVERIFY(html.contains(QStringLiteral("Critical path")));
        QVERIFY(html.contains(QStringLiteral("stream order")));
        QVERIFY(html.contains(formatNs(double(path.lengthNs))));
        // Each listed part links to its span.
        const CriticalPathSegment& last = path.segments.back();
        QVERIFY(html.contains(QStringLiteral("href='span:%1'").arg(last.span)));
        QVERIFY(html.contains(formatNs(double(last.contributionNs))));
    }

    // A ready kernel held by the SMs another kernel filled: the panel names the holder and the wait, not idle time.
    void analysisNamesWhatHeldTheCriticalPath()
    {
        auto filled = RunController::simulate(loadLesson(QStringLiteral("12"), QStringLiteral("gpu-filling")), {},
                                              QStringLiteral("gpu-filling"));
        QVERIFY(filled);
        const auto at = makeAnalyzedTrace(std::move(filled).value());
        const CriticalPath& path = at->report.criticalPath;
        QVERIFY(path.resourceWaitNs >= 400'000);
        const QString html = analysisHtml(at.get(), {}, {});
        const auto small = std::find_if(path.segments.begin(), path.segments.end(),
                                        [](const CriticalPathSegment& seg) { return seg.name == "small"; });
        QVERIFY(small != path.segments.end());
        QVERIFY2(html.contains(QStringLiteral("waited ") + formatNs(double(small->waitNs))
                               + QStringLiteral(" for SMs held by ")),
                 qPrintable(html));
        QVERIFY(html.contains(QStringLiteral("Its operations waited ") + formatNs(double(path.resourceWaitNs))));
        QVERIFY(!html.contains(QStringLiteral("500.0 µs idle")));
    }

    void inspectorListsDependencies()
    {
        auto simulated = RunController::simulate(loadLesson(QStringLiteral("03")));
        QVERIFY(simulated);
        const Trace& t = *simulated;
        // A span that waited on an event: its inspector names the work it waited for.
        int waiter = -1;
        for (const Flow& f : t.flows)
            if (f.kind == FlowKind::Event)
                waiter = int(f.to);
        QVERIFY(waiter >= 0);
        const QString html = spanInspectorHtml(t, waiter);
        QVERIFY(html.contains(qs(t.spanName(uint32_t(waiter))).toHtmlEscaped()));
        QVERIFY(html.contains(QStringLiteral("waited for event after")));
        QVERIFY(html.contains(QStringLiteral("href='span:")));
        QVERIFY(html.contains(QStringLiteral("href='op:")));
        QVERIFY(spanInspectorHtml(t, -1).contains(QStringLiteral("Click a bar")));
    }

    // ---- lessons ----------------------------------------------------------------------------------------------

    void lessonList()
    {
        LessonListModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), int(listPresets().size()));
        QCOMPARE(model.rowOf(QStringLiteral("01")), 0);
        QCOMPARE(model.rowOf(QStringLiteral("1")), 0);
        QCOMPARE(model.rowOf(QStringLiteral("two-streams")), 0);
        QCOMPARE(model.rowOf(QStringLiteral("01-two-streams")), 0);
        QCOMPARE(model.rowOf(QStringLiteral("nope")), -1);
        const QModelIndex first = model.index(0);
        QVERIFY(!first.data(LessonListModel::DescriptionRole).toString().isEmpty());
        QVERIFY(first.data(LessonListModel::VariantIdsRole).toStringList().contains(QStringLiteral("one-stream")));

        LessonGallery gallery;
        QSignalSpy open(&gallery, &LessonGallery::openRequested);
        gallery.setCurrentLesson(QStringLiteral("08"), QStringLiteral("one-stream"));
        QCOMPARE(gallery.selectedLesson(), QStringLiteral("08-copy-compute-pipeline"));
        QCOMPARE(gallery.selectedVariant(), QStringLiteral("one-stream"));
    }

    // ---- formatting -------------------------------------------------------------------------------------------

    void parseBytes_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<qlonglong>("bytes");
        QTest::newRow("plain") << "4096" << 4096LL;
        QTest::newRow("MiB") << "16 MiB" << 16LL * 1024 * 1024;
        QTest::newRow("GB") << "1.5 GB" << 1536LL * 1024 * 1024;
        QTest::newRow("k") << "64k" << 65536LL;
        QTest::newRow("B") << "12 B" << 12LL;
        QTest::newRow("junk") << "lots" << -1LL;
        QTest::newRow("negative") << "-5" << -1LL;
    }

    void parseBytes()
    {
        QFETCH(QString, text);
        QFETCH(qlonglong, bytes);
        QCOMPARE(qlonglong(streamscope::parseBytes(text)), bytes);
        if (bytes > 0)
            QCOMPARE(qlonglong(streamscope::parseBytes(formatBytes(bytes))), bytes);
    }
};

QTEST_MAIN(TestModels)
#include "tst_models.moc"
