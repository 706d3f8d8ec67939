// streamscope: the desktop app. `streamscope [FILE|LESSON]` opens the window; `streamscope FILE --export out.png`
// renders a scenario (simulated) or a trace to PNG, SVG or PDF without a display.
#include "document_loader.h"
#include "format.h"
#include "image_export.h"
#include "job_loader.h"
#include "lesson_gallery.h"
#include "main_window.h"
#include "resources.h"
#include "run_controller.h"
#include "screen_fit.h"
#include "theme.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDockWidget>
#include <QFileInfo>
#include <QIcon>
#include <QImage>
#include <QTimer>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <tuple>

#ifndef STREAMSCOPE_VERSION
#define STREAMSCOPE_VERSION "0.1.0"
#endif
#ifndef STREAMSCOPE_APP_ID
#define STREAMSCOPE_APP_ID "io.github.streamscope.StreamScope"
#endif

namespace ss = streamscope;

namespace {

enum ExitCode : int { kExitOk = 0, kExitBadInput = 2, kExitRuntime = 3 };

bool envSet(const char* name)
{
    const char* v = std::getenv(name);
    return v && *v;
}

int fail(const QString& message, int code)
{
    std::fprintf(stderr, "streamscope: error: %s\n", qPrintable(message));
    return code;
}

bool parseSize(const QCommandLineParser& parser, const QString& option, int fallback, int* out, QString* error)
{
    if (!parser.isSet(option)) {
        *out = fallback;
        return true;
    }
    bool ok = false;
    const int v = parser.value(option).toInt(&ok);
    if (!ok || v < 16 || v > 20000) {
        *error = QStringLiteral("--%1 must be a number of pixels between 16 and 20000, got \"%2\"")
                     .arg(option, parser.value(option));
        return false;
    }
    *out = v;
    return true;
}

// Every option of the app, on `parser`. Single-dash words are long options ("-platform", Qt's own, is not "-p -l
// -a ..." with a stray "-h" in it), so that --help can be told apart before QApplication exists.
void addOptions(QCommandLineParser& parser)
{
    parser.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
    parser.setApplicationDescription(QStringLiteral(
        "StreamScope: see what CUDA streams do.\n\n"
        "  streamscope [FILE]                      open a scenario, trace or lesson (\"01\", \"two-streams\")\n"
        "  streamscope RANK_TRACES... | FOLDER     open the per-rank traces of one job as one timeline\n"
        "  streamscope FILE --export out.png       render a scenario (simulated) or trace to PNG, SVG or PDF,\n"
        "                                          without a display"));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(
        QStringLiteral("file"),
        QStringLiteral("Scenario or trace file, or a lesson id; several rank traces, or a folder of them: one job"),
        QStringLiteral("[FILE...]"));
    QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                  QStringLiteral("Save a screenshot of the window after the first run"),
                                  QStringLiteral("png"));
    screenshot.setFlags(QCommandLineOption::HiddenFromHelp);
    QCommandLineOption quit(QStringLiteral("quit-after-run"),
                            QStringLiteral("Quit after the first run (and screenshot)"));
    quit.setFlags(QCommandLineOption::HiddenFromHelp);
    parser.addOptions({
        {QStringLiteral("export"), QStringLiteral("Render FILE to this image (.png, .svg, .pdf) and exit"),
         QStringLiteral("image")},
        {QStringLiteral("width"), QStringLiteral("Image or window width (pixels)"), QStringLiteral("w")},
        {QStringLiteral("height"), QStringLiteral("Image or window height (pixels)"), QStringLiteral("h")},
        {QStringLiteral("variant"), QStringLiteral("Variant of the scenario or lesson"), QStringLiteral("id")},
        {QStringLiteral("backend"), QStringLiteral("auto (GPU when usable), sim or gpu"), QStringLiteral("b"),
         QStringLiteral("auto")},
        {QStringLiteral("profile"), QStringLiteral("Simulator device profile"), QStringLiteral("id")},
        {QStringLiteral("theme"),
         QStringLiteral("light, dark or system, for this start (default: the View > Theme setting)"),
         QStringLiteral("theme")},
        {QStringLiteral("fit"),
         QStringLiteral("Export: fill (rows grow to fill the height, the default) or crop (the image only as high as "
                        "its rows)"),
         QStringLiteral("fill|crop")},
        {QStringLiteral("scale"), QStringLiteral("Export: PNG device pixels per pixel (2: twice the pixels, 192 dpi)"),
         QStringLiteral("n")},
        {QStringLiteral("text-scale"),
         QStringLiteral("Export: text size against the 1280x720 design (default: from "
                        "the size)"),
         QStringLiteral("f")},
        {QStringLiteral("range"), QStringLiteral("Export: the time range, from the first span (0.2ms..1.5ms)"),
         QStringLiteral("from..to")},
        {QStringLiteral("arrows"),
         QStringLiteral("Export: arrow kinds, all, none or a list (launch,event,sync,implicit,call; default: all "
                        "but sync)"),
         QStringLiteral("kinds")},
        {QStringLiteral("critical-path"), QStringLiteral("Export: outline the critical path")},
        {QStringLiteral("concurrency"),
         QStringLiteral("Export: the concurrency strip (operations running) under the time axis")},
        {QStringLiteral("no-legend"), QStringLiteral("Export: leave the legend out")},
        {QStringLiteral("transparent"), QStringLiteral("Export: no background")},
        {QStringLiteral("title"), QStringLiteral("Export: the title (default: the lesson and variant titles)"),
         QStringLiteral("text")},
        screenshot,
        quit,
    });
}

void printHelp(const QCommandLineParser& parser)
{
    std::printf("%s", qPrintable(parser.helpText()));
}

// The second line says where the lessons and profiles come from (an installed tree: its own share/streamscope).
void printVersion()
{
    std::printf("streamscope %s\nlessons and profiles: %s\n", STREAMSCOPE_VERSION, ss::resourcesDir().c_str());
}

// --help and --version answered without a display: QApplication aborts where there is none, so they are read
// before it exists (with a QCoreApplication for the program's name in the usage line). Returns the exit code, or
// nothing when neither was asked for. Qt's own options (-platform, -style, ...) are unknown here and ignored.
std::optional<int> answerWithoutDisplay(int argc, char** argv)
{
    QStringList arguments;
    for (int i = 0; i < argc; ++i)
        arguments << QString::fromLocal8Bit(argv[i]);
    QCommandLineParser parser;
    addOptions(parser);
    (void)parser.parse(arguments);
    const bool help = parser.isSet(QStringLiteral("help")) || parser.isSet(QStringLiteral("help-all"));
    const bool version = parser.isSet(QStringLiteral("version"));
    if (!help && !version)
        return std::nullopt;
    QCoreApplication core(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("StreamScope"));
    QCoreApplication::setApplicationVersion(QStringLiteral(STREAMSCOPE_VERSION));
    if (help)
        printHelp(parser);
    else
        printVersion();
    return kExitOk;
}

// The image options of the command line; nullopt after printing what is wrong.
std::optional<ss::ImageOptions> imageOptions(const QCommandLineParser& parser, const ss::Trace& trace, QString* error)
{
    ss::ImageOptions o;
    if (parser.isSet(QStringLiteral("fit"))) {
        const QString fit = parser.value(QStringLiteral("fit"));
        if (fit != QLatin1String("fill") && fit != QLatin1String("crop")) {
            *error = QStringLiteral("--fit must be fill or crop, got \"%1\"").arg(fit);
            return std::nullopt;
        }
        o.crop = fit == QLatin1String("crop");
    }
    for (const auto& [name, target, lo, hi] : {std::tuple{QStringLiteral("scale"), &o.scale, 0.25, 8.0},
                                               std::tuple{QStringLiteral("text-scale"), &o.textScale, 0.5, 8.0}}) {
        if (!parser.isSet(name))
            continue;
        bool ok = false;
        const double v = parser.value(name).toDouble(&ok);
        if (!ok || v < lo || v > hi) {
            *error = QStringLiteral("--%1 must be a number from %2 to %3, got \"%4\"")
                         .arg(name)
                         .arg(lo)
                         .arg(hi)
                         .arg(parser.value(name));
            return std::nullopt;
        }
        *target = v;
    }
    if (parser.isSet(QStringLiteral("range"))) {
        o.range = ss::parseImageTimeRange(parser.value(QStringLiteral("range")), trace, error);
        if (!o.range) {
            *error = QStringLiteral("--range: ") + *error;
            return std::nullopt;
        }
    }
    if (parser.isSet(QStringLiteral("arrows"))) {
        o.arrows = ss::parseImageArrows(parser.value(QStringLiteral("arrows")), error);
        if (!o.arrows) {
            *error = QStringLiteral("--arrows: ") + *error;
            return std::nullopt;
        }
    } else {
        o.arrows = ss::defaultArrowKinds(); // as a new window draws them: sync arrows off
    }
    o.criticalPath = parser.isSet(QStringLiteral("critical-path"));
    o.concurrency = parser.isSet(QStringLiteral("concurrency"));
    o.legend = !parser.isSet(QStringLiteral("no-legend"));
    o.transparent = parser.isSet(QStringLiteral("transparent"));
    return o;
}

int exportHeadless(const QCommandLineParser& parser, const QStringList& inputs, const QString& output,
                   const QString& variant, const QString& profile, QSize size)
{
    if (!ss::imageFormatForPath(output))
        return fail(QStringLiteral("%1: unknown image format: use a .png, .svg or .pdf file name").arg(output),
                    kExitBadInput);
    // Several rank traces, a folder of them or a pattern: one job, merged as `streamscope-cli merge` merges it.
    QStringList job = inputs.size() > 1 ? inputs : ss::jobPathsOf(inputs.front());
    auto doc = !job.isEmpty() ? ss::loadJob(job) : ss::loadDocument(inputs.front(), variant);
    if (!doc)
        return fail(ss::qs(doc.error().toString()), kExitBadInput);
    std::shared_ptr<const ss::Trace> trace;
    if (doc->kind == ss::DocumentKind::Trace) {
        trace = doc->trace->trace;
    } else {
        for (const auto& w : doc->warnings)
            std::fprintf(stderr, "streamscope: warning: %s\n", w.toString().c_str());
        auto simulated = ss::RunController::simulate(doc->scenario, profile, doc->variant);
        if (!simulated)
            return fail(ss::qs(simulated.error().toString()),
                        simulated.errorClass() == ss::ErrorClass::BadInput ? kExitBadInput : kExitRuntime);
        trace = std::make_shared<const ss::Trace>(std::move(simulated).value());
    }
    QString error;
    std::optional<ss::ImageOptions> options = imageOptions(parser, *trace, &error);
    if (!options)
        return fail(error, kExitBadInput);
    options->size = size;
    options->title = parser.isSet(QStringLiteral("title"))
        ? parser.value(QStringLiteral("title"))
        : ss::defaultImageTitle(*trace, doc->kind == ss::DocumentKind::Trace ? doc->path : QString());
    if (!ss::exportTimelineImage(*trace, output, *options, &error))
        return fail(error.isEmpty() ? QStringLiteral("could not write %1").arg(output) : error, kExitRuntime);
    const QImage written = ss::imageFormatForPath(output) == ss::ImageFormat::Png ? QImage(output) : QImage();
    const QSize out = written.isNull() ? size : written.size();
    std::printf("exported %s (%d x %d%s)\n", qPrintable(output), out.width(), out.height(),
                doc->kind == ss::DocumentKind::Trace ? "" : ", simulated");
    return kExitOk;
}

} // namespace

int main(int argc, char** argv)
{
    // Headless export needs no display: without one (and without the user's own choice) use the offscreen
    // platform. This must happen before QApplication exists.
    bool exporting = false;
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "--export") == 0 || std::strncmp(argv[i], "--export=", 9) == 0)
            exporting = true;
    if (exporting && !envSet("DISPLAY") && !envSet("WAYLAND_DISPLAY") && !envSet("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");

    if (const std::optional<int> answered = answerWithoutDisplay(argc, argv))
        return *answered;

    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("StreamScope"));
    QApplication::setApplicationName(QStringLiteral("StreamScope"));
    QApplication::setApplicationVersion(QStringLiteral(STREAMSCOPE_VERSION));
    // The icon of every window and of About (embedded, so that a build tree shows it too), and the desktop entry it
    // belongs to (io.github.streamscope.StreamScope.desktop): Wayland compositors and docks take the name and icon
    // of the window from there.
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/" STREAMSCOPE_APP_ID ".svg")));
    QGuiApplication::setDesktopFileName(QStringLiteral(STREAMSCOPE_APP_ID));

    QCommandLineParser parser;
    addOptions(parser);
    if (!parser.parse(QApplication::arguments()))
        return fail(parser.errorText(), kExitBadInput);
    const QString exportOption = QStringLiteral("export"), widthOption = QStringLiteral("width"),
                  heightOption = QStringLiteral("height"), variantOption = QStringLiteral("variant"),
                  backendOption = QStringLiteral("backend"), profileOption = QStringLiteral("profile"),
                  screenshotOption = QStringLiteral("screenshot"), quitOption = QStringLiteral("quit-after-run");
    // Several files are the ranks of one job (a folder of them is one argument).
    const QStringList files = parser.positionalArguments();
    const QString file = files.value(0);
    const QString variant = parser.value(variantOption);
    const QString profile = parser.value(profileOption);
    QString backend = parser.value(backendOption);
    if (backend == QLatin1String("cuda")) // streamscope-cli's name for it
        backend = QStringLiteral("gpu");
    if (backend != QLatin1String("auto") && backend != QLatin1String("sim") && backend != QLatin1String("gpu"))
        return fail(QStringLiteral("--backend must be auto, sim or gpu, got \"%1\"").arg(backend), kExitBadInput);
    if (!profile.isEmpty() && !ss::RunController::profileIds().contains(profile) && !QFileInfo::exists(profile))
        return fail(QStringLiteral("unknown device profile \"%1\" (shipped: %2)")
                        .arg(profile, ss::RunController::profileIds().join(QStringLiteral(", "))),
                    kExitBadInput);
    QString error;
    int width = 0, height = 0;
    const bool exportMode = parser.isSet(exportOption);
    if (!parseSize(parser, widthOption, exportMode ? 1600 : 0, &width, &error)
        || !parseSize(parser, heightOption, exportMode ? 900 : 0, &height, &error))
        return fail(error, kExitBadInput);

    std::optional<ss::ThemeChoice> theme = ss::savedThemeChoice();
    if (parser.isSet(QStringLiteral("theme"))) {
        theme = ss::parseThemeChoice(parser.value(QStringLiteral("theme")));
        if (!theme)
            return fail(QStringLiteral("--theme must be light, dark or system, got \"%1\"")
                            .arg(parser.value(QStringLiteral("theme"))),
                        kExitBadInput);
    }

    if (exportMode) {
        if (file.isEmpty())
            return fail(QStringLiteral("--export needs a scenario, trace or lesson to render"), kExitBadInput);
        return exportHeadless(parser, files, parser.value(exportOption), variant, profile, QSize(width, height));
    }

    // Before the window exists, so that it is built in the theme's palette. Images keep their own (light) theme.
    ss::applyThemeChoice(*theme);
    ss::MainWindow window;
    if (!profile.isEmpty())
        window.runController()->setProfileId(profile);
    const QString screenshot = parser.value(screenshotOption);
    const bool quitAfterRun = parser.isSet(quitOption);
    const bool scripted = !screenshot.isEmpty() || quitAfterRun;
    if (backend == QLatin1String("sim") || (scripted && backend == QLatin1String("auto"))) {
        window.setBackend(ss::RunBackend::Simulator);
        window.setGpuProbeEnabled(false);
    }
    if (scripted && backend == QLatin1String("gpu"))
        window.setGpuProbeEnabled(false); // run on the GPU straight away, through streamscope-cli
    if (scripted) {
        window.setScreenshotAfterRun(screenshot.isEmpty() ? QString() : screenshot, quitAfterRun);
        window.setUnsavedPrompt([] { return ss::MainWindow::UnsavedChoice::Discard; });
        // The size asked for, else the window's default shrunk to the screen, as an interactive start sizes it.
        const QSize fitted = ss::sizeWithin(ss::MainWindow::defaultSize(), ss::availableGeometry(&window));
        window.resize(width > 0 ? width : fitted.width(), height > 0 ? height : fitted.height());
        QObject::connect(&window, &ss::MainWindow::errorShown, &app, [quitAfterRun](const QString& message) {
            std::fprintf(stderr, "streamscope: error: %s\n", qPrintable(message));
            if (quitAfterRun)
                QCoreApplication::exit(kExitBadInput);
        });
        // Never hang a script: give up after a minute.
        QTimer::singleShot(60000, &app, [] {
            std::fprintf(stderr, "streamscope: error: no run finished within 60 s\n");
            QCoreApplication::exit(kExitRuntime);
        });
    } else if (width > 0 && height > 0) {
        window.resize(width, height);
    }
    window.show();
    if (backend == QLatin1String("gpu"))
        window.setBackend(ss::RunBackend::Gpu);

    // What a window that did not close (a crash, a kill) was editing is offered back first.
    const bool recovered = !scripted && window.recoverAutosaved();
    if (files.size() > 1) {
        window.openJob(files);
    } else if (!file.isEmpty()) {
        window.openPath(file, variant);
    } else if (!recovered) {
        window.newScenario();
        // A first start: show the lessons.
        if (auto* lessons = window.findChild<QDockWidget*>(QStringLiteral("lessonsDock")))
            lessons->raise();
    }
    return app.exec();
}
