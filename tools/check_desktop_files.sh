#!/usr/bin/env bash
# The desktop app's menu entry and AppStream metainfo (resources/desktop/), validated by the tools that desktops and
# software centres read them with (ctest: validate_desktop_file and validate_metainfo, label install):
#
#   tools/check_desktop_files.sh desktop [SOURCE_ROOT]            desktop-file-validate (package desktop-file-utils)
#   tools/check_desktop_files.sh metainfo [SOURCE_ROOT] [VERSION] appstreamcli validate --no-net (package appstream),
#                                                                 and the newest release is VERSION (the project's)
#
# Without the tool it says so and exits 77, which ctest reports as skipped; tools/setup.sh installs both.
set -euo pipefail

what="${1:-}"
ROOT="${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
VERSION="${3:-}"
ID=io.github.streamscope.StreamScope
dir="$ROOT/resources/desktop"

case $what in
desktop)
    file="$dir/$ID.desktop"
    if ! command -v desktop-file-validate >/dev/null; then
        echo "check_desktop_files: skipped: desktop-file-validate is not installed (apt-get install desktop-file-utils)"
        exit 77
    fi
    # Hints are advice about optional keys; errors and warnings fail.
    out="$(desktop-file-validate --no-hints "$file" 2>&1)" || { printf '%s\n' "$out"; exit 1; }
    if [[ -n $out ]]; then
        printf '%s\n' "$out"
        exit 1
    fi
    grep -qx "Icon=$ID" "$file" || { echo "$file: Icon is not $ID (the icon's name in resources/icons/)"; exit 1; }
    echo "check_desktop_files: $file is valid (desktop-file-validate)"
    ;;
metainfo)
    file="$dir/$ID.metainfo.xml"
    if ! command -v appstreamcli >/dev/null; then
        echo "check_desktop_files: skipped: appstreamcli is not installed (apt-get install appstream)"
        exit 77
    fi
    # Errors and warnings fail; info and pedantic notes (such as the capitals of the reverse-DNS id) do not.
    appstreamcli validate --no-net --no-color "$file"
    grep -q "<launchable type=\"desktop-id\">$ID.desktop</launchable>" "$file" ||
        { echo "$file: the launchable is not $ID.desktop"; exit 1; }
    if [[ -n $VERSION ]]; then
        newest="$(grep -o '<release version="[^"]*"' "$file" | head -n 1 | cut -d'"' -f2)"
        [[ $newest == "$VERSION" ]] ||
            { echo "$file: the newest release is ${newest:-missing}, the project's version $VERSION: add a <release>"; exit 1; }
    fi
    echo "check_desktop_files: $file is valid ($(appstreamcli --version))"
    ;;
*)
    echo "usage: tools/check_desktop_files.sh desktop|metainfo [SOURCE_ROOT] [VERSION]" >&2
    exit 2
    ;;
esac
