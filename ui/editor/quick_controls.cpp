#include "quick_controls.h"

#include "scenario_model.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>

namespace streamscope {

QuickControls::QuickControls(QWidget* parent)
    : QWidget(parent), m_threads(new QSpinBox), m_streams(new QSpinBox), m_chunks(new QSpinBox),
      m_memory(new QComboBox), m_kernelScale(new QDoubleSpinBox), m_streamMode(new QComboBox),
      m_reset(new QPushButton(QStringLiteral("Reset")))
{
    for (QSpinBox* box : {m_threads, m_streams, m_chunks}) {
        box->setKeyboardTracking(false); // one edit per typed number, not per digit
        box->setRange(1, 64);
    }
    m_threads->setToolTip(QStringLiteral("Host threads issuing work. New threads are clones of the last one, with "
                                         "their own streams and events (a worker pool changes its worker count)."));
    m_streams->setToolTip(QStringLiteral("Streams each host thread spreads its chunks over, round-robin."));
    m_chunks->setToolTip(QStringLiteral("Chunks per host thread: runs of operations in one stream (e.g. H2D → kernel "
                                        "→ D2H of a pipeline). More chunks repeat the pattern."));
    m_memory->addItem(QStringLiteral("pinned (cudaMallocHost)"), int(MemoryMode::Pinned));
    m_memory->addItem(QStringLiteral("pageable (malloc)"), int(MemoryMode::Pageable));
    m_kernelScale->setKeyboardTracking(false);
    m_kernelScale->setRange(0.05, 20.0);
    m_kernelScale->setDecimals(2);
    m_kernelScale->setSingleStep(0.25);
    m_kernelScale->setStepType(QAbstractSpinBox::AdaptiveDecimalStepType);
    m_kernelScale->setPrefix(QStringLiteral("× "));
    m_kernelScale->setValue(1.0);
    m_kernelScale->setToolTip(QStringLiteral("Kernel work relative to the scenario as opened: spin kernels' "
                                             "durations, and problem sizes so that the work scales alike."));
    m_streamMode->addItem(QStringLiteral("legacy: blocking streams"), int(DefaultStreamMode::Legacy));
    m_streamMode->addItem(QStringLiteral("per-thread default stream"), int(DefaultStreamMode::PerThread));
    m_streamMode->addItem(QStringLiteral("non-blocking streams"), int(DefaultStreamMode::NonBlocking));
    m_streamMode->setToolTip(QStringLiteral(
        "legacy: streams from cudaStreamCreate synchronize with the legacy default (NULL) stream;\n"
        "per-thread: --default-stream per-thread, the default stream is an ordinary stream per host thread;\n"
        "non-blocking: streams created with cudaStreamNonBlocking do not synchronize with the NULL stream."));
    m_reset->setToolTip(QStringLiteral("Back to the knobs of the scenario as opened or last edited by hand"));

    auto* form = new QFormLayout(this);
    form->setContentsMargins(0, 0, 0, 0);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    auto* threadsRow = new QHBoxLayout;
    threadsRow->addWidget(m_threads, 1);
    threadsRow->addWidget(m_reset);
    form->addRow(QStringLiteral("Host threads"), threadsRow);
    form->addRow(QStringLiteral("Streams per thread"), m_streams);
    form->addRow(QStringLiteral("Chunks per thread"), m_chunks);
    form->addRow(QStringLiteral("Host memory"), m_memory);
    form->addRow(QStringLiteral("Kernel work"), m_kernelScale);
    form->addRow(QStringLiteral("Default stream"), m_streamMode);

    connect(m_threads, &QSpinBox::valueChanged, this, [this](int v) {
        QuickSettings q = m_shown;
        q.threads = v;
        apply(q, QStringLiteral("host threads"));
    });
    connect(m_streams, &QSpinBox::valueChanged, this, [this](int v) {
        QuickSettings q = m_shown;
        q.streamsPerThread = v;
        apply(q, QStringLiteral("streams per thread"));
    });
    connect(m_chunks, &QSpinBox::valueChanged, this, [this](int v) {
        QuickSettings q = m_shown;
        q.chunks = v;
        apply(q, QStringLiteral("chunks per thread"));
    });
    connect(m_memory, &QComboBox::activated, this, [this](int) {
        QuickSettings q = m_shown;
        q.memory = MemoryMode(m_memory->currentData().toInt());
        apply(q, QStringLiteral("host memory"));
    });
    connect(m_kernelScale, &QDoubleSpinBox::valueChanged, this, [this](double v) {
        QuickSettings q = m_shown;
        q.kernelScale = v;
        apply(q, QStringLiteral("kernel work"));
    });
    connect(m_streamMode, &QComboBox::activated, this, [this](int) {
        QuickSettings q = m_shown;
        q.streamMode = DefaultStreamMode(m_streamMode->currentData().toInt());
        apply(q, QStringLiteral("default stream"));
    });
    connect(m_reset, &QPushButton::clicked, this, [this] {
        const QuickState state = currentState();
        if (state.settings != state.baseSettings)
            apply(state.baseSettings, QStringLiteral("all knobs"));
    });
    refresh();
}

void QuickControls::setModel(ScenarioModel* model)
{
    if (m_model)
        m_model->disconnect(this);
    m_model = model;
    if (m_model)
        connect(m_model, &ScenarioModel::scenarioChanged, this, &QuickControls::refresh);
    refresh();
}

QuickState QuickControls::currentState() const
{
    if (m_model && m_model->quickState())
        return *m_model->quickState();
    // After a hand edit (or opening a file) the scenario as it is becomes the base.
    QuickState s;
    if (m_model)
        s.base = m_model->scenario();
    s.baseSettings = detectQuickSettings(s.base);
    s.settings = s.baseSettings;
    return s;
}

void QuickControls::apply(const QuickSettings& wanted, const QString& what)
{
    if (!m_model || wanted == m_shown)
        return;
    QuickState state = currentState();
    auto next = std::make_shared<QuickState>();
    next->base = std::move(state.base);
    next->baseSettings = state.baseSettings;
    next->settings = wanted;
    Scenario derived = applyQuickSettings(next->base, next->baseSettings, wanted);
    m_model->applyScenario(std::move(derived), QStringLiteral("Change %1").arg(what), std::move(next), what);
}

void QuickControls::refresh()
{
    const QuickState state = currentState();
    m_shown = state.settings;
    const bool haveModel = m_model != nullptr && !state.base.threads.empty();
    {
        const QSignalBlocker b1(m_threads), b2(m_streams), b3(m_chunks), b4(m_memory), b5(m_kernelScale),
            b6(m_streamMode);
        m_threads->setValue(std::max(1, m_shown.threads));
        m_threads->setEnabled(haveModel);
        m_streams->setEnabled(haveModel && m_shown.streamsPerThread > 0);
        m_streams->setSpecialValueText(QString());
        m_streams->setValue(std::max(1, m_shown.streamsPerThread));
        m_chunks->setEnabled(haveModel && m_shown.chunks > 0);
        m_chunks->setValue(std::max(1, m_shown.chunks));

        // "mixed" shows only while it is true; it cannot be chosen.
        auto setMixed = [](QComboBox* box, bool mixed, const QString& text) {
            const int i = box->findData(-1);
            if (mixed && i < 0)
                box->addItem(text, -1);
            else if (!mixed && i >= 0)
                box->removeItem(i);
        };
        setMixed(m_memory, m_shown.memory == MemoryMode::Mixed, QStringLiteral("mixed"));
        m_memory->setEnabled(haveModel && m_shown.memory != MemoryMode::None);
        m_memory->setCurrentIndex(m_shown.memory == MemoryMode::Mixed ? m_memory->findData(-1)
                                      : m_shown.memory == MemoryMode::Pageable
                                      ? m_memory->findData(int(MemoryMode::Pageable))
                                      : m_memory->findData(int(MemoryMode::Pinned)));
        m_memory->setToolTip(m_shown.memory == MemoryMode::None
                                 ? QStringLiteral("The scenario has no copies between host and device.")
                                 : QStringLiteral("Host memory of the H2D/D2H copies. Copies from pageable memory are "
                                                  "staged and synchronous: they do not overlap with kernels."));
        m_kernelScale->setEnabled(haveModel);
        m_kernelScale->setValue(m_shown.kernelScale);
        setMixed(m_streamMode, m_shown.streamMode == DefaultStreamMode::Mixed, QStringLiteral("mixed"));
        m_streamMode->setEnabled(haveModel);
        m_streamMode->setCurrentIndex(
            m_streamMode->findData(m_shown.streamMode == DefaultStreamMode::Mixed ? -1 : int(m_shown.streamMode)));
        m_reset->setEnabled(haveModel && state.settings != state.baseSettings);
    }
}

} // namespace streamscope
