//===- SlidingWindowTests.cpp - Causal attention in a sliding window ------===//
//
// sdpa(..., is_causal = true, window = W): the query at position p sees the
// keys p - W < j <= p (Gemma's and Mistral's local layers). Run by the CPU
// flash kernel at several shapes, odd head dims, windows smaller and larger
// than a key block, queries placed in a cache by query_offset (different per
// sequence), against a float64 reference on the same inputs. Cache rows no
// query may see hold NaN, so a kernel that read one would show.
//
//===----------------------------------------------------------------------===//
#include "Harness.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

using namespace e2e;

namespace {
/// softmax(q kᵀ scale) v over the window, for q [B, H, Sq, D] at positions
/// past[b] + i and k, v [B, H, Sk, D].
std::vector<double> reference(const std::vector<float> &q,
                              const std::vector<float> &k,
                              const std::vector<float> &v, int64_t batch,
                              int64_t heads, int64_t sq, int64_t sk, int64_t d,
                              const std::vector<int64_t> &past, int64_t window,
                              double scale) {
  std::vector<double> out(size_t(batch * heads * sq * d), 0.0);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < sq; ++i) {
        int64_t pos = past[size_t(b)] + i;
        int64_t first = std::max<int64_t>(0, pos - window + 1);
        int64_t last = std::min(pos, sk - 1);
        const float *qi = &q[size_t(((b * heads + h) * sq + i) * d)];
        std::vector<double> s;
        double max = -std::numeric_limits<double>::infinity();
        for (int64_t j = first; j <= last; ++j) {
          const float *kj = &k[size_t(((b * heads + h) * sk + j) * d)];
          double dot = 0;
          for (int64_t c = 0; c < d; ++c)
            dot += double(qi[c]) * double(kj[c]);
          s.push_back(dot * scale);
          max = std::max(max, s.back());
        }
        double sum = 0;
        for (double &x : s)
          sum += (x = std::exp(x - max));
        double *o = &out[size_t(((b * heads + h) * sq + i) * d)];
        for (int64_t j = first; j <= last; ++j) {
          const float *vj = &v[size_t(((b * heads + h) * sk + j) * d)];
          for (int64_t c = 0; c < d; ++c)
            o[c] += s[size_t(j - first)] / sum * double(vj[c]);
        }
      }
  return out;
}

struct Shape {
  int64_t batch, heads, sq, d, window;
  std::vector<int64_t> past;
};
} // namespace

TEST_CASE("sdpa with a sliding window matches float64", "[attention]") {
  const Shape shapes[] = {
      {1, 1, 9, 8, 1, {0}},        // each query sees itself only
      {2, 2, 7, 12, 4, {0, 0}},    // a prefill, as Gemma 3's local layers
      {1, 3, 37, 7, 5, {0}},       // odd head dim, several query blocks
      {2, 1, 1, 16, 4, {5, 40}},   // decode steps at different positions
      {2, 2, 5, 12, 16, {3, 70}},  // a window wider than a key block
      {1, 2, 70, 16, 100, {0}},    // a window longer than the sequence
      {3, 1, 3, 9, 33, {0, 1, 90}} // one sequence far past the window
  };
  for (const Shape &s : shapes) {
    int64_t maxPast = *std::max_element(s.past.begin(), s.past.end());
    int64_t sk = maxPast + s.sq + 2; // rows past every query: unread
    DYNAMIC_SECTION("B " << s.batch << " H " << s.heads << " Sq " << s.sq
                         << " D " << s.d << " window " << s.window << " past "
                         << s.past[0] << "..") {
      std::string source =
          "model w\ninput q: f32[batch, " + std::to_string(s.heads) +
          ", seq, " + std::to_string(s.d) + "]\ninput k: f32[batch, " +
          std::to_string(s.heads) + ", keys, " + std::to_string(s.d) +
          "]\ninput v: f32[batch, " + std::to_string(s.heads) + ", keys, " +
          std::to_string(s.d) +
          "]\ninput past: i64[batch]\n"
          "y = sdpa(q, k, v, is_causal = true, query_offset = past, window = " +
          std::to_string(s.window) + ")\noutput y\n";
      std::shared_ptr<Model> model = Model::build(source);
      Random rng(uint32_t(s.sq * 100 + s.window));
      std::vector<int64_t> qShape = {s.batch, s.heads, s.sq, s.d},
                           kShape = {s.batch, s.heads, sk, s.d};
      std::vector<float> q = rng.uniform(elementCount(qShape), -2, 2);
      std::vector<float> k = rng.uniform(elementCount(kShape), -2, 2);
      std::vector<float> v = rng.uniform(elementCount(kShape));
      // NaN in every row past a sequence's last query: never to be read.
      for (int64_t b = 0; b < s.batch; ++b)
        for (int64_t h = 0; h < s.heads; ++h)
          for (int64_t j = s.past[size_t(b)] + s.sq; j < sk; ++j)
            for (int64_t c = 0; c < s.d; ++c) {
              size_t at = size_t(((b * s.heads + h) * sk + j) * s.d + c);
              k[at] = v[at] = std::nanf("");
            }
      RunResult r = model->runOk(
          {HostTensor::f32(qShape, q), HostTensor::f32(kShape, k),
           HostTensor::f32(kShape, v), HostTensor::i64({s.batch}, s.past)});
      std::vector<double> want =
          reference(q, k, v, s.batch, s.heads, s.sq, sk, s.d, s.past, s.window,
                    1.0 / std::sqrt(double(s.d)));
      Comparison c = allClose(r["y"].toDoubles(), want, 1e-5, 1e-5);
      INFO(c.message);
      CHECK(c.ok);
    }
  }
}

TEST_CASE("sdpa's window is checked where it is written", "[attention]") {
  auto error = [](const std::string &call) {
    std::string source = "model w\ninput q: f32[batch, 2, seq, 8]\n"
                         "y = " +
                         call + "\noutput y\n";
    try {
      Model::build(source);
    } catch (const std::runtime_error &e) {
      return std::string(e.what());
    }
    return std::string("compiled");
  };
  CHECK_THAT(error("sdpa(q, q, q, window = 4)"),
             Catch::Contains("sdpa: window is a causal sliding window; it "
                             "needs is_causal = true"));
  CHECK_THAT(error("sdpa(q, q, q, is_causal = true, window = 0)"),
             Catch::Contains("sdpa: window must be at least 1, got 0"));
  CHECK_THAT(error("sdpa(q, q, q, is_causal = true, window = 2.5)"),
             Catch::Contains("'window' must be an integer"));
}
