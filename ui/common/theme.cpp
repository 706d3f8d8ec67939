// The light and dark themes' colours, the palettes of the Light and Dark choices, and applying a choice to the
// application. The contrast each text colour reaches on its background is checked by tests/ui/tst_theme.cpp.
#include "theme.h"

#include <QApplication>
#include <QEvent>
#include <QGuiApplication>
#include <QSettings>
#include <QStyle>
#include <QStyleFactory>
#include <QStyleHints>
#include <QWidget>

#include <algorithm>
#include <cmath>

namespace streamscope {

namespace theme_detail {

// Sees the application object's ApplicationPaletteChange (sent to it when its palette is set) and says so.
class PaletteWatcher : public QObject {
    Q_OBJECT
public:
    static PaletteWatcher* instance()
    {
        static PaletteWatcher* watcher = [] {
            auto* w = new PaletteWatcher(qApp);
            qApp->installEventFilter(w);
            return w;
        }();
        return watcher;
    }

Q_SIGNALS:
    void changed();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (watched == qApp && event->type() == QEvent::ApplicationPaletteChange)
            Q_EMIT changed();
        return false;
    }

private:
    using QObject::QObject;
};

} // namespace theme_detail

namespace {

const QString kThemeKey = QStringLiteral("view/theme");

QColor rgb(unsigned v, int alpha = 255)
{
    return QColor(int((v >> 16) & 0xFF), int((v >> 8) & 0xFF), int(v & 0xFF), alpha);
}

Theme makeLight()
{
    Theme t;
    t.isDark = false;
    t.plotBackground = rgb(0xFFFFFF);
    t.plotText = rgb(0x202020);
    t.plotTitle = rgb(0x101010);
    t.plotAxis = rgb(0x606060);
    t.plotSubTick = rgb(0x909090);
    t.plotGrid = rgb(0xE4E4E4);
    t.timelineGrid = QColor(0, 0, 0, 38);
    t.plotFaintText = rgb(0x909090);
    t.rowHeader = rgb(0xE3E7ED);
    t.rowHeaderRule = rgb(0xB0B8C4);
    t.rowAlternate = rgb(0xF4F5F7);
    t.rowHeaderText = rgb(0x1F2A3A);
    t.rowText = rgb(0x202020);
    t.rowRangesText = rgb(0x5A6470);
    t.scrollTrack = QColor(0, 0, 0, 18);
    t.scrollThumb = QColor(0, 0, 0, 90);
    t.hintBackground = QColor(255, 255, 255, 220);
    t.hintText = rgb(0x505050);
    t.measureBand = QColor(0, 114, 178, 36);
    t.measureLine = rgb(0x005A96);
    t.measureLabel = rgb(0x005A96);
    t.measureLabelText = rgb(0xFFFFFF);
    t.hoverOutline = QColor(0, 0, 0, 200);
    t.selectionOuter = rgb(0x000000);
    t.selectionInner = rgb(0xFFFFFF);
    t.arrowHalo = QColor(255, 255, 255, 230);
    t.criticalPath = rgb(0xF03C96);
    t.seriesBlue = rgb(0x0072B2);
    t.seriesOrange = rgb(0xD55E00);
    t.seriesGreen = rgb(0x009E73);
    t.seriesRed = rgb(0xCC0000);

    t.muted = rgb(0x555555);
    t.faint = rgb(0x6A6A6A);
    t.pass = rgb(0x17703A);
    t.fail = rgb(0xC62828);
    t.warning = rgb(0x8A5C00);
    t.info = rgb(0x1F5FA8);
    t.better = rgb(0x17703A);
    t.worse = rgb(0xB3261E);
    t.sectionBackground = rgb(0xEEEEEE);

    t.note = {rgb(0xFFF4D6), rgb(0xE0B44C), rgb(0x4A3600)};
    t.effect = {rgb(0xE8F3EA), rgb(0x9CCBA8), rgb(0x000000)};
    t.notice = {rgb(0xE8F1FB), rgb(0x9DBDE0), rgb(0x123A63)};
    t.error = {rgb(0xFDECEA), rgb(0xE57373), rgb(0x8E1C1C)};

    // Okabe & Ito (2008), "Color Universal Design": distinguishable with protanopia, deuteranopia and tritanopia.
    t.spanKinds = {
        rgb(0x0072B2), // kernel: blue
        rgb(0x009E73), // memcpy HtoD: bluish green (Nsight: HtoD green)
        rgb(0xD55E00), // memcpy DtoH: vermillion (Nsight: DtoH red)
        rgb(0xE69F00), // memcpy DtoD: orange
        rgb(0xCC79A7), // memcpy peer: reddish purple
        rgb(0xF0E442), // memset: yellow
        rgb(0x56B4E9), // host function: sky blue
        rgb(0xA6A6A6), // API call: grey, overhead, not work
        rgb(0x882255), // sync: wine, the host thread is blocked
        rgb(0xDDCC77), // host work: sand (Tol), CPU work
        rgb(0xD4DCE6), // range: pale slate, encloses work, is none itself
    };
    t.flowKinds = {
        rgb(0x505050), // launch
        rgb(0xB35806), // event
        rgb(0x882255), // sync
        rgb(0x6A3D9A), // implicit
        rgb(0x8A96A8), // op call: the ranges' slate, darker (an annotation, no dependency)
        rgb(0x117733), // collective: green (Tol), one call across the ranks of a job
    };
    return t;
}

Theme makeDark()
{
    Theme t;
    t.isDark = true;
    t.plotBackground = rgb(0x1E1F22);
    t.plotText = rgb(0xDCDCDC);
    t.plotTitle = rgb(0xF0F0F0);
    t.plotAxis = rgb(0x9A9A9A);
    t.plotSubTick = rgb(0x6A6A6A);
    t.plotGrid = rgb(0x3A3C40);
    t.timelineGrid = QColor(255, 255, 255, 40);
    t.plotFaintText = rgb(0x8A8A8A);
    t.rowHeader = rgb(0x2E3440);
    t.rowHeaderRule = rgb(0x4C5566);
    t.rowAlternate = rgb(0x26282C);
    t.rowHeaderText = rgb(0xE8EEF6);
    t.rowText = rgb(0xDADADA);
    t.rowRangesText = rgb(0xA4AEBC);
    t.scrollTrack = QColor(255, 255, 255, 24);
    t.scrollThumb = QColor(255, 255, 255, 100);
    t.hintBackground = QColor(0x1E, 0x1F, 0x22, 220);
    t.hintText = rgb(0xC8C8C8);
    t.measureBand = QColor(60, 150, 230, 50);
    t.measureLine = rgb(0x4AA3E8);
    t.measureLabel = rgb(0x1F5F96);
    t.measureLabelText = rgb(0xFFFFFF);
    t.hoverOutline = QColor(255, 255, 255, 210);
    t.selectionOuter = rgb(0xFFFFFF);
    t.selectionInner = rgb(0x000000);
    t.arrowHalo = QColor(0x1E, 0x1F, 0x22, 230);
    t.criticalPath = rgb(0xFF5AAE);
    t.seriesBlue = rgb(0x3B9AE1);
    t.seriesOrange = rgb(0xF07F2A);
    t.seriesGreen = rgb(0x2DC28F);
    t.seriesRed = rgb(0xFF6B6B);

    t.muted = rgb(0xB4B4B4);
    t.faint = rgb(0xA0A0A0);
    t.pass = rgb(0x5CC77A);
    t.fail = rgb(0xFF7B72);
    t.warning = rgb(0xE3B341);
    t.info = rgb(0x6CB6FF);
    t.better = rgb(0x5CC77A);
    t.worse = rgb(0xFF8A80);
    t.sectionBackground = rgb(0x3A3A3A);

    t.note = {rgb(0x4A3A10), rgb(0x9A7A22), rgb(0xFFE9B0)};
    t.effect = {rgb(0x1F3A27), rgb(0x3E7A50), rgb(0xE6E6E6)};
    t.notice = {rgb(0x17304A), rgb(0x3A6694), rgb(0xD4E7FB)};
    t.error = {rgb(0x4A1C1C), rgb(0xA04040), rgb(0xFFB4AB)};

    // The same hues; the darkest ones lighter, so that bars and arrows stand out of the dark background, and the
    // range slate darker, so that it stays a frame around work rather than the brightest thing on the chart.
    t.spanKinds = {
        rgb(0x1A85C8), // kernel
        rgb(0x00A87A), // memcpy HtoD
        rgb(0xE0661A), // memcpy DtoH
        rgb(0xE69F00), // memcpy DtoD
        rgb(0xCC79A7), // memcpy peer
        rgb(0xF0E442), // memset
        rgb(0x56B4E9), // host function
        rgb(0x8C8C8C), // API call
        rgb(0xB8457A), // sync
        rgb(0xDDCC77), // host work
        rgb(0x4A5568), // range
    };
    t.flowKinds = {
        rgb(0xA0A0A0), // launch
        rgb(0xE08A3C), // event
        rgb(0xD0609A), // sync
        rgb(0xA888E0), // implicit
        rgb(0x8A96A8), // op call
        rgb(0x44AA99), // collective
    };
    return t;
}

ThemeChoice g_applied = ThemeChoice::System;
bool g_everApplied = false;

bool platformPrefersDark()
{
#if QT_VERSION >= QT_VERSION_CHECK(6, 5, 0)
    return QGuiApplication::styleHints()->colorScheme() == Qt::ColorScheme::Dark;
#else
    return false; // before Qt 6.5 the platform says it only through its palette
#endif
}

void setStyleNamed(const QString& name)
{
    if (QApplication::style() && QApplication::style()->name().compare(name, Qt::CaseInsensitive) == 0)
        return;
    if (QStyle* style = QStyleFactory::create(name))
        QApplication::setStyle(style);
}

} // namespace

QColor Theme::spanKindText(SpanKind kind) const
{
    const QColor c = spanKind(kind);
    // Relative luminance (sRGB approximation): dark text on light bars, white on dark ones.
    const double l = 0.2126 * c.redF() * c.redF() + 0.7152 * c.greenF() * c.greenF() + 0.0722 * c.blueF() * c.blueF();
    return l > 0.18 ? QColor(0x10, 0x10, 0x10) : QColor(Qt::white);
}

QString Theme::richTextStyleSheet() const
{
    return QStringLiteral(".muted { color: %1; } .faint { color: %2; } .pass { color: %3; } .fail { color: %4; } "
                          ".warning { color: %5; } .info { color: %6; } .note { background-color: %7; color: %8; } "
                          ".effect { background-color: %9; }")
        .arg(muted.name(), faint.name(), pass.name(), fail.name(), warning.name(), info.name(), note.background.name(),
             note.text.name(), effect.background.name());
}

const Theme& Theme::light()
{
    static const Theme t = makeLight();
    return t;
}

const Theme& Theme::dark()
{
    static const Theme t = makeDark();
    return t;
}

const Theme& Theme::forPalette(const QPalette& palette)
{
    return palette.color(QPalette::Window).lightness() < 128 ? dark() : light();
}

const Theme& Theme::of(const QWidget* widget)
{
    return widget ? forPalette(widget->palette()) : current();
}

const Theme& Theme::current()
{
    return forPalette(QGuiApplication::palette());
}

bool isThemeChange(const QEvent* event)
{
    return event->type() == QEvent::PaletteChange || event->type() == QEvent::ApplicationPaletteChange;
}

void onApplicationPaletteChange(QObject* context, std::function<void()> apply)
{
    QObject::connect(theme_detail::PaletteWatcher::instance(), &theme_detail::PaletteWatcher::changed, context,
                     std::move(apply));
}

double contrastRatio(const QColor& a, const QColor& b)
{
    auto luminance = [](const QColor& c) {
        auto channel = [](double v) { return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
        return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF());
    };
    const double la = luminance(a), lb = luminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

QString themeChoiceName(ThemeChoice choice)
{
    switch (choice) {
    case ThemeChoice::System: return QStringLiteral("system");
    case ThemeChoice::Light: return QStringLiteral("light");
    case ThemeChoice::Dark: return QStringLiteral("dark");
    }
    return {};
}

std::optional<ThemeChoice> parseThemeChoice(const QString& name)
{
    for (ThemeChoice c : {ThemeChoice::System, ThemeChoice::Light, ThemeChoice::Dark})
        if (name.compare(themeChoiceName(c), Qt::CaseInsensitive) == 0)
            return c;
    return std::nullopt;
}

QPalette lightPalette()
{
    QStyle* fusion = QStyleFactory::create(QStringLiteral("Fusion"));
    QPalette p = fusion ? fusion->standardPalette() : QPalette(QColor(0xEF, 0xEF, 0xEF));
    delete fusion;
    return p;
}

QPalette darkPalette()
{
    QPalette p;
    const QColor window(0x2B, 0x2B, 0x2B), base(0x1E, 0x1E, 0x1E), text(0xE6, 0xE6, 0xE6), disabled(0x80, 0x80, 0x80);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, QColor(0x26, 0x27, 0x29));
    p.setColor(QPalette::ToolTipBase, QColor(0x3A, 0x3A, 0x3A));
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, QColor(0x8C, 0x8C, 0x8C));
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, QColor(0x35, 0x35, 0x35));
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, QColor(0xFF, 0x6B, 0x6B));
    p.setColor(QPalette::Light, QColor(0x4A, 0x4A, 0x4A));
    p.setColor(QPalette::Midlight, QColor(0x3E, 0x3E, 0x3E));
    p.setColor(QPalette::Mid, QColor(0x30, 0x30, 0x30));
    p.setColor(QPalette::Dark, QColor(0x1A, 0x1A, 0x1A));
    p.setColor(QPalette::Shadow, QColor(0x0C, 0x0C, 0x0C));
    p.setColor(QPalette::Highlight, QColor(0x2F, 0x65, 0xCA));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Link, QColor(0x6C, 0xB6, 0xFF));
    p.setColor(QPalette::LinkVisited, QColor(0xB5, 0x8C, 0xFF));
    for (QPalette::ColorRole role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
        p.setColor(QPalette::Disabled, role, disabled);
    p.setColor(QPalette::Disabled, QPalette::Base, window);
    p.setColor(QPalette::Disabled, QPalette::Highlight, QColor(0x44, 0x44, 0x44));
    p.setColor(QPalette::Disabled, QPalette::HighlightedText, disabled);
    return p;
}

void applyThemeChoice(ThemeChoice choice)
{
    // The style the application started with (the platform's, or -style), for System.
    static const QString startStyle = QApplication::style() ? QApplication::style()->name() : QString();
#if QT_VERSION >= QT_VERSION_CHECK(6, 5, 0)
    static const bool followsScheme = [] {
        QObject::connect(QGuiApplication::styleHints(), &QStyleHints::colorSchemeChanged, qApp, [] {
            if (g_applied == ThemeChoice::System)
                applyThemeChoice(ThemeChoice::System);
        });
        return true;
    }();
    (void)followsScheme;
#endif
    const bool first = !g_everApplied;
    g_applied = choice;
    g_everApplied = true;
    if (choice == ThemeChoice::System) {
        if (!first) { // put back what the platform gave
            setStyleNamed(startStyle);
            QApplication::setPalette(QPalette());
        }
        // A platform that prefers dark but whose style paints light (Qt 6.5+ only knows): the dark palette.
        if (platformPrefersDark() && !Theme::current().isDark) {
            setStyleNamed(QStringLiteral("Fusion"));
            QApplication::setPalette(darkPalette());
        }
        return;
    }
    setStyleNamed(QStringLiteral("Fusion"));
    QApplication::setPalette(choice == ThemeChoice::Dark ? darkPalette() : lightPalette());
}

ThemeChoice appliedThemeChoice()
{
    return g_applied;
}

ThemeChoice savedThemeChoice()
{
    return parseThemeChoice(QSettings().value(kThemeKey).toString()).value_or(ThemeChoice::System);
}

void saveThemeChoice(ThemeChoice choice)
{
    QSettings().setValue(kThemeKey, themeChoiceName(choice));
}

} // namespace streamscope

#include "theme.moc"
