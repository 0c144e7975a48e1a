// Passes over a trace's rows split across the load's threads (the tree stage, issue 51). A pass
// is cut into consecutive ranges of rows, one thread each; what a range collects (rows it picked,
// counts, health) is kept per range and joined in range order afterwards, so the result is the
// one a single thread walking the rows in order gets, whatever the number of threads.
#pragma once

#include <algorithm>
#include <cstddef>
#include <exception>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "src/radix_sort.h"

namespace tlsql {

// [0, n) cut into `parts` consecutive ranges of near-equal size: part p is [begin(p), end(p)).
struct RowRanges {
  size_t n = 0, parts = 1;
  size_t begin(size_t p) const { return n * p / parts; }
  size_t end(size_t p) const { return n * (p + 1) / parts; }
};

// At most `threads` ranges, none shorter than `min_rows` (a thread costs tens of µs to start: a
// small trace is one range), at least one.
inline RowRanges split_rows(size_t n, size_t threads, size_t min_rows) {
  size_t parts = min_rows ? n / min_rows : n;
  parts = std::max<size_t>(1, std::min(parts, std::max<size_t>(1, threads)));
  return {n, parts};
}

// Runs fn(part, begin, end) for every range, part 0 on the calling thread and the others on
// threads of their own, and returns when all are done. If parts threw, the exception of the
// lowest-numbered one is rethrown (the one a single thread would have met first).
template <typename Fn>
void for_row_ranges(const RowRanges& r, Fn&& fn) {
  std::vector<std::exception_ptr> errors(r.parts);
  auto run = [&](size_t p) {
    try {
      fn(p, r.begin(p), r.end(p));
    } catch (...) {
      errors[p] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(r.parts - 1);
  for (size_t p = 1; p < r.parts; ++p) {
    try {
      threads.emplace_back(run, p);
    } catch (const std::system_error&) {
      run(p);  // a thread the system refuses (a process limit): the part runs here (parts never wait
               // on each other), never a crash with the started threads unjoined
    }
  }
  run(0);
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

// Runs a and b, on two threads when `parallel` (stages that touch disjoint rows or fields), else
// one after the other. a's exception wins over b's, as when they run in order.
template <typename A, typename B>
void run_both(bool parallel, A&& a, B&& b) {
  if (!parallel) {
    a();
    b();
    return;
  }
  std::exception_ptr error_b;
  auto run_b = [&] {
    try {
      b();
    } catch (...) {
      error_b = std::current_exception();
    }
  };
  std::thread t;
  try {
    t = std::thread(run_b);
  } catch (const std::system_error&) {  // refused (a process limit): b runs here, after a
  }
  std::exception_ptr error_a;
  try {
    a();
  } catch (...) {
    error_a = std::current_exception();
  }
  if (t.joinable())
    t.join();
  else
    run_b();
  if (error_a) std::rethrow_exception(error_a);
  if (error_b) std::rethrow_exception(error_b);
}

// sort_runs across threads: each range of `v` sorted on its own, then neighbouring ranges merged,
// a round of merges at once, until one is left (the last merge is one thread's). Where operator<
// is a total order the result is sort_runs' (std::sort's): a sorted permutation is unique.
template <typename T>
void sort_runs_parallel(std::vector<T>& v, const RowRanges& r) {
  for_row_ranges(r, [&](size_t, size_t begin, size_t end) { sort_runs(v.data() + begin, v.data() + end); });
  std::vector<size_t> bounds;  // starts of the sorted ranges, then v.size()
  for (size_t p = 0; p < r.parts; ++p) bounds.push_back(r.begin(p));
  bounds.push_back(v.size());
  while (bounds.size() > 2) {
    const size_t merges = (bounds.size() - 1) / 2;
    for_row_ranges(RowRanges{merges, merges}, [&](size_t m, size_t, size_t) {
      std::vector<T> buf;
      merge_neighbours(v.data() + bounds[2 * m], v.data() + bounds[2 * m + 1], v.data() + bounds[2 * m + 2],
                       std::less<>{}, buf);
    });
    std::vector<size_t> next;
    for (size_t k = 0; k < bounds.size(); k += 2) next.push_back(bounds[k]);
    if (next.back() != v.size()) next.push_back(v.size());
    bounds.swap(next);
  }
}

// The per-range vectors of a pass joined in range order.
template <typename T>
std::vector<T> join_parts(std::vector<std::vector<T>>& parts) {
  if (parts.size() == 1) return std::move(parts[0]);
  size_t n = 0;
  for (const auto& p : parts) n += p.size();
  std::vector<T> out;
  out.reserve(n);
  for (auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

}  // namespace tlsql
