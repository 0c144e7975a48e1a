#include "udf/perf/perf_sum.h"

#include <algorithm>

#include "src/trace_model.h"

namespace tlsql {

void PerfSum::Mean::add(double peak, int64_t ns) {
  lo = n ? std::min(lo, peak) : peak, hi = n ? std::max(hi, peak) : peak;
  by_time += peak * (double)ns, time += (double)ns, plain += peak, ++n;
}

std::optional<double> PerfSum::Mean::value() const {
  if (n == 0) return std::nullopt;
  if (lo == hi) return lo;
  return time > 0 ? by_time / time : plain / (double)n;
}

void PerfSum::add(const PerfSample& s) {
  ++count_;
  gpu_ns_ = sat_add(gpu_ns_, s.gpu_ns);  // a hand-edited saved database can hold any int64
  if (s.flops) ++with_flops_, flops_ += *s.flops, flops_ns_ += (double)s.gpu_ns;
  if (s.bytes) ++with_bytes_, bytes_ += *s.bytes, bytes_ns_ += (double)s.gpu_ns;
  if (s.flops && s.bytes) both_flops_ += *s.flops, both_bytes_ += *s.bytes;
  // The GPU's bandwidth whatever the event; a FLOP/s peak only where a model says the dtype and units.
  if (s.peak_tbps) peak_tbps_.add(*s.peak_tbps, s.gpu_ns);
  if (!s.flops && !s.bytes) return;
  ++with_numbers_;
  if (s.matrix) ++matrix_;
  if (s.peak_tflops) peak_tflops_.add(*s.peak_tflops, s.gpu_ns);
}

PerfFigures PerfSum::figures() const {
  PerfFigures f;
  f.count = count_, f.gpu_ns = gpu_ns_, f.modeled = with_flops_,
  f.modeled_ns = flops_ns_ >= 0x1p63 ? INT64_MAX : (int64_t)flops_ns_;
  if (with_flops_) f.flops = flops_;
  if (with_bytes_) f.bytes = bytes_;
  if (with_flops_ && flops_ns_ > 0) f.tflops = flops_ / flops_ns_ / 1e3;  // FLOP/ns = GFLOP/s; /1e3 -> TFLOP/s
  if (with_bytes_ && bytes_ns_ > 0) f.tbps = bytes_ / bytes_ns_ / 1e3;
  if (both_bytes_ > 0) f.intensity = both_flops_ / both_bytes_;
  f.peak_tbps = peak_tbps_.value();
  if (!with_numbers_) return f;  // no model: neither the dtype nor the units are known
  f.peak_tflops = peak_tflops_.value();
  // Roofline: the ridge is peak_tflops / peak_tbps FLOPs per byte; above it compute-bound, else
  // memory-bound. Without bytes (or FLOPs) the known side decides, but only for matrix work:
  // vector work whose bytes are unknown (a _foreach_ op, whose tensors' dtype the profiler does
  // not record) may well be memory-bound, so it gets no bound.
  bool compute;
  if (f.intensity && f.peak_tflops && f.peak_tbps) {
    compute = *f.intensity >= *f.peak_tflops / *f.peak_tbps;
  } else {
    compute = f.flops && *f.flops > 0 && !f.bytes;
    if (compute && matrix_ < with_numbers_) return f;
  }
  f.bound = compute ? "compute" : "memory";
  if (compute && f.tflops && f.peak_tflops) f.achieved_pct = 100 * *f.tflops / *f.peak_tflops;
  if (!compute && f.tbps && f.peak_tbps) f.achieved_pct = 100 * *f.tbps / *f.peak_tbps;
  // Faster than the datasheet allows: the roof does not bound this work (a memory-bound op whose
  // data the previous op left in L2, a duration at the timer's 1 µs resolution) or the model
  // counts work the kernel does not do. No percentage is printed for it, and bound says why.
  if (f.achieved_pct && *f.achieved_pct > 100) f.achieved_pct.reset(), f.bound = "above_peak";
  return f;
}

}  // namespace tlsql
