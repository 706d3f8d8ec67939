// Every lesson passes its checks on the simulator, and each lesson's key check fails on its contrasting variant.
#include "expect.h"
#include "resources.h"
#include "runner.h"
#include "scenario_json.h"
#include "simulator.h"

#include <QTest>

#include <set>

using namespace streamscope;

namespace {

struct Outcome {
    bool ran = false;
    std::string error;
    std::vector<CheckResult> checks;
};

Outcome runLesson(const std::string& id, const std::string& variant)
{
    Outcome o;
    auto preset = findPreset(id);
    if (!preset) {
        o.error = preset.error().toString();
        return o;
    }
    auto loaded = loadScenarioFile(preset->path, variant);
    if (!loaded) {
        o.error = loaded.error().toString();
        return o;
    }
    SimulatorBackend sim;
    auto out = runScenario(loaded->scenario, sim);
    if (!out.status) {
        o.error = out.status.error().toString();
        return o;
    }
    o.ran = true;
    o.checks = evaluateExpectations(out.trace, loaded->scenario.expect);
    return o;
}

std::string describe(const Outcome& o)
{
    std::string s = o.error;
    for (const auto& c : o.checks)
        s += (c.passed ? "\n  PASS " : "\n  FAIL ") + c.description + (c.error.empty() ? "" : " (" + c.error + ")");
    return s;
}

// Variants that show the contrast: the lesson's key check must fail on them. Other variants must pass.
const std::set<std::pair<std::string, std::string>>& contrasts()
{
    static const std::set<std::pair<std::string, std::string>> c = {
        {"01-two-streams", "one-stream"},
        {"02-one-stream", "two-streams"},
        {"03-record-wait", "no-wait"},
        {"04-default-stream", "blocking"},
        {"05-host-threads", "shared-stream"},
        {"06-worker-pool", "legacy-stream"},
        {"07-multi-gpu", "one-device"},
        {"08-copy-compute-pipeline", "one-stream"},
        {"09-pinned-vs-pageable", "pageable"},
        {"10-many-small-kernels", "one-stream"},
        {"11-hardware-queues", "connections-8"},
        {"11-hardware-queues", "connections-1"},
        {"12-gpu-filling-kernel", "gpu-filling"},
        {"13-stream-priorities", "same-priority"},
        {"14-cuda-graph", "stream-launches"},
        {"15-host-functions", "kernels-instead"},
        {"16-sync-in-loop", "sync-every-launch"},
        {"17-implicit-sync", "malloc-in-loop"},
        {"18-data-parallel", "after-backward"},
        {"19-straggler", "balanced"},
    };
    return c;
}

} // namespace

class TestLessons : public QObject {
    Q_OBJECT

private slots:
    void presetsAreThere()
    {
        const auto presets = listPresets();
        QVERIFY2(presets.size() >= 15, "DESIGN §5 asks for at least 15 lessons");
        for (const auto& p : presets) {
            QVERIFY2(!p.title.empty(), p.id.c_str());
            auto loaded = loadScenarioFile(p.path);
            QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().toString().c_str());
            QVERIFY2(!loaded->scenario.description.empty(), p.id.c_str());
            QVERIFY2(!loaded->scenario.expect.empty(), p.id.c_str());
            int keys = 0;
            for (const auto& e : loaded->scenario.expect) {
                keys += e.key;
                QVERIFY2(!e.why.empty(), (p.id + ": " + e.id).c_str());
            }
            QVERIFY2(keys == 1, (p.id + ": exactly one key check").c_str());
            // Lessons have no warnings except where a variant teaches one.
            QVERIFY2(loaded->warnings.empty(),
                     (p.id + ": " + (loaded->warnings.empty() ? "" : loaded->warnings[0].toString())).c_str());
        }
        for (const auto& [lesson, variant] : contrasts()) {
            auto p = findPreset(lesson);
            QVERIFY2(p.ok(), lesson.c_str());
            QVERIFY2(std::find(p->variants.begin(), p->variants.end(), variant) != p->variants.end(),
                     (lesson + " has no variant " + variant).c_str());
        }
    }

    void roundTrip_data()
    {
        QTest::addColumn<QString>("id");
        for (const auto& p : listPresets())
            QTest::newRow(p.id.c_str()) << QString::fromStdString(p.id);
    }
    void roundTrip()
    {
        QFETCH(QString, id);
        auto p = findPreset(id.toStdString());
        QVERIFY(p.ok());
        auto a = loadScenarioFile(p->path);
        QVERIFY(a.ok());
        const std::string json = scenarioToJson(a->scenario);
        auto b = parseScenario(json, "round-trip");
        QVERIFY2(b.ok(), b.ok() ? "" : b.error().toString().c_str());
        QCOMPARE(QString::fromStdString(scenarioToJson(b->scenario)), QString::fromStdString(json));
    }

    void lessonChecks_data()
    {
        QTest::addColumn<QString>("id");
        QTest::addColumn<QString>("variant");
        QTest::addColumn<bool>("contrast");
        for (const auto& p : listPresets()) {
            QTest::newRow(p.id.c_str()) << QString::fromStdString(p.id) << QString() << false;
            for (const auto& v : p.variants) {
                const bool c = contrasts().count({p.id, v}) > 0;
                QTest::newRow((p.id + "/" + v).c_str())
                    << QString::fromStdString(p.id) << QString::fromStdString(v) << c;
            }
        }
    }
    void lessonChecks()
    {
        QFETCH(QString, id);
        QFETCH(QString, variant);
        QFETCH(bool, contrast);
        const auto o = runLesson(id.toStdString(), variant.toStdString());
        QVERIFY2(o.ran, o.error.c_str());
        QVERIFY(!o.checks.empty());
        for (const auto& c : o.checks) {
            if (contrast && c.expectation.key) {
                QVERIFY2(!c.passed, ("the key check should fail on the contrasting variant:" + describe(o)).c_str());
            } else if (!contrast) {
                QVERIFY2(c.passed, describe(o).c_str());
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestLessons)
#include "tst_lessons.moc"
