#!/usr/bin/env bash
# Installs, builds and runs the whole test suite twice: a release build, then a Debug build with
# AddressSanitizer + UndefinedBehaviorSanitizer. Tests over ../shared/traces are skipped when that
# folder is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRA_PACKAGES="chromium" scripts/setup.sh
(cd build && ctest --output-on-failure -j2)
BUILD_DIR=build-asan BUILD_TYPE=Debug CMAKE_ARGS="-DTLSQL_SANITIZE=ON" scripts/setup.sh
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j2)
