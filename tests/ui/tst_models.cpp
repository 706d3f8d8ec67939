// The scenario editor's models: ScenarioModel's tree, its edits through the undo stack, validation mapped to items
// and fields, the property editor's edits, and the quick controls' knobs.
#include "tst_models.h"

void TestModels::initTestCase()
{
    QVERIFY2(!listPresets().empty(), "no lessons found: set STREAMSCOPE_RESOURCES");
}

// ---- ScenarioModel: structure -----------------------------------------------------------------------------

void TestModels::treeShape()
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

void TestModels::indexRoundTrip_data()
{
    QTest::addColumn<QString>("lesson");
    for (const PresetInfo& p : listPresets())
        QTest::newRow(p.id.c_str()) << QString::fromStdString(p.id);
}

// Every index names an item whose index is the same again; parent() agrees with the item.
void TestModels::indexRoundTrip()
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

void TestModels::itemForPath_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<int>("type");
    QTest::addColumn<int>("a");
    QTest::addColumn<int>("b");
    QTest::addColumn<int>("c");
    QTest::addColumn<QString>("field");
    QTest::newRow("op field") << "/threads/1/ops/3/stream" << int(ScenarioItemType::Op) << 1 << 3 << -1 << "stream";
    QTest::newRow("grid element") << "/threads/0/ops/2/grid/0" << int(ScenarioItemType::Op) << 0 << 2 << -1 << "grid/0";
    QTest::newRow("graph node") << "/threads/0/ops/2/ops/1/kernel" << int(ScenarioItemType::GraphNode) << 0 << 2 << 1
                                << "kernel";
    QTest::newRow("thread") << "/threads/2/repeat" << int(ScenarioItemType::Thread) << 2 << -1 << -1 << "repeat";
    QTest::newRow("stream") << "/streams/4/kind" << int(ScenarioItemType::Stream) << 4 << -1 << -1 << "kind";
    QTest::newRow("device") << "/devices/1/index" << int(ScenarioItemType::Device) << 1 << -1 << -1 << "index";
    QTest::newRow("run") << "/run/warmup" << int(ScenarioItemType::Settings) << -1 << -1 << -1 << "run/warmup";
    QTest::newRow("threads") << "/threads" << int(ScenarioItemType::ThreadsGroup) << -1 << -1 << -1 << "";
    QTest::newRow("root") << "" << int(ScenarioItemType::Settings) << -1 << -1 << -1 << "";
}

void TestModels::itemForPath()
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

void TestModels::editingActionsUndoRedo_data()
{
    QTest::addColumn<QString>("lesson");
    for (const char* id : {"01", "03", "05", "07", "08", "14"})
        QTest::newRow(id) << QString::fromLatin1(id);
}

// A run of every kind of edit with the tester watching; undoing all restores the scenario exactly, redoing all
// gives the edited one again.
void TestModels::editingActionsUndoRedo()
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

void TestModels::fieldEditsMerge()
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

void TestModels::renamingAStreamRenamesItsUses()
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

void TestModels::movingAStreamToAnotherDevice()
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

// A new op goes on the stream of the op above it (not the thread's last one); a new host thread is bound to the
// first GPU and its first op is on a stream of that GPU.
void TestModels::newOpsTakeTheStreamAboveAndTheirThreadsDevice()
{
    ScenarioModel model;
    model.setScenario(loadLesson(QStringLiteral("08")));
    const std::string above = model.op(ScenarioItemRef::op(0, 3))->stream;
    const auto& ops = model.scenario().threads[0].ops;
    std::string last;
    for (const Op& o : ops)
        if (!o.stream.empty())
            last = o.stream;
    QVERIFY2(above != last, "the op above and the thread's last op use different streams");
    const ScenarioItemRef added = model.addOp(ScenarioItemRef::op(0, 3), OpKind::Kernel);
    QCOMPARE(added, ScenarioItemRef::op(0, 4));
    QCOMPARE(model.op(added)->stream, above);
    const ScenarioItemRef appended = model.addOp(ScenarioItemRef::thread(0), OpKind::Memset);
    QCOMPARE(model.op(appended)->stream, last);

    model.setScenario(loadLesson(QStringLiteral("07")));
    const ScenarioItemRef t = model.addThread();
    const ThreadSpec& th = *model.thread(t);
    QCOMPARE(th.device, model.scenario().devices.front().index);
    QVERIFY(!th.ops.empty());
    const StreamSpec* st = nullptr;
    for (const auto& candidate : model.scenario().streams)
        if (candidate.name == th.ops.front().stream)
            st = &candidate;
    QVERIFY(st);
    QCOMPARE(st->device, th.device);
}

// With several GPUs the Stream box names each stream's GPU; with one it shows the bare names.
void TestModels::streamChoicesNameTheirGpu()
{
    ScenarioModel model;
    model.setScenario(loadLesson(QStringLiteral("07")));
    PropertyEditor editor;
    editor.setModel(&model);
    editor.setCurrentIndex(model.indexOf(ScenarioItemRef::op(0, 0)));
    auto* box = qobject_cast<QComboBox*>(editor.fieldEditor(QStringLiteral("stream")));
    QVERIFY(box);
    QVERIFY(box->count() >= 2);
    for (int i = 0; i < box->count(); ++i) {
        const StreamSpec& st = model.scenario().streams[size_t(i)];
        QCOMPARE(box->itemText(i), QStringLiteral("%1 (GPU %2)").arg(QString::fromStdString(st.name)).arg(st.device));
        QCOMPARE(box->itemData(i).toString(), QString::fromStdString(st.name));
    }
    QCOMPARE(box->currentData().toString(), QString::fromStdString(model.op(ScenarioItemRef::op(0, 0))->stream));

    model.setScenario(loadLesson(QStringLiteral("01")));
    editor.setCurrentIndex(model.indexOf(ScenarioItemRef::op(0, 0)));
    box = qobject_cast<QComboBox*>(editor.fieldEditor(QStringLiteral("stream")));
    QVERIFY(box);
    QCOMPARE(box->itemText(0), QString::fromStdString(model.scenario().streams[0].name));
}

void TestModels::graphNodes()
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

void TestModels::validationErrorOnItem()
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

void TestModels::validationWarningOnField()
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

void TestModels::propertyEditorCommitsUndoableEdits()
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

// The form's header names the item as it is: after a rename under the open form, and when a delete hands the form
// to the next item of the same kind (the form itself is kept: same kind of item, same fields).
void TestModels::propertyHeaderFollowsRenamesAndDeletes()
{
    ScenarioModel model;
    model.setScenario(loadLesson(QStringLiteral("08")));
    PropertyEditor editor;
    editor.setModel(&model);
    editor.setCurrentIndex(model.indexOf(ScenarioItemRef::stream(0)));
    QCOMPARE(editor.header(), QStringLiteral("Stream s0"));
    StreamSpec s0 = *model.stream(ScenarioItemRef::stream(0));
    s0.name = "copy-in";
    model.setStream(0, s0, QStringLiteral("name"));
    QCOMPARE(editor.header(), QStringLiteral("Stream copy-in"));

    editor.setCurrentIndex(model.indexOf(ScenarioItemRef::thread(0)));
    ThreadSpec t0 = *model.thread(ScenarioItemRef::thread(0));
    t0.name = "issuer";
    model.setThread(0, t0, QStringLiteral("name"));
    QCOMPARE(editor.header(), QStringLiteral("Host thread issuer"));

    editor.setCurrentIndex(model.indexOf(ScenarioItemRef::op(0, 0)));
    const QString first = editor.header();
    QVERIFY(first.startsWith(QStringLiteral("Operation ")));
    const std::string secondName = model.op(ScenarioItemRef::op(0, 1))->name;
    QVERIFY(!secondName.empty());
    QVERIFY(model.remove(ScenarioItemRef::op(0, 0)));
    editor.setCurrentIndex(model.indexOf(ScenarioItemRef::op(0, 0))); // the view selects the next one
    QVERIFY2(editor.header().contains(QString::fromStdString(secondName)), qPrintable(editor.header()));
    QVERIFY(editor.header() != first);
}

// ---- quick controls -----------------------------------------------------------------------------------------

void TestModels::quickSettingsDetect()
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

void TestModels::quickSettingsApply()
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

void TestModels::quickSettingsStayValid_data()
{
    QTest::addColumn<QString>("lesson");
    for (const PresetInfo& p : listPresets())
        QTest::newRow(p.id.c_str()) << QString::fromStdString(p.id);
}

// Every knob on every lesson gives a scenario the core accepts and the simulator runs.
void TestModels::quickSettingsStayValid()
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
        QVERIFY2(valid, qPrintable(QStringLiteral("%1: %2").arg(QLatin1String(name), qs(valid.error().toString()))));
        auto trace = RunController::simulate(valid->scenario);
        QVERIFY2(trace, qPrintable(QLatin1String(name)));
        QVERIFY(trace->spanCount() > 0);
    }
}

void TestModels::quickControlsAreUndoable()
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

QTEST_MAIN(TestModels)
