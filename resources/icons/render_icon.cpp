// Renders the app's SVG icon to a square PNG of one size, at build time (resources/CMakeLists.txt). The icon theme
// specification asks for pixel sizes beside the scalable icon (48x48 at least, for desktops that draw no SVG);
// drawing them all from the one SVG keeps them from drifting apart, and an SVG that Qt cannot draw fails the build.
//
//   render_icon IN.svg OUT.png SIZE
#include <QByteArray>
#include <QImage>
#include <QPainter>
#include <QString>
#include <QSvgRenderer>

#include <cstdio>

int main(int argc, char** argv)
{
    if (argc != 4) {
        std::fprintf(stderr, "usage: render_icon IN.svg OUT.png SIZE\n");
        return 2;
    }
    const QString in = QString::fromLocal8Bit(argv[1]);
    const QString out = QString::fromLocal8Bit(argv[2]);
    bool ok = false;
    const int size = QByteArray(argv[3]).toInt(&ok);
    if (!ok || size < 1 || size > 4096) {
        std::fprintf(stderr, "render_icon: SIZE must be a number of pixels from 1 to 4096, got \"%s\"\n", argv[3]);
        return 2;
    }
    QSvgRenderer renderer(in);
    if (!renderer.isValid()) {
        std::fprintf(stderr, "render_icon: %s: not an SVG that Qt can draw\n", argv[1]);
        return 1;
    }
    QImage image(size, size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);
    {
        QPainter painter(&image);
        painter.setRenderHint(QPainter::Antialiasing);
        renderer.render(&painter, QRectF(0, 0, size, size));
    }
    if (!image.save(out, "PNG")) {
        std::fprintf(stderr, "render_icon: could not write %s\n", argv[2]);
        return 1;
    }
    return 0;
}
