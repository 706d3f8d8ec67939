#!/usr/bin/env bash
# `cmake --install` of this build into a fresh prefix, then the installed CLI and app run from a folder outside the
# source and build trees, with no STREAMSCOPE_RESOURCES: each must say that its lessons and profiles are the
# prefix's own share/streamscope (found from the executable's path), list and run a lesson with a shipped profile,
# and the app must run lesson 01 on the simulator and save a screenshot. Then every file of the desktop integration
# (menu entry, metainfo, icons) must be in its place. Nothing here depends on how fast the machine is.
# ctest install_tree, label install.
#
#   tests/install/install_tree.sh CMAKE BUILD_DIR GUI(0|1) ID
set -euo pipefail
cmake="$1" build="$2" gui="$3" id="$4"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$cmake" --install "$build" --prefix "$work/prefix" >"$work/install.log" 2>&1 || { cat "$work/install.log"; exit 1; }
prefix="$(cd "$work/prefix" && pwd -P)" # symlinks resolved, as the executables see their own path
share="$prefix/share/streamscope"
mkdir "$work/elsewhere" "$work/home"
cd "$work/elsewhere"
# The user's settings, autosaves and caches stay untouched; no GPU is asked for.
export HOME="$work/home" XDG_CONFIG_HOME="$work/home/config" XDG_DATA_HOME="$work/home/data" \
    XDG_CACHE_HOME="$work/home/cache" CUDA_VISIBLE_DEVICES=-1
unset STREAMSCOPE_RESOURCES

fail() {
    echo "install_tree: $*" >&2
    exit 1
}
# expect_line FILE LINE: FILE has exactly this line.
expect_line() { grep -qxF -- "$2" "$1" || { cat "$1"; fail "expected the line \"$2\""; }; }

cli="$prefix/bin/streamscope-cli"
[[ -x $cli ]] || fail "$cli was not installed"
for f in presets/01-two-streams.json profiles/h200.json profiles/laptop.json; do
    [[ -f $share/$f ]] || fail "$share/$f was not installed"
done

"$cli" --version >version.txt || fail "streamscope-cli --version failed"
expect_line version.txt "lessons and profiles: $share"
"$cli" presets >presets.txt || fail "streamscope-cli presets failed"
lessons="$(ls "$share/presets" | grep -c '\.json$')"
[[ $(wc -l <presets.txt) == "$lessons" ]] || { cat presets.txt; fail "presets lists not the $lessons installed lessons"; }
grep -q '^01-two-streams' presets.txt || { cat presets.txt; fail "presets lists no 01-two-streams"; }
"$cli" profiles >profiles.txt || fail "streamscope-cli profiles failed"
grep -q 'h200' profiles.txt || { cat profiles.txt; fail "profiles lists no h200"; }
"$cli" run 01 --backend sim --profile h200 --check -o trace.json >run.txt 2>&1 ||
    { cat run.txt; fail "streamscope-cli run 01 --backend sim --profile h200 --check failed"; }
[[ -s trace.json ]] || fail "run -o trace.json wrote nothing"
"$cli" check trace.json >check.txt 2>&1 || { cat check.txt; fail "streamscope-cli check of the installed run failed"; }
echo "install_tree: streamscope-cli runs from $prefix/bin with the lessons and profiles of $share"

if [[ $gui != 1 ]]; then
    echo "install_tree: the desktop app is not built here (STREAMSCOPE_GUI=OFF): nothing more to check"
    exit 0
fi
app="$prefix/bin/streamscope"
[[ -x $app ]] || fail "$app was not installed"
"$app" --version >app-version.txt 2>&1 || { cat app-version.txt; fail "streamscope --version failed"; }
expect_line app-version.txt "lessons and profiles: $share"
QT_QPA_PLATFORM=offscreen "$app" 01 --backend sim --profile h200 --screenshot shot.png --quit-after-run \
    >app.txt 2>&1 || { cat app.txt; fail "streamscope 01 --screenshot shot.png --quit-after-run failed"; }
[[ -s shot.png ]] || { cat app.txt; fail "the app saved no screenshot"; }

for f in "applications/$id.desktop" "metainfo/$id.metainfo.xml" "icons/hicolor/scalable/apps/$id.svg"; do
    [[ -f $prefix/share/$f ]] || fail "$prefix/share/$f was not installed"
done
for size in 16 32 48 64 128 256; do
    png="$prefix/share/icons/hicolor/${size}x${size}/apps/$id.png"
    [[ -f $png ]] || fail "$png was not installed"
    # A PNG's width and height: big-endian 32-bit numbers at bytes 16 and 20 (its IHDR chunk).
    read -r w h < <(od -An -tu4 --endian=big -j16 -N8 "$png")
    [[ $w == "$size" && $h == "$size" ]] || fail "$png is ${w}x${h}, not ${size}x${size}"
done
if command -v appstreamcli >/dev/null; then
    # The installed tree as software centres read it: the metainfo, the menu entry it launches and the icon.
    appstreamcli validate-tree --no-net "$prefix" || fail "appstreamcli validate-tree of $prefix failed"
fi
echo "install_tree: streamscope runs from $prefix/bin; menu entry, metainfo and icons in $prefix/share"
