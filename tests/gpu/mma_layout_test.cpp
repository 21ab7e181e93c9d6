//===- mma_layout_test.cpp - MmaLayout.h against the PTX ISA's tables -----===//
//
// The tensor-core GEMM cannot run on a machine without a GPU (its warp-wide
// ldmatrix and mma.sync have no serial form), so the index arithmetic it
// emits is checked here: the lane maps of MmaLayout.h, instantiated with
// integers, drive a model of ldmatrix.x4 and mma.sync.m16n8k16 written from
// the PTX ISA's descriptions ("ldmatrix", "Matrix Fragments for
// mma.m16n8k16 with floating point type"), over a warp tile laid out in
// shared memory as the kernel lays it out; the result must be A·B.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/LinalgToGPU/MmaLayout.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <random>
#include <utility>
#include <vector>

namespace mma = mlir::tfm::mma;

namespace {

using Pair = std::array<double, 2>;
/// A warp's registers of one ldmatrix.x4: [lane][register] pairs.
using Fragment = std::array<std::array<Pair, 4>, 32>;

/// A row-major shared tile of `rows` x `stride` halves.
struct Tile {
  int64_t stride;
  std::vector<double> data;
  double at(int64_t r, int64_t c) const { return data[r * stride + c]; }
};

/// ldmatrix.sync.aligned.m8n8.x4[.trans].b16, per the ISA: lanes 8q .. 8q+7
/// supply the addresses of rows 0..7 of matrix q (each row the 8 halves
/// there). Not transposed, lane l receives in register q elements
/// (l/4, 2(l%4)) and (l/4, 2(l%4)+1) of matrix q; transposed, elements
/// (2(l%4), l/4) and (2(l%4)+1, l/4).
Fragment ldmatrix(const Tile &tile, int64_t row0, int64_t col0,
                  int64_t (*row)(int64_t), int64_t (*col)(int64_t),
                  bool transpose = false) {
  std::array<std::pair<int64_t, int64_t>, 32> address;
  for (int64_t lane = 0; lane < 32; ++lane)
    address[lane] = {row0 + row(lane), col0 + col(lane)};
  Fragment out;
  for (int64_t lane = 0; lane < 32; ++lane)
    for (int64_t q = 0; q < 4; ++q) {
      auto element = [&](int64_t r, int64_t c) {
        if (transpose)
          std::swap(r, c);
        auto [tr, tc] = address[8 * q + r];
        return tile.at(tr, tc + c);
      };
      out[lane][q] = {element(lane / 4, 2 * (lane % 4)),
                      element(lane / 4, 2 * (lane % 4) + 1)};
    }
  return out;
}

/// mma.sync.aligned.m16n8k16.row.col.f32: the A, B and C fragments as the
/// ISA tabulates them (groupID = lane/4, threadID_in_group = lane%4):
///   A a_i: row groupID (+8 for a2, a3, a6, a7),
///          col 2 threadID_in_group + (i&1) (+8 for i >= 4);
///   B b_i: row (k) 2 threadID_in_group + (i&1) (+8 for i >= 2),
///          col (n) groupID;
///   C c_i: row groupID (+8 for i >= 2), col 2 threadID_in_group + (i&1).
/// Returns D = A B + C per lane and register.
std::array<std::array<double, 4>, 32>
mmaSync(const std::array<std::array<Pair, 4>, 32> &a,
        const std::array<std::array<Pair, 2>, 32> &b,
        const std::array<std::array<double, 4>, 32> &c) {
  double am[16][16], bm[16][8], cm[16][8];
  int seenA[16][16] = {}, seenB[16][8] = {}, seenC[16][8] = {};
  for (int lane = 0; lane < 32; ++lane) {
    int g = lane / 4, t = lane % 4;
    for (int i = 0; i < 8; ++i) {
      int r = g + ((i / 2) % 2) * 8, k = 2 * t + (i & 1) + (i >= 4 ? 8 : 0);
      am[r][k] = a[lane][i / 2][i % 2];
      ++seenA[r][k];
    }
    for (int i = 0; i < 4; ++i) {
      int k = 2 * t + (i & 1) + (i >= 2 ? 8 : 0);
      bm[k][g] = b[lane][i / 2][i % 2];
      ++seenB[k][g];
    }
    for (int i = 0; i < 4; ++i) {
      int r = g + (i >= 2 ? 8 : 0), n = 2 * t + (i & 1);
      cm[r][n] = c[lane][i];
      ++seenC[r][n];
    }
  }
  for (int r = 0; r < 16; ++r)
    for (int k = 0; k < 16; ++k)
      REQUIRE(seenA[r][k] == 1);
  for (int k = 0; k < 16; ++k)
    for (int n = 0; n < 8; ++n)
      REQUIRE(seenB[k][n] == 1);
  std::array<std::array<double, 4>, 32> d;
  for (int lane = 0; lane < 32; ++lane) {
    int g = lane / 4, t = lane % 4;
    for (int i = 0; i < 4; ++i) {
      int r = g + (i >= 2 ? 8 : 0), n = 2 * t + (i & 1);
      REQUIRE(seenC[r][n] == 1);
      double sum = cm[r][n];
      for (int k = 0; k < 16; ++k)
        sum += am[r][k] * bm[k][n];
      d[lane][i] = sum;
    }
  }
  return d;
}

int64_t aRow(int64_t lane) { return mma::ldmatrixARow(lane); }
int64_t aCol(int64_t lane) { return mma::ldmatrixACol(lane); }
int64_t bRow(int64_t lane) { return mma::ldmatrixBRow(lane); }
int64_t bCol(int64_t lane) { return mma::ldmatrixBCol(lane); }
int64_t vRow(int64_t lane) { return mma::ldmatrixTransBRow(lane); }
int64_t vCol(int64_t lane) { return mma::ldmatrixTransBCol(lane); }

using Accumulator = std::array<std::array<double, 4>, 32>;

/// The B fragment of n8 tile `which` (0 or 1) of an ldmatrix.x4 of two.
std::array<std::array<Pair, 2>, 32> bHalf(const Fragment &f, int64_t which) {
  std::array<std::array<Pair, 2>, 32> out;
  for (int64_t lane = 0; lane < 32; ++lane)
    out[lane] = {f[lane][2 * which], f[lane][2 * which + 1]};
  return out;
}

/// The lanes of a quad (4 lanes of one row) combined as the kernel's two
/// xor shuffles (offsets 1 and 2) combine them.
template <typename Fn>
std::array<double, 32> quadReduce(std::array<double, 32> x, Fn combine) {
  for (int64_t offset : {1, 2}) {
    std::array<double, 32> next;
    for (int64_t lane = 0; lane < 32; ++lane)
      next[lane] = combine(x[lane], x[lane ^ offset]);
    x = next;
  }
  return x;
}

} // namespace

TEST_CASE("a warp's 32 x 32 tile through ldmatrix and mma.sync is A B",
          "[gpu][mma]") {
  // The kernel's warp tile: 2 m16 by 4 n8 tiles over a K slice of 32, A
  // kept as As[m][k] and B as Bs[n][k], rows padded to 40 halves; the warp
  // at (warpM, warpN) of the block tile.
  constexpr int64_t rowsM = 64, rowsN = 64, depth = 32, stride = 40;
  std::mt19937 random(7);
  std::uniform_int_distribution<int> value(-8, 8);
  Tile as{stride, std::vector<double>(rowsM * stride, 1e9)};
  Tile bs{stride, std::vector<double>(rowsN * stride, 1e9)};
  for (int64_t r = 0; r < rowsM; ++r)
    for (int64_t k = 0; k < depth; ++k)
      as.data[r * stride + k] = value(random);
  for (int64_t n = 0; n < rowsN; ++n)
    for (int64_t k = 0; k < depth; ++k)
      bs.data[n * stride + k] = value(random);
  for (int64_t warpM : {0, 32})
    for (int64_t warpN : {0, 32}) {
      // acc[mi][ni][lane][reg], starting from C = row + 100 col.
      std::array<std::array<double, 4>, 32> acc[2][4];
      auto cAt = [&](int64_t mi, int64_t ni, int64_t lane, int64_t reg) {
        return std::pair{warpM + mi * mma::kM + mma::accumulatorRow(lane, reg),
                         warpN + ni * mma::kN + mma::accumulatorCol(lane, reg)};
      };
      std::map<std::pair<int64_t, int64_t>, int> owners;
      for (int64_t mi = 0; mi < 2; ++mi)
        for (int64_t ni = 0; ni < 4; ++ni)
          for (int64_t lane = 0; lane < 32; ++lane)
            for (int64_t reg = 0; reg < 4; ++reg) {
              auto [r, c] = cAt(mi, ni, lane, reg);
              acc[mi][ni][lane][reg] = r + 100.0 * c;
              ++owners[{r, c}];
            }
      // Every element of the warp's 32 x 32 tile has one owner.
      REQUIRE(owners.size() == 32 * 32);
      for (auto &[at, count] : owners) {
        REQUIRE(count == 1);
        REQUIRE(at.first >= warpM);
        REQUIRE(at.first < warpM + 32);
        REQUIRE(at.second >= warpN);
        REQUIRE(at.second < warpN + 32);
      }
      for (int64_t ks = 0; ks < depth / mma::kK; ++ks) {
        Fragment a[2], b[2];
        for (int64_t mi = 0; mi < 2; ++mi)
          a[mi] = ldmatrix(as, warpM + mi * mma::kM, ks * mma::kK, aRow, aCol);
        for (int64_t pair = 0; pair < 2; ++pair)
          b[pair] = ldmatrix(bs, warpN + pair * 2 * mma::kN, ks * mma::kK, bRow,
                             bCol);
        for (int64_t mi = 0; mi < 2; ++mi)
          for (int64_t ni = 0; ni < 4; ++ni) {
            std::array<std::array<Pair, 2>, 32> bFragment;
            for (int64_t lane = 0; lane < 32; ++lane)
              bFragment[lane] = {b[ni / 2][lane][ni % 2 * 2],
                                 b[ni / 2][lane][ni % 2 * 2 + 1]};
            acc[mi][ni] = mmaSync(a[mi], bFragment, acc[mi][ni]);
          }
      }
      for (int64_t mi = 0; mi < 2; ++mi)
        for (int64_t ni = 0; ni < 4; ++ni)
          for (int64_t lane = 0; lane < 32; ++lane)
            for (int64_t reg = 0; reg < 4; ++reg) {
              auto [r, c] = cAt(mi, ni, lane, reg);
              double expected = r + 100.0 * c;
              for (int64_t k = 0; k < depth; ++k)
                expected += as.at(r, k) * bs.at(c, k);
              INFO("warp (" << warpM << ", " << warpN << ") C[" << r << "]["
                            << c << "]");
              REQUIRE(acc[mi][ni][lane][reg] == expected);
            }
    }
}

TEST_CASE("ldmatrix row addresses are 16-byte aligned and within the tile",
          "[gpu][mma]") {
  for (int64_t lane = 0; lane < 32; ++lane) {
    // Column offsets in halves: multiples of 8 are 16 bytes.
    REQUIRE(mma::ldmatrixACol(lane) % 8 == 0);
    REQUIRE(mma::ldmatrixBCol(lane) % 8 == 0);
    REQUIRE(mma::ldmatrixARow(lane) < mma::kM);
    REQUIRE(mma::ldmatrixACol(lane) < mma::kK);
    REQUIRE(mma::ldmatrixBRow(lane) < 2 * mma::kN);
    REQUIRE(mma::ldmatrixBCol(lane) < mma::kK);
  }
}

TEST_CASE("a warp's flash attention through ldmatrix, mma.sync and quad "
          "shuffles is softmax(Q K^T) V",
          "[gpu][mma]") {
  // MmaAttention.cpp's schedule for one warp: 16 queries, head 32 (two k16
  // steps), values 16 (two n8 tiles), two key blocks of 32 (four n8 tiles
  // of scores each), Q, K and V in shared tiles [rows][dim + 8], some keys
  // hidden. P is fed to the second product in the accumulators' registers
  // (accumulatorAsA*), V read by ldmatrix.trans.
  constexpr int64_t rows = 16, head = 32, values = 16, blockK = 32, blocks = 2,
                    keys = blockK * blocks;
  std::mt19937 random(11);
  std::uniform_real_distribution<double> value(-1, 1);
  Tile qs{head + 8, std::vector<double>(rows * (head + 8), 1e9)};
  Tile ks{head + 8, std::vector<double>(keys * (head + 8), 1e9)};
  Tile vs{values + 8, std::vector<double>(keys * (values + 8), 1e9)};
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t d = 0; d < head; ++d)
      qs.data[r * qs.stride + d] = value(random);
  for (int64_t j = 0; j < keys; ++j) {
    for (int64_t d = 0; d < head; ++d)
      ks.data[j * ks.stride + d] = value(random);
    for (int64_t d = 0; d < values; ++d)
      vs.data[j * vs.stride + d] = value(random);
  }
  // Row r sees key j unless j > 40 + r (causal-like), and never key 3.
  auto visible = [](int64_t r, int64_t j) { return j <= 40 + r && j != 3; };

  constexpr int64_t tilesK = blockK / mma::kN, tilesV = values / mma::kN;
  Accumulator acc[tilesV] = {};
  std::array<double, 32> rowMax[2], rowSum[2];
  for (int64_t h = 0; h < 2; ++h) {
    rowMax[h].fill(-INFINITY);
    rowSum[h].fill(0.0);
  }
  for (int64_t block = 0; block < blocks; ++block) {
    // The block's keys are rows block * blockK .. of Ks and Vs: staged at
    // row 0 of the kernel's tiles, here read at that offset.
    int64_t j0 = block * blockK;
    Accumulator s[tilesK] = {};
    for (int64_t step = 0; step < head / mma::kK; ++step) {
      Fragment a = ldmatrix(qs, 0, step * mma::kK, aRow, aCol);
      for (int64_t pair = 0; pair < tilesK / 2; ++pair) {
        Fragment b =
            ldmatrix(ks, j0 + pair * 2 * mma::kN, step * mma::kK, bRow, bCol);
        for (int64_t which = 0; which < 2; ++which)
          s[2 * pair + which] =
              mmaSync(a, bHalf(b, which), s[2 * pair + which]);
      }
    }
    for (int64_t n = 0; n < tilesK; ++n)
      for (int64_t lane = 0; lane < 32; ++lane)
        for (int64_t reg = 0; reg < 4; ++reg)
          if (!visible(mma::accumulatorRow(lane, reg),
                       j0 + n * mma::kN + mma::accumulatorCol(lane, reg)))
            s[n][lane][reg] = -INFINITY;
    for (int64_t h = 0; h < 2; ++h) {
      std::array<double, 32> tileMax;
      tileMax.fill(-INFINITY);
      for (int64_t lane = 0; lane < 32; ++lane)
        for (int64_t n = 0; n < tilesK; ++n)
          for (int64_t reg = 2 * h; reg < 2 * h + 2; ++reg)
            tileMax[lane] = std::max(tileMax[lane], s[n][lane][reg]);
      tileMax = quadReduce(tileMax,
                           [](double x, double y) { return std::max(x, y); });
      for (int64_t lane = 0; lane < 32; ++lane) {
        double newMax = std::max(rowMax[h][lane], tileMax[lane]);
        double shift = newMax == -INFINITY ? 0.0 : newMax;
        double alpha = std::exp(rowMax[h][lane] - shift);
        double sum = 0;
        for (int64_t n = 0; n < tilesK; ++n)
          for (int64_t reg = 2 * h; reg < 2 * h + 2; ++reg) {
            s[n][lane][reg] = std::exp(s[n][lane][reg] - shift);
            sum += s[n][lane][reg];
          }
        for (int64_t n = 0; n < tilesV; ++n)
          for (int64_t reg = 2 * h; reg < 2 * h + 2; ++reg)
            acc[n][lane][reg] *= alpha;
        rowSum[h][lane] = rowSum[h][lane] * alpha + sum;
        rowMax[h][lane] = newMax;
      }
    }
    for (int64_t kk = 0; kk < blockK / mma::kK; ++kk) {
      std::array<std::array<Pair, 4>, 32> a;
      for (int64_t lane = 0; lane < 32; ++lane)
        for (int64_t reg = 0; reg < 4; ++reg) {
          const auto &tile = s[2 * kk + mma::accumulatorAsATile(reg)][lane];
          int64_t first = mma::accumulatorAsAReg(reg);
          a[lane][reg] = {tile[first], tile[first + 1]};
        }
      for (int64_t pair = 0; pair < tilesV / 2; ++pair) {
        Fragment b = ldmatrix(vs, j0 + kk * mma::kK, pair * 2 * mma::kN, vRow,
                              vCol, /*transpose=*/true);
        for (int64_t which = 0; which < 2; ++which)
          acc[2 * pair + which] =
              mmaSync(a, bHalf(b, which), acc[2 * pair + which]);
      }
    }
  }
  for (int64_t h = 0; h < 2; ++h)
    rowSum[h] = quadReduce(rowSum[h], [](double x, double y) { return x + y; });

  for (int64_t n = 0; n < tilesV; ++n)
    for (int64_t lane = 0; lane < 32; ++lane)
      for (int64_t reg = 0; reg < 4; ++reg) {
        int64_t r = mma::accumulatorRow(lane, reg);
        int64_t c = n * mma::kN + mma::accumulatorCol(lane, reg);
        // The float64 reference: softmax over the visible keys.
        double m = -INFINITY;
        std::vector<double> score(keys);
        for (int64_t j = 0; j < keys; ++j) {
          score[j] = 0;
          for (int64_t d = 0; d < head; ++d)
            score[j] += qs.at(r, d) * ks.at(j, d);
          if (visible(r, j))
            m = std::max(m, score[j]);
        }
        double sum = 0, out = 0;
        for (int64_t j = 0; j < keys; ++j)
          if (visible(r, j)) {
            double p = std::exp(score[j] - m);
            sum += p;
            out += p * vs.at(j, c);
          }
        INFO("O[" << r << "][" << c << "]");
        REQUIRE(acc[n][lane][reg] / rowSum[reg / 2][lane] ==
                Approx(out / sum).epsilon(1e-12));
      }
}
