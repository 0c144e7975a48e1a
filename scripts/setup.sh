#!/usr/bin/env bash
# Installs what is missing (Debian 12 packages) and builds tlsql into build/.
#   scripts/setup.sh            release build in build/
#   BUILD_DIR=x CMAKE_ARGS=...  another folder / extra CMake options
#   EXTRA_PACKAGES="chromium"   more packages (scripts/test.sh: the browser the HTML report test uses)
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(g++ cmake ninja-build pkg-config python3 python3-distributed libsqlite3-dev libsimdjson-dev nlohmann-json3-dev libfmt-dev doctest-dev
          libcli11-dev libedit-dev libisal-dev libtorch-dev libzip-dev libcairo2-dev fonts-dejavu-core python3-pandas
          sqlite3 ${EXTRA_PACKAGES:-})
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" ${CMAKE_ARGS:-} >/dev/null
cmake --build "$BUILD_DIR"
