#include "udf/perf/perf_sum.h"

#include <doctest/doctest.h>

#include <cstring>

using tlsql::PerfFigures;
using tlsql::PerfSample;
using tlsql::PerfSum;

namespace {

PerfSample s(std::optional<double> flops, std::optional<double> bytes, int64_t ns, bool matrix = true,
             std::optional<double> peak_tf = 1000.0, std::optional<double> peak_tb = 4.0) {
  PerfSample x;
  x.flops = flops, x.bytes = bytes, x.gpu_ns = ns, x.matrix = matrix, x.peak_tflops = peak_tf, x.peak_tbps = peak_tb;
  return x;
}

bool is(const char* a, const char* b) { return a && b ? std::strcmp(a, b) == 0 : a == b; }

}  // namespace

TEST_CASE("a kernel's launches without numbers add no time to its rate (issue 40, item 1)") {
  // 120 launches with an op: 4e10 FLOPs in 100 us each (400 TFLOP/s); 52 launched before the
  // window, no op, no FLOPs, 100 us each. Old tflops: 120 x 4e10 / (172 x 1e5 ns) / 1e3 = 279.07.
  PerfSum sum;
  for (int i = 0; i < 120; ++i) sum.add(s(4e10, 1e8, 100000));
  for (int i = 0; i < 52; ++i) sum.add(s(std::nullopt, std::nullopt, 100000));
  const PerfFigures f = sum.figures();
  CHECK(f.count == 172);
  CHECK(f.modeled == 120);
  CHECK(f.gpu_ns == 172 * 100000);
  CHECK(f.modeled_ns == 120 * 100000);
  CHECK(*f.flops == doctest::Approx(4.8e12));
  CHECK(*f.tflops == doctest::Approx(400.0));  // 4.8e12 FLOP / 1.2e7 ns / 1e3
  CHECK(*f.tbps == doctest::Approx(1.0));      // 1.2e10 B / 1.2e7 ns / 1e3
  // intensity 400 FLOP/B >= ridge 1000 / 4 = 250: compute-bound, 400 / 1000 = 40 %
  CHECK(*f.intensity == doctest::Approx(400.0));
  CHECK(is(f.bound, "compute"));
  CHECK(*f.achieved_pct == doctest::Approx(40.0));
}

TEST_CASE("a group's rate is its sums, not the mean of its events' rates") {
  // 1e9 FLOPs in 1 us (1e9 / 1000 ns / 1e3 = 1000 TFLOP/s) and 1e9 FLOPs in 3 us (333.3): the
  // mean of the rates is 666.7; the sums give 2e9 / 4000 ns / 1e3 = 500, 25 % of a 2000 peak.
  PerfSum sum;
  sum.add(s(1e9, std::nullopt, 1000, true, 2000.0, std::nullopt));
  sum.add(s(1e9, std::nullopt, 3000, true, 2000.0, std::nullopt));
  const PerfFigures f = sum.figures();
  CHECK(*f.tflops == doctest::Approx(500.0));
  CHECK(!f.tbps);
  CHECK(!f.intensity);
  CHECK(is(f.bound, "compute"));  // matrix work with FLOPs and no bytes
  CHECK(*f.achieved_pct == doctest::Approx(25.0));
}

TEST_CASE("one event is a group of one") {
  const PerfFigures f = [] {
    PerfSum sum;
    // 2e5 FLOPs and 8e5 bytes in 1 us: 2e5 / 1000 ns / 1e3 = 0.2 TFLOP/s, 0.8 TB/s, 0.25 FLOP/B
    sum.add(s(2e5, 8e5, 1000, false, 60.0, 3.0));
    return sum.figures();
  }();
  CHECK(*f.tflops == doctest::Approx(0.2));
  CHECK(*f.tbps == doctest::Approx(0.8));
  CHECK(*f.intensity == doctest::Approx(0.25));
  CHECK(is(f.bound, "memory"));  // 0.25 < 60 / 3
  CHECK(*f.achieved_pct == doctest::Approx(100 * 0.8 / 3.0));
  CHECK(*f.peak_tflops == 60.0);
  CHECK(*f.peak_tbps == 3.0);
}

TEST_CASE("peaks of a group are weighted by GPU time, and the % is of the sums") {
  // 3e9 FLOPs in 1 us on a 1000-TFLOP/s part, 1e9 FLOPs in 3 us on a 200 one (two ranks):
  // tflops 4e9 / 4000 / 1e3 = 1000; peak (1000 x 1000 + 200 x 3000) / 4000 = 400; 100 x 1000 / 400 = 250 %:
  // above the peak, so no % and bound 'above_peak'.
  PerfSum sum;
  sum.add(s(3e9, std::nullopt, 1000, true, 1000.0, std::nullopt));
  sum.add(s(1e9, std::nullopt, 3000, true, 200.0, std::nullopt));
  PerfFigures f = sum.figures();
  CHECK(*f.peak_tflops == doctest::Approx(400.0));
  CHECK(!f.achieved_pct);
  CHECK(is(f.bound, "above_peak"));
  // A group with no GPU time: plain mean of the peaks, no rate, no %.
  PerfSum cpu;
  cpu.add(s(1e9, 1e9, 0, true, 100.0, 2.0));
  cpu.add(s(1e9, 1e9, 0, true, 300.0, 2.0));
  f = cpu.figures();
  CHECK(*f.peak_tflops == doctest::Approx(200.0));
  CHECK(!f.tflops);
  CHECK(is(f.bound, "memory"));  // intensity 1 < 200 / 2
  CHECK(!f.achieved_pct);
}

TEST_CASE("vector work without bytes has no bound; no model: no FLOP/s peak, the GPU's bandwidth") {
  PerfSum foreach_op;
  foreach_op.add(s(1e6, std::nullopt, 1000, false));  // 1e6 / 1000 ns / 1e3 = 1 TFLOP/s
  PerfFigures f = foreach_op.figures();
  CHECK(*f.tflops == doctest::Approx(1.0));
  CHECK(!f.bound);
  CHECK(!f.achieved_pct);
  PerfSum none;
  none.add(s(std::nullopt, std::nullopt, 5000));
  f = none.figures();
  CHECK(f.count == 1);
  CHECK(f.modeled == 0);
  CHECK(f.modeled_ns == 0);
  CHECK(!f.flops);
  CHECK(!f.tflops);
  CHECK(!f.peak_tflops);
  CHECK(*f.peak_tbps == 4.0);
  CHECK(!f.bound);
  // A mixed group of matrix and vector work without bytes: not all matrix, no bound.
  PerfSum mixed;
  mixed.add(s(1e6, std::nullopt, 1000, true));
  mixed.add(s(1e6, std::nullopt, 1000, false));
  CHECK(!mixed.figures().bound);
  // Empty: nothing.
  f = PerfSum().figures();
  CHECK(f.count == 0);
  CHECK(!f.tflops);
  CHECK(!f.peak_tbps);
}
