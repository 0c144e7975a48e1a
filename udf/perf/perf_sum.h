// The one definition of the perf figures of a group of events (the launches of a kernel name, the
// instances of an op name or shape, a serving step) and so of one event, a group of one: what
// every report and perf function prints (docs/reports.md, "Column names").
//
//   flops, bytes   the sums over the events that have them;
//   tflops, tbps   those sums over the GPU time of the same events (events without a FLOPs figure
//                  add no time to tflops: 52 launches with no op beside 120 with one do not dilute
//                  the 120's rate);
//   intensity      FLOPs over bytes of the events that have both;
//   peaks          the events' peaks weighted by their GPU time (one GPU and dtype: that peak;
//                  equally when none has GPU time);
//   bound, achieved_pct  the roofline of those sums, as for one event: intensity against the
//                  ridge (peak_tflops / peak_tbps), else matrix work with FLOPs and no bytes is
//                  compute-bound; the % of the bounding peak; above 100 it is no % and bound says
//                  'above_peak'.
// Coverage: count (events), modeled (those with a FLOPs figure), gpu_ns and modeled_ns (their GPU time).
#pragma once

#include <cstdint>
#include <optional>

namespace tlsql {

// One event: its model (finite figures only), GPU time and the gpu_spec peaks of its dtype and units.
struct PerfSample {
  std::optional<double> flops, bytes;
  int64_t gpu_ns = 0;
  std::optional<double> peak_tflops, peak_tbps;
  bool matrix = false;
};

struct PerfFigures {
  int64_t count = 0, modeled = 0, gpu_ns = 0, modeled_ns = 0;
  std::optional<double> flops, bytes, tflops, tbps, intensity, peak_tflops, peak_tbps, achieved_pct;
  const char* bound = nullptr;  // "compute", "memory", "above_peak"; nullptr: none
};

class PerfSum {
 public:
  void add(const PerfSample& s);
  PerfFigures figures() const;

 private:
  // A weighted mean of peaks: by GPU time, and plainly in case no sample has any; one peak
  // exactly (no rounding from the weighting).
  struct Mean {
    double by_time = 0, time = 0, plain = 0, lo = 0, hi = 0;
    int64_t n = 0;
    void add(double peak, int64_t ns);
    std::optional<double> value() const;
  };
  int64_t count_ = 0, gpu_ns_ = 0;
  int64_t with_flops_ = 0, with_bytes_ = 0, with_numbers_ = 0, matrix_ = 0;
  double flops_ = 0, bytes_ = 0, flops_ns_ = 0, bytes_ns_ = 0, both_flops_ = 0, both_bytes_ = 0;
  Mean peak_tflops_, peak_tbps_;
};

}  // namespace tlsql
