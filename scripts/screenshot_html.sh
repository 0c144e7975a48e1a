#!/usr/bin/env bash
# Opens an HTML file in headless Chromium (Debian's `chromium`) with the network cut off, writes a
# screenshot, and prints every message the page logged to the console. Exit 1 if there was any.
#   scripts/screenshot_html.sh report.html report.png [WIDTH [HEIGHT]]
set -euo pipefail
html=$(realpath "$1")
png=$(realpath -m "$2")
width=${3:-1440}
height=${4:-5000}
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "screenshot_html: chromium is not installed (apt-get install chromium)" >&2
  exit 2
fi
profile=$(mktemp -d)
log=$(mktemp)
trap 'rm -rf "$profile" "$log"' EXIT
rm -f "$png"
# --no-sandbox: Chromium refuses to run as root otherwise. Every host name resolves to nothing, so
# a page that needed the network would show it.
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
  --user-data-dir="$profile" --host-resolver-rules="MAP * ~NOTFOUND" --enable-logging=stderr --v=0 \
  --window-size="$width,$height" --screenshot="$png" "file://$html" >"$log" 2>&1 || {
  cat "$log" >&2
  echo "screenshot_html: chromium failed" >&2
  exit 1
}
if [ ! -s "$png" ]; then
  cat "$log" >&2
  echo "screenshot_html: no screenshot written" >&2
  exit 1
fi
if grep -q ":CONSOLE" "$log"; then
  grep ":CONSOLE" "$log" >&2
  exit 1
fi
echo "$png: screenshot of $html, no console messages"
