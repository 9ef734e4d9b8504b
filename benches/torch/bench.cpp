// libtorch side of torchcore's benchmark suite (`cargo xtask bench
// --vs-torch` builds and runs it; see docs/benchmarks.md).
//
// Times the same cases as benches/benches/shape.rs, one thread
// (at::set_num_threads(1)), twice: with the normal API, and with every
// input built and every op run under c10::InferenceMode, PyTorch's fastest
// supported path. Each result is returned from the timed lambda and
// destroyed inside the timed loop, like criterion does on the Rust side.
//
// Timing: a warm-up of a tenth of the case's budget, then samples of enough
// calls to last about 2 ms (at least one call), until the budget is spent
// (at least 11 samples); the median over samples of the mean time per call
// is reported.
//
// Output, one line per case and mode:
//   torch <case> <normal|inference> <median ns> <bytes>
// where <bytes> is the output size of a copy case (0 for metadata cases);
// the report turns it into GB/s. Usage: bench [SECONDS_PER_CASE] [FILTER]
// (FILTER is a substring of the case name).

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>
#include <torch/headeronly/version.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double g_budget_s = 1.0;
std::string g_filter;

// Keeps the compiler from discarding a value.
template <class T>
inline void escape(T const& v) {
  asm volatile("" : : "r"(&v) : "memory");
}

double now_ns() {
  return std::chrono::duration<double, std::nano>(Clock::now().time_since_epoch()).count();
}

template <class F>
double time_sample(F& f, int64_t iters) {
  double t0 = now_ns();
  for (int64_t i = 0; i < iters; ++i) {
    auto r = f();
    escape(r);
  }
  return (now_ns() - t0) / static_cast<double>(iters);
}

// Median ns per call of `f` (see the file comment).
template <class F>
double median_ns(F f, double budget_s) {
  const double budget_ns = budget_s * 1e9;
  // Warm-up, which also calibrates the calls per sample.
  double start = now_ns();
  int64_t calls = 0;
  while (now_ns() - start < budget_ns / 10 || calls < 2) {
    auto r = f();
    escape(r);
    ++calls;
  }
  double per_call = (now_ns() - start) / static_cast<double>(calls);
  int64_t iters = std::max<int64_t>(1, static_cast<int64_t>(2e6 / std::max(per_call, 1.0)));
  std::vector<double> samples;
  start = now_ns();
  while (now_ns() - start < budget_ns || samples.size() < 11) {
    samples.push_back(time_sample(f, iters));
  }
  std::sort(samples.begin(), samples.end());
  size_t n = samples.size();
  return n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
}

bool selected(const std::string& name) {
  return g_filter.empty() || name.find(g_filter) != std::string::npos;
}

template <class F>
void run(const char* mode, const std::string& name, uint64_t bytes, double budget_s, F f) {
  if (!selected(name)) return;
  double ns = median_ns(f, budget_s);
  std::printf("torch %s %s %.3f %llu\n", name.c_str(), mode, ns,
              static_cast<unsigned long long>(bytes));
  std::fflush(stdout);
}

at::Tensor arange(std::vector<int64_t> sizes) {
  int64_t n = 1;
  for (auto s : sizes) n *= s;
  return at::arange(n, at::kFloat).view(sizes);
}

// Every case once, in the current mode (inputs are built here, so under
// InferenceMode they are inference tensors).
void all_cases(const char* mode) {
  const double meta = g_budget_s, slow = 2 * g_budget_s;
  at::Tensor m = arange({1024, 1024});
  at::Tensor p4 = arange({8, 16, 32, 64});
  at::Tensor r = arange({64, 1024});
  at::Tensor e = arange({1, 64});
  at::Tensor x6 = arange({8, 16, 64}).transpose(0, 1);
  at::Tensor m9 = arange({1024, 1024});

  run(mode, "clone", 0, meta, [&] { at::Tensor c = m; return c; });
  run(mode, "view", 0, meta, [&] { return r.view({64, 32, 32}); });
  run(mode, "reshape", 0, meta, [&] { return r.reshape({64, 32, 32}); });
  run(mode, "reshape_nc", 0, meta, [&] { return x6.reshape({16, 8, 8, 8}); });
  run(mode, "narrow", 0, meta, [&] { return m.narrow(0, 16, 512); });
  run(mode, "select", 0, meta, [&] { return m.select(0, 5); });
  run(mode, "transpose", 0, meta, [&] { return m.transpose(0, 1); });
  run(mode, "permute", 0, meta, [&] { return p4.permute({0, 2, 1, 3}); });
  run(mode, "expand", 0, meta, [&] { return e.expand({512, 64}); });
  run(mode, "unsqueeze", 0, meta, [&] { return m.unsqueeze(0); });
  run(mode, "as_strided", 0, meta, [&] { return m.as_strided({1024, 1024}, {1, 1024}, 0); });
  run(mode, "chain4", 0, meta, [&] {
    return m.narrow(0, 0, 512).transpose(0, 1).unsqueeze(0).expand({4, 1024, 512});
  });
  run(mode, "fill_view", 0, meta, [&] {
    at::Tensor v = m9.narrow(1, 1, 2);
    v.fill_(0);
    return v;
  });

  run(mode, "empty_small", 0, meta, [&] { return at::empty({3, 4}, at::kFloat); });
  run(mode, "zeros_small", 0, meta, [&] { return at::zeros({3, 4}, at::kFloat); });
  run(mode, "empty_large", 0, meta, [&] { return at::empty({1024, 1024}, at::kFloat); });
  run(mode, "zeros_large", 0, meta, [&] { return at::zeros({1024, 1024}, at::kFloat); });
  // The scaling rows of `scale_empty_*` / `scale_zeros_*` (f32 elements).
  for (auto [label, n] : {std::pair<const char*, int64_t>{"4KiB", 1024},
                          {"1MiB", 1 << 18},
                          {"4MiB", 1 << 20},
                          {"64MiB", 1 << 24}}) {
    run(mode, std::string("scale_empty_") + label, n * 4, meta,
        [&] { return at::empty({n}, at::kFloat); });
    run(mode, std::string("scale_zeros_") + label, n * 4, meta,
        [&] { return at::zeros({n}, at::kFloat); });
  }

  {
    at::Tensor t = arange({4096, 4096}).t();
    run(mode, "contig_t4096", 4096ull * 4096 * 4, slow, [&] { return t.contiguous(); });
  }
  {
    at::Tensor t = m.t();
    run(mode, "contig_t1024", 1024ull * 1024 * 4, slow, [&] { return t.contiguous(); });
  }
  {
    at::Tensor t = p4.permute({0, 2, 1, 3});
    run(mode, "contig_perm4d", 8ull * 16 * 32 * 64 * 4, slow, [&] { return t.contiguous(); });
  }
  {
    at::Tensor t = arange({8, 528, 64}).narrow(1, 0, 512);
    run(mode, "contig_kv", 8ull * 512 * 64 * 4, slow, [&] { return t.contiguous(); });
  }
  {
    const int64_t n = 16 << 20;
    at::Tensor t = at::arange(n, at::kFloat);
    run(mode, "clone_64mib", n * 4, slow, [&] { return t.clone(); });
    std::vector<float> src(n), dst(n, 1.0f);
    for (int64_t i = 0; i < n; ++i) src[i] = static_cast<float>(i);
    run(mode, "memcpy_64mib", n * 4, slow, [&] {
      std::memcpy(dst.data(), src.data(), n * 4);
      return dst.data();
    });
  }

  // Scaling: view ops against rank, copies against size.
  for (int rank = 1; rank <= 8; ++rank) {
    at::Tensor t = at::zeros(std::vector<int64_t>(rank, 2), at::kFloat);
    std::vector<int64_t> order;
    for (int d = rank - 1; d >= 0; --d) order.push_back(d);
    std::string k = std::to_string(rank);
    run(mode, "scale_narrow/" + k, 0, meta, [&] { return t.narrow(0, 0, 1); });
    run(mode, "scale_permute/" + k, 0, meta, [&] { return t.permute(order); });
  }
  // Square matrices from 4 KiB (32 x 32) to 256 MiB (8192 x 8192).
  for (int64_t side = 32; side <= 8192; side *= 2) {
    const uint64_t bytes = static_cast<uint64_t>(side) * side * 4;
    std::string k = std::to_string(bytes);
    at::Tensor base = arange({side, side});
    at::Tensor tt = base.t();
    run(mode, "scale_contig_t/" + k, bytes, slow, [&] { return tt.contiguous(); });
    run(mode, "scale_clone/" + k, bytes, slow, [&] { return base.clone(); });
    std::vector<float> src(side * side, 2.0f), dst(side * side, 1.0f);
    run(mode, "scale_memcpy/" + k, bytes, slow, [&] {
      std::memcpy(dst.data(), src.data(), bytes);
      return dst.data();
    });
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) g_budget_s = std::atof(argv[1]);
  if (argc > 2) g_filter = argv[2];
  if (!(g_budget_s > 0)) g_budget_s = 1.0;
  at::set_num_threads(1);
  std::printf("torch-version %d.%d.%d\n", TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR,
              TORCH_VERSION_PATCH);
  std::printf("torch-threads %d\n", at::get_num_threads());
  std::fflush(stdout);
  all_cases("normal");
  {
    c10::InferenceMode guard;
    all_cases("inference");
  }
  return 0;
}
