//===- LayerTests.cpp - Single layers against the f64 reference -----------===//
//
// embedding, positional_encoding, broadcasting '+', concat, linear, matmul
// with batch broadcasting, transpose, scaling and softmax along any dim, with
// symbolic dims run at several sizes from one compiled library.
//
//===----------------------------------------------------------------------===//
#include "Fixture.h"
#include "Harness.h"
#include "Reference.h"
#include "ReferenceLayers.h"

#include <catch2/catch.hpp>

#include "tfm/safetensors.h"

#include <cmath>
#include <cstring>
#include <fstream>

using namespace e2e;
using ref::Array;

namespace {
/// `seq` ids in [0, num) that include 0 and num - 1 (when seq allows).
std::vector<int64_t> tokenIds(Random &rng, int64_t seq, int64_t num) {
  std::vector<int64_t> ids = rng.ids(seq, 0, num - 1);
  if (seq >= 1)
    ids[0] = num - 1;
  if (seq >= 2)
    ids[size_t(seq - 1)] = 0;
  return ids;
}

/// The sinusoidal argument p * w is formed in float32 (as PyTorch's recipe
/// does), so its rounding error, and that of sin/cos, grows with the
/// position p: allow 4 float32 ulps of p on top of the usual atol.
std::vector<double> positionSlack(int64_t rowsBefore, int64_t seq,
                                  int64_t dim) {
  std::vector<double> slack;
  for (int64_t b = 0; b < rowsBefore; ++b)
    for (int64_t p = 0; p < seq; ++p)
      for (int64_t j = 0; j < dim; ++j)
        slack.push_back(4.0 * double(p) * std::ldexp(1.0, -24));
  return slack;
}
} // namespace

//===----------------------------------------------------------------------===//
// embedding + positional_encoding
//===----------------------------------------------------------------------===//

TEST_CASE("embedding plus positional_encoding", "[layers]") {
  static const Fixture fx = [] {
    Random rng(3001);
    Weights w;
    w["E"] = rng.weight({11, 16});
    return makeFixture(R"(
model embed_pe
input ids: i64[seq]
e = embedding(ids, weight = "E")
pe = positional_encoding(e)
y = e + pe
output y, e, pe
)",
                       w);
  }();
  for (int64_t seq : {1, 3, 17, 1031}) {
    DYNAMIC_SECTION("seq " << seq) {
      Random rng(static_cast<uint32_t>(seq));
      std::vector<int64_t> ids = tokenIds(rng, seq, 11);
      RunResult r = fx.model->runOk({HostTensor::i64({seq}, ids)});
      Array e = ref::embedding({seq}, ids, fx.w("E"));
      Array pe = ref::positionalEncoding(seq, 16);
      std::vector<double> slack = positionSlack(1, seq, 16);
      // The gather is exact.
      E2E_CHECK_CLOSE(r["e"], e, 0.0, 0.0);
      E2E_CHECK_CLOSE(r["pe"], pe, 1e-4, 1e-5, &slack);
      E2E_CHECK_CLOSE(r["y"], ref::add(e, pe), 1e-4, 1e-5, &slack);
    }
  }
}

TEST_CASE("batched i32 embedding plus broadcast positional_encoding",
          "[layers]") {
  static const Fixture fx = [] {
    Random rng(3002);
    Weights w;
    w["tok.weight"] = rng.weight({7, 6});
    return makeFixture(R"(
model embed_pe_batched
input ids: i32[batch, seq]
e = embedding(ids, weight = "tok.weight")
y = e + positional_encoding(e)
output y
)",
                       w);
  }();
  const std::pair<int64_t, int64_t> shapes[] = {{1, 1}, {3, 5}, {2, 1031}};
  for (auto [batch, seq] : shapes) {
    DYNAMIC_SECTION("batch " << batch << " seq " << seq) {
      Random rng(static_cast<uint32_t>(batch * 17 + seq));
      std::vector<int64_t> ids = tokenIds(rng, batch * seq, 7);
      HostTensor in = HostTensor::i32(
          {batch, seq}, std::vector<int32_t>(ids.begin(), ids.end()));
      RunResult r = fx.model->runOk({in});
      Array y = ref::add(ref::embedding({batch, seq}, ids, fx.w("tok.weight")),
                         ref::positionalEncoding(seq, 6));
      std::vector<double> slack = positionSlack(batch, seq, 6);
      E2E_CHECK_CLOSE(r["y"], y, 1e-4, 1e-5, &slack);
    }
  }
}

//===----------------------------------------------------------------------===//
// Broadcasting '+', concat
//===----------------------------------------------------------------------===//

TEST_CASE("add with broadcasting", "[layers]") {
  static const Fixture fx = [] {
    Random rng(3003);
    Weights w;
    w["bias"] = rng.weight({8});
    return makeFixture(R"(
model add_broadcast
input a: f32[batch, seq, 8]
input b: f32[seq, 8]
input c: f32[batch, 1, 8]
input r: f32[8]
input col: f32[seq, 1]
input row: f32[1, seq]
ab = a + b
ac = a + c
ar = r + a
aw = a + weight("bias")
cb = c + b
aa = add(a, a)
outer = col + row
output ab, ac, ar, aw, cb, aa, outer
)",
                       w);
  }();
  const std::pair<int64_t, int64_t> shapes[] = {
      {1, 1}, {2, 3}, {3, 17}, {2, 1031}};
  for (auto [batch, seq] : shapes) {
    DYNAMIC_SECTION("batch " << batch << " seq " << seq) {
      Random rng(static_cast<uint32_t>(batch * 19 + seq));
      HostTensor a = rng.f32({batch, seq, 8}), b = rng.f32({seq, 8}),
                 c = rng.f32({batch, 1, 8}), rr = rng.f32({8}),
                 col = rng.f32({seq, 1}), row = rng.f32({1, seq});
      RunResult r = fx.model->runOk({a, b, c, rr, col, row});
      Array A = ref::fromTensor(a), B = ref::fromTensor(b),
            C = ref::fromTensor(c), R = ref::fromTensor(rr);
      E2E_CHECK_CLOSE(r["ab"], ref::add(A, B));
      E2E_CHECK_CLOSE(r["ac"], ref::add(A, C));
      E2E_CHECK_CLOSE(r["ar"], ref::add(R, A));
      E2E_CHECK_CLOSE(r["aw"], ref::add(A, fx.w("bias")));
      E2E_CHECK_CLOSE(r["cb"], ref::add(C, B));
      E2E_CHECK_CLOSE(r["aa"], ref::add(A, A));
      E2E_CHECK_CLOSE(r["outer"],
                      ref::add(ref::fromTensor(col), ref::fromTensor(row)));
    }
  }
}

TEST_CASE("concat along static dims", "[layers]") {
  static const Fixture fx = makeFixture(R"(
model concat_ops
input a: f32[seq, 3]
input b: f32[seq, 5]
input c: f32[2, seq, 4]
x = concat(a, b, dim = -1)
y = concat(a, b, a, dim = 1)
z = concat(c, c, dim = 0)
output x, y, z
)",
                                        {});
  for (int64_t seq : {1, 3, 17, 1031}) {
    DYNAMIC_SECTION("seq " << seq) {
      Random rng(static_cast<uint32_t>(seq * 3));
      HostTensor a = rng.f32({seq, 3}), b = rng.f32({seq, 5}),
                 c = rng.f32({2, seq, 4});
      RunResult r = fx.model->runOk({a, b, c});
      Array A = ref::fromTensor(a), B = ref::fromTensor(b),
            C = ref::fromTensor(c);
      E2E_CHECK_CLOSE(r["x"], ref::concat({A, B}, -1), 0.0, 0.0);
      E2E_CHECK_CLOSE(r["y"], ref::concat({A, B, A}, 1), 0.0, 0.0);
      E2E_CHECK_CLOSE(r["z"], ref::concat({C, C}, 0), 0.0, 0.0);
    }
  }
}

//===----------------------------------------------------------------------===//
// linear, matmul
//===----------------------------------------------------------------------===//

TEST_CASE("linear with and without bias, rank 1 to 3", "[layers]") {
  static const Fixture fx = [] {
    Random rng(3004);
    Weights w;
    w["W"] = rng.weight({7, 16});
    w["b"] = rng.weight({7});
    return makeFixture(R"(
model linear_ops
input x: f32[batch, seq, 16]
input u: f32[16]
input m: f32[seq, 16]
y = linear(x, weight = "W", bias = "b")
n = linear(x, weight = "W")
v = linear(u, weight = "W", bias = "b")
mm = linear(m, "W", "b")
output y, n, v, mm
)",
                       w);
  }();
  const std::pair<int64_t, int64_t> shapes[] = {
      {1, 1}, {2, 3}, {3, 17}, {1, 1031}};
  for (auto [batch, seq] : shapes) {
    DYNAMIC_SECTION("batch " << batch << " seq " << seq) {
      Random rng(static_cast<uint32_t>(batch * 23 + seq));
      HostTensor x = rng.f32({batch, seq, 16}), u = rng.f32({16}),
                 m = rng.f32({seq, 16});
      RunResult r = fx.model->runOk({x, u, m});
      Array W = fx.w("W"), b = fx.w("b");
      E2E_CHECK_CLOSE(r["y"], ref::linear(ref::fromTensor(x), W, &b));
      E2E_CHECK_CLOSE(r["n"], ref::linear(ref::fromTensor(x), W));
      E2E_CHECK_CLOSE(r["v"], ref::linear(ref::fromTensor(u), W, &b));
      E2E_CHECK_CLOSE(r["mm"], ref::linear(ref::fromTensor(m), W, &b));
    }
  }
}

// A half-precision checkpoint: F16 and BF16 weights are computed in f32,
// widened exactly at compile time. The values are chosen exact in their
// half format, so the f64 reference sees the same weights.
TEST_CASE("linear over F16 and BF16 checkpoint weights", "[layers]") {
  Random rng(3011);
  const int64_t out = 9, in = 20;
  std::vector<_Float16> wHalf;
  std::vector<uint16_t> bBrain;
  std::vector<float> wValues, bValues;
  for (float v : rng.uniform(out * in)) {
    float exact = std::round(v * 256.0f) / 256.0f; // 10 significant bits
    wHalf.push_back(static_cast<_Float16>(exact));
    wValues.push_back(exact);
  }
  for (float v : rng.uniform(out)) {
    float exact = std::round(v * 64.0f) / 64.0f; // 8 significant bits
    uint32_t bits;
    std::memcpy(&bits, &exact, sizeof(bits));
    bBrain.push_back(static_cast<uint16_t>(bits >> 16));
    bValues.push_back(exact);
  }
  std::string dir = makeTempDir();
  TempDirGuard guard(dir);
  std::string error;
  REQUIRE(tfm::writeSafeTensors(dir + "/half.safetensors",
                                {{"W", "F16", {out, in}, wHalf.data()},
                                 {"b", "BF16", {out}, bBrain.data()}},
                                error));
  {
    std::ofstream model(dir + "/half.tfm");
    model << "model half_weights\n"
          << "input x: f32[seq, " << in << "]\n"
          << "y = gelu(linear(x, weight = \"W\", bias = \"b\"))\n"
          << "output y\n";
  }
  std::shared_ptr<Model> model =
      Model::buildFiles(dir + "/half.tfm", dir + "/half.safetensors");
  Array W = ref::fromFloats({out, in}, wValues);
  Array b = ref::fromFloats({out}, bValues);
  for (int64_t seq : {1, 7, 130}) {
    DYNAMIC_SECTION("seq " << seq) {
      HostTensor x = rng.f32({seq, in});
      RunResult r = model->runOk({x});
      E2E_CHECK_CLOSE(r["y"],
                      ref::gelu(ref::linear(ref::fromTensor(x), W, &b)));
    }
  }
}

TEST_CASE("matmul with batch broadcasting", "[layers]") {
  static const Fixture fx = [] {
    Random rng(3005);
    Weights w;
    w["W"] = rng.weight({6, 5});
    return makeFixture(R"(
model matmul_ops
input a: f32[batch, seq, 6]
input m: f32[6, 4]
input b: f32[batch, 6, seq]
input c: f32[seq, 6]
input d: f32[2, batch, seq, 6]
input e: f32[1, seq, 6]
am = a @ m
aw = a @ weight("W")
ab = a @ b
cb = c @ b
dm = d @ m
db = matmul(d, b)
eb = e @ b
output am, aw, ab, cb, dm, db, eb
)",
                       w);
  }();
  const std::pair<int64_t, int64_t> shapes[] = {
      {1, 1}, {2, 3}, {3, 17}, {1, 1031}};
  for (auto [batch, seq] : shapes) {
    DYNAMIC_SECTION("batch " << batch << " seq " << seq) {
      Random rng(static_cast<uint32_t>(batch * 29 + seq));
      HostTensor a = rng.f32({batch, seq, 6}), m = rng.f32({6, 4}),
                 b = rng.f32({batch, 6, seq}), c = rng.f32({seq, 6}),
                 d = rng.f32({2, batch, seq, 6}), e = rng.f32({1, seq, 6});
      RunResult r = fx.model->runOk({a, m, b, c, d, e});
      Array A = ref::fromTensor(a), M = ref::fromTensor(m),
            B = ref::fromTensor(b), C = ref::fromTensor(c),
            D = ref::fromTensor(d), E = ref::fromTensor(e);
      E2E_CHECK_CLOSE(r["am"], ref::matmul(A, M));
      E2E_CHECK_CLOSE(r["aw"], ref::matmul(A, fx.w("W")));
      E2E_CHECK_CLOSE(r["ab"], ref::matmul(A, B));
      E2E_CHECK_CLOSE(r["cb"], ref::matmul(C, B));
      E2E_CHECK_CLOSE(r["dm"], ref::matmul(D, M));
      E2E_CHECK_CLOSE(r["db"], ref::matmul(D, B));
      E2E_CHECK_CLOSE(r["eb"], ref::matmul(E, B));
    }
  }
}

//===----------------------------------------------------------------------===//
// transpose, scale, softmax along any dim
//===----------------------------------------------------------------------===//

TEST_CASE("transpose, scaling and softmax along every dim", "[layers]") {
  static const Fixture fx = makeFixture(R"(
model shape_ops
input x: f32[batch, seq, 6]
t = transpose(x, 0, 2)
u = transpose(x, -1, -2)
s = x * 2.5
r = 3 * x
d = x / 4
n = x * -0.5 / 2
p = softmax(x, dim = 1)
q = softmax(x, dim = 0)
l = softmax(x)
output t, u, s, r, d, n, p, q, l
)",
                                        {});
  const std::pair<int64_t, int64_t> shapes[] = {
      {1, 1}, {2, 3}, {3, 17}, {2, 1031}};
  for (auto [batch, seq] : shapes) {
    DYNAMIC_SECTION("batch " << batch << " seq " << seq) {
      Random rng(static_cast<uint32_t>(batch * 37 + seq));
      HostTensor x = rng.f32({batch, seq, 6}, -3.0f, 3.0f);
      RunResult r = fx.model->runOk({x});
      Array X = ref::fromTensor(x);
      E2E_CHECK_CLOSE(r["t"], ref::transpose(X, 0, 2), 0.0, 0.0);
      E2E_CHECK_CLOSE(r["u"], ref::transpose(X, -1, -2), 0.0, 0.0);
      E2E_CHECK_CLOSE(r["s"], ref::scale(X, 2.5));
      E2E_CHECK_CLOSE(r["r"], ref::scale(X, 3));
      E2E_CHECK_CLOSE(r["d"], ref::scale(X, 0.25));
      E2E_CHECK_CLOSE(r["n"], ref::scale(X, -0.25));
      E2E_CHECK_CLOSE(r["p"], ref::softmax(X, 1));
      E2E_CHECK_CLOSE(r["q"], ref::softmax(X, 0));
      E2E_CHECK_CLOSE(r["l"], ref::softmax(X, -1));
    }
  }
}

//===----------------------------------------------------------------------===//
// Artifacts and outputs
//===----------------------------------------------------------------------===//

TEST_CASE("outputs that alias inputs, each other or weights", "[layers]") {
  static const Fixture fx = [] {
    Random rng(3006);
    Weights w;
    w["W"] = rng.weight({3, 4});
    return makeFixture(R"(
model aliasing
input x: f32[seq, 4]
y = x
z = y
t = transpose(x)
w = weight("W")
wt = transpose(w)
output y, z, t, w, wt
)",
                       w);
  }();
  for (int64_t seq : {1, 5}) {
    DYNAMIC_SECTION("seq " << seq) {
      Random rng(static_cast<uint32_t>(seq));
      HostTensor x = rng.f32({seq, 4});
      RunResult r = fx.model->runOk({x});
      Array X = ref::fromTensor(x), W = fx.w("W");
      E2E_CHECK_CLOSE(r["y"], X, 0.0, 0.0);
      E2E_CHECK_CLOSE(r["z"], X, 0.0, 0.0);
      E2E_CHECK_CLOSE(r["t"], ref::transpose(X, 0, 1), 0.0, 0.0);
      E2E_CHECK_CLOSE(r["w"], W, 0.0, 0.0);
      E2E_CHECK_CLOSE(r["wt"], ref::transpose(W, 0, 1), 0.0, 0.0);
    }
  }
}

TEST_CASE("two artifacts of the same model name load side by side",
          "[layers]") {
  const char *source = R"(
model same_name
input x: f32[seq, 4]
y = linear(x, weight = "W")
output y
)";
  Random rng(3007);
  Weights w1, w2;
  w1["W"] = rng.weight({2, 4});
  w2["W"] = rng.weight({2, 4});
  std::shared_ptr<Model> m1 = Model::build(source, w1);
  std::shared_ptr<Model> m2 = Model::build(source, w2);
  HostTensor x = rng.f32({3, 4});
  Array X = ref::fromTensor(x);
  E2E_CHECK_CLOSE(m1->runOk({x})["y"],
                  ref::linear(X, ref::fromWeight(w1["W"])));
  E2E_CHECK_CLOSE(m2->runOk({x})["y"],
                  ref::linear(X, ref::fromWeight(w2["W"])));
  m1.reset(); // unloading one must not disturb the other
  E2E_CHECK_CLOSE(m2->runOk({x})["y"],
                  ref::linear(X, ref::fromWeight(w2["W"])));
}

TEST_CASE("float64 models", "[layers]") {
  static const Fixture fx = makeFixture(R"(
model f64_ops
input q: f64[seq, 4]
input k: f64[seq, 4]
y = sdpa(q, k, k)
p = softmax(q @ transpose(k) / sqrt(3), dim = -1)
s = q + k
output y, p, s
)",
                                        {});
  for (int64_t seq : {1, 17}) {
    DYNAMIC_SECTION("seq " << seq) {
      Random rng(static_cast<uint32_t>(seq));
      std::vector<float> qv = rng.uniform(seq * 4), kv = rng.uniform(seq * 4);
      HostTensor q =
          HostTensor::f64({seq, 4}, std::vector<double>(qv.begin(), qv.end()));
      HostTensor k =
          HostTensor::f64({seq, 4}, std::vector<double>(kv.begin(), kv.end()));
      RunResult r = fx.model->runOk({q, k});
      CHECK(r["y"].dtype == TFM_DTYPE_F64);
      Array Q = ref::fromTensor(q), K = ref::fromTensor(k);
      E2E_CHECK_CLOSE(r["y"], ref::sdpa(Q, K, K), 1e-12, 1e-13);
      E2E_CHECK_CLOSE(
          r["p"],
          ref::softmax(ref::scale(ref::matmul(Q, ref::transpose(K, 0, 1)),
                                  1 / std::sqrt(3.0)),
                       -1),
          1e-12, 1e-13);
      E2E_CHECK_CLOSE(r["s"], ref::add(Q, K), 0.0, 0.0);
    }
  }
}

TEST_CASE("float64 weights", "[layers]") {
  static const Fixture fx = [] {
    Random rng(3012);
    Weights w;
    for (auto [name, shape] :
         {std::pair<const char *, std::vector<int64_t>>{"W", {3, 4}},
          {"b", {3}},
          {"E", {6, 4}},
          {"mha.in_proj_weight", {12, 4}},
          {"mha.in_proj_bias", {12}},
          {"mha.out_proj.weight", {4, 4}},
          {"mha.out_proj.bias", {4}}}) {
      std::vector<float> v = rng.uniform(elementCount(shape));
      Weight weight;
      weight.shape = shape;
      for (float f : v) // values that float32 could not hold
        weight.data64.push_back(double(f) + 1e-10 * double(f));
      w[name] = weight;
    }
    return makeFixture(R"(
model f64_weights
input x: f64[seq, 4]
input ids: i64[seq]
y = linear(x, weight = "W", bias = "b")
e = embedding(ids, weight = "E") + x
a = multi_head_attention(x, x, x, heads = 2, weights = "mha")
output y, e, a
)",
                       w);
  }();
  for (int64_t seq : {1, 17}) {
    DYNAMIC_SECTION("seq " << seq) {
      Random rng(static_cast<uint32_t>(seq));
      std::vector<float> xv = rng.uniform(seq * 4);
      HostTensor x =
          HostTensor::f64({seq, 4}, std::vector<double>(xv.begin(), xv.end()));
      std::vector<int64_t> ids = tokenIds(rng, seq, 6);
      RunResult r = fx.model->runOk({x, HostTensor::i64({seq}, ids)});
      Array X = ref::fromTensor(x), b = fx.w("b");
      E2E_CHECK_CLOSE(r["y"], ref::linear(X, fx.w("W"), &b), 1e-12, 1e-13);
      E2E_CHECK_CLOSE(
          r["e"], ref::add(ref::embedding({seq}, ids, fx.w("E")), X), 0.0, 0.0);
      Array inB = fx.w("mha.in_proj_bias"), outB = fx.w("mha.out_proj.bias");
      ref::MhaWeights mw = ref::MhaWeights::packed(
          fx.w("mha.in_proj_weight"), &inB, fx.w("mha.out_proj.weight"), &outB);
      E2E_CHECK_CLOSE(r["a"], ref::multiHeadAttention(X, X, X, 2, mw), 1e-12,
                      1e-13);
    }
  }
}

TEST_CASE("zero-length sequences", "[layers]") {
  static const Fixture fx = [] {
    Random rng(3008);
    Weights w;
    w["W"] = rng.weight({5, 4});
    w["b"] = rng.weight({5});
    return makeFixture(R"(
model empty_seq
input x: f32[seq, 4]
input k: f32[mseq, 4]
y = linear(x, weight = "W", bias = "b")
s = softmax(y, dim = -1)
a = sdpa(x, k, k)
output y, s, a
)",
                       w);
  }();
  const std::pair<int64_t, int64_t> shapes[] = {{0, 2}, {3, 0}, {0, 0}};
  for (auto [seq, mseq] : shapes) {
    DYNAMIC_SECTION("seq " << seq << " mseq " << mseq) {
      Random rng(static_cast<uint32_t>(seq * 10 + mseq));
      RunResult r = fx.model->runOk({rng.f32({seq, 4}), rng.f32({mseq, 4})});
      CHECK(r["y"].shape == std::vector<int64_t>{seq, 5});
      CHECK(r["s"].shape == std::vector<int64_t>{seq, 5});
      // No keys: every query attends to nothing, and P V sums no terms.
      E2E_CHECK_CLOSE(r["a"], Array({seq, 4}), 0.0, 0.0);
    }
  }
}

//===----------------------------------------------------------------------===//
// The syntax of docs/language.md
//===----------------------------------------------------------------------===//

TEST_CASE("the documented expression syntax", "[language]") {
  // Comments, line continuation inside brackets and after '\', numbers as
  // constant expressions, and the function-call spellings of the operators.
  static const Fixture fx = [] {
    Random rng(3009);
    Weights w;
    w["W"] = rng.weight({3, 4});
    return makeFixture(R"(
# a comment line
model syntax   # a trailing comment
input x: f32[seq,
             4]
input m: f32[4, 3]

a = scale(x, 1 / sqrt(16))          # 0.25
b = x * -1 + x / 2 * 2e0             # -x + x
c = matmul(x, m) + \
    linear(x, weight = weight("W"))
d = add(x, positional_encoding(x, kind = "sinusoidal"))
e = softmax(x, -1)
output a, b, c, d, e
)",
                       w);
  }();
  Random rng(3010);
  HostTensor x = rng.f32({5, 4}), m = rng.f32({4, 3});
  RunResult r = fx.model->runOk({x, m});
  Array X = ref::fromTensor(x), M = ref::fromTensor(m);
  E2E_CHECK_CLOSE(r["a"], ref::scale(X, 0.25));
  E2E_CHECK_CLOSE(r["b"], ref::add(ref::scale(X, -1), X));
  E2E_CHECK_CLOSE(r["c"],
                  ref::add(ref::matmul(X, M), ref::linear(X, fx.w("W"))));
  E2E_CHECK_CLOSE(r["d"], ref::add(X, ref::positionalEncoding(5, 4)));
  E2E_CHECK_CLOSE(r["e"], ref::softmax(X, -1));
}

TEST_CASE("transpose takes the keyword arguments docs/language.md names",
          "[language]") {
  // docs/language.md: `transpose(x, dim0 = -2, dim1 = -1)`.
  std::shared_ptr<Model> m = Model::build(R"(
model transpose_keywords
input x: f32[seq, 3, 2]
y = transpose(x, dim0 = 0, dim1 = 2)
z = transpose(x, dim0 = 0)
output y, z
)");
  Random rng(3011);
  HostTensor x = rng.f32({4, 3, 2});
  RunResult r = m->runOk({x});
  Array X = ref::fromTensor(x);
  E2E_CHECK_CLOSE(r["y"], ref::transpose(X, 0, 2), 0.0, 0.0);
  E2E_CHECK_CLOSE(r["z"], ref::transpose(X, 0, -1), 0.0, 0.0);
}

TEST_CASE("a chain of 2000 elementwise statements compiles in seconds",
          "[layers]") {
  // Issue 8, D8: one-shot bufferization took ~58 s at 1000 ops (about
  // cubic); elementwise fusion before it makes this chain one loop. The
  // ctest timeout is what fails if compile time goes super-linear again.
  std::string source = "model chain\ninput x: f32[seq, 4]\na0 = relu(x)\n";
  for (int i = 1; i < 2000; ++i)
    source += "a" + std::to_string(i) + " = " +
              (i % 2 ? "a" + std::to_string(i - 1) + " * 1.0005\n"
                     : "relu(a" + std::to_string(i - 1) + ")\n");
  source += "output a1999\n";
  std::shared_ptr<Model> model = Model::build(source);
  Random rng(2000);
  HostTensor x = rng.f32({3, 4});
  RunResult r = model->runOk({x});
  Array expected = ref::fromTensor(x);
  for (double &v : expected.data)
    v = std::max(v, 0.0) * std::pow(1.0005, 1000);
  // 1000 float32 roundings in a row: a relative error of ~1000 ulp.
  E2E_CHECK_CLOSE(r["a1999"], expected, 1e-4, 1e-6);
}
