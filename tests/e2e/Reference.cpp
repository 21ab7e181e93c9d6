//===- Reference.cpp - A float64 reference for the e2e tests --------------===//
#include "Reference.h"
#include "Harness.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace ref {

namespace {
int64_t product(const std::vector<int64_t> &shape, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i)
    n *= shape[i];
  return n;
}

int64_t normalize(int64_t dim, int64_t rank) {
  int64_t d = dim < 0 ? dim + rank : dim;
  if (d < 0 || d >= rank)
    throw std::logic_error("ref: dim " + std::to_string(dim) +
                           " out of range for rank " + std::to_string(rank));
  return d;
}

void require(bool condition, const char *what) {
  if (!condition)
    throw std::logic_error(std::string("ref: ") + what);
}

/// Row-major strides.
std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    strides[i - 1] = strides[i] * shape[i];
  return strides;
}

/// numpy broadcasting of two shapes.
std::vector<int64_t> broadcastShapes(const std::vector<int64_t> &a,
                                     const std::vector<int64_t> &b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    require(da == db || da == 1 || db == 1, "shapes do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

/// The flat offset into an array of shape `shape` (right-aligned against
/// `outShape`, size-1 dims broadcast) of the element at out index `index`.
int64_t broadcastOffset(const std::vector<int64_t> &index,
                        const std::vector<int64_t> &outShape,
                        const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides = stridesOf(shape);
  size_t lead = outShape.size() - shape.size();
  int64_t offset = 0;
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] != 1)
      offset += index[lead + i] * strides[i];
  return offset;
}

/// Unflattens `flat` into an index of `shape`.
std::vector<int64_t> unflatten(int64_t flat,
                               const std::vector<int64_t> &shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    index[i] = shape[i] ? flat % shape[i] : 0;
    flat = shape[i] ? flat / shape[i] : 0;
  }
  return index;
}
} // namespace

Array::Array(std::vector<int64_t> shape, std::vector<double> data)
    : shape(std::move(shape)), data(std::move(data)) {
  require(int64_t(this->data.size()) == numel(), "data size != shape");
}

Array::Array(std::vector<int64_t> shape)
    : shape(std::move(shape)),
      data(size_t(product(this->shape, 0, this->shape.size()))) {}

int64_t Array::numel() const { return product(shape, 0, shape.size()); }

Array fromFloats(std::vector<int64_t> shape, const std::vector<float> &values) {
  return Array(std::move(shape),
               std::vector<double>(values.begin(), values.end()));
}

Array fromWeight(const e2e::Weight &weight) {
  if (!weight.data64.empty())
    return Array(weight.shape, weight.data64);
  return fromFloats(weight.shape, weight.data);
}

Array fromTensor(const e2e::HostTensor &tensor) {
  return Array(tensor.shape, tensor.toDoubles());
}

Array linear(const Array &x, const Array &w, const Array *b) {
  require(x.rank() >= 1 && w.rank() == 2, "linear ranks");
  int64_t in = w.shape[1], out = w.shape[0];
  require(x.shape.back() == in, "linear: in features");
  require(!b || (b->rank() == 1 && b->shape[0] == out), "linear: bias");
  std::vector<int64_t> shape = x.shape;
  shape.back() = out;
  Array y(shape);
  int64_t rows = product(x.shape, 0, x.shape.size() - 1);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o) {
      double sum = b ? b->data[size_t(o)] : 0.0;
      for (int64_t i = 0; i < in; ++i)
        sum += x.data[size_t(r * in + i)] * w.data[size_t(o * in + i)];
      y.data[size_t(r * out + o)] = sum;
    }
  return y;
}

Array matmul(const Array &a, const Array &b) {
  require(a.rank() >= 2 && b.rank() >= 2, "matmul ranks");
  int64_t m = a.dim(-2), k = a.dim(-1), n = b.dim(-1);
  require(b.dim(-2) == k, "matmul: contracted dims differ");
  std::vector<int64_t> aBatch(a.shape.begin(), a.shape.end() - 2);
  std::vector<int64_t> bBatch(b.shape.begin(), b.shape.end() - 2);
  std::vector<int64_t> batch = broadcastShapes(aBatch, bBatch);
  std::vector<int64_t> shape = batch;
  shape.push_back(m);
  shape.push_back(n);
  Array c(shape);
  int64_t batches = product(batch, 0, batch.size());
  for (int64_t bi = 0; bi < batches; ++bi) {
    std::vector<int64_t> index = unflatten(bi, batch);
    const double *pa =
        a.data.data() + broadcastOffset(index, batch, aBatch) * m * k;
    const double *pb =
        b.data.data() + broadcastOffset(index, batch, bBatch) * k * n;
    double *pc = c.data.data() + bi * m * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t l = 0; l < k; ++l)
          sum += pa[i * k + l] * pb[l * n + j];
        pc[i * n + j] = sum;
      }
  }
  return c;
}

Array transpose(const Array &x, int64_t d0, int64_t d1) {
  int64_t a = normalize(d0, x.rank()), b = normalize(d1, x.rank());
  std::vector<int64_t> shape = x.shape;
  std::swap(shape[size_t(a)], shape[size_t(b)]);
  Array y(shape);
  std::vector<int64_t> inStrides = stridesOf(x.shape);
  for (int64_t flat = 0; flat < y.numel(); ++flat) {
    std::vector<int64_t> index = unflatten(flat, shape);
    std::swap(index[size_t(a)], index[size_t(b)]);
    int64_t offset = 0;
    for (size_t i = 0; i < index.size(); ++i)
      offset += index[i] * inStrides[i];
    y.data[size_t(flat)] = x.data[size_t(offset)];
  }
  return y;
}

Array softmax(const Array &x, int64_t dim) {
  int64_t d = normalize(dim, x.rank());
  int64_t outer = product(x.shape, 0, size_t(d)), n = x.shape[size_t(d)];
  int64_t inner = product(x.shape, size_t(d) + 1, x.shape.size());
  Array y(x.shape);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t j) { return size_t((o * n + j) * inner + i); };
      double m = -INFINITY;
      for (int64_t j = 0; j < n; ++j)
        m = std::max(m, x.data[at(j)]);
      double sum = 0;
      for (int64_t j = 0; j < n; ++j)
        sum += std::exp(x.data[at(j)] - m);
      for (int64_t j = 0; j < n; ++j)
        y.data[at(j)] = std::exp(x.data[at(j)] - m) / sum;
    }
  return y;
}

Array scale(const Array &x, double factor) {
  Array y = x;
  for (double &v : y.data)
    v *= factor;
  return y;
}

Array add(const Array &a, const Array &b) {
  std::vector<int64_t> shape = broadcastShapes(a.shape, b.shape);
  Array c(shape);
  for (int64_t flat = 0; flat < c.numel(); ++flat) {
    std::vector<int64_t> index = unflatten(flat, shape);
    c.data[size_t(flat)] =
        a.data[size_t(broadcastOffset(index, shape, a.shape))] +
        b.data[size_t(broadcastOffset(index, shape, b.shape))];
  }
  return c;
}

Array concat(const std::vector<Array> &inputs, int64_t dim) {
  require(!inputs.empty(), "concat of nothing");
  int64_t d = normalize(dim, inputs[0].rank());
  std::vector<int64_t> shape = inputs[0].shape;
  shape[size_t(d)] = 0;
  for (const Array &x : inputs) {
    require(x.rank() == inputs[0].rank(), "concat ranks");
    for (int64_t i = 0; i < x.rank(); ++i)
      require(i == d || x.shape[size_t(i)] == inputs[0].shape[size_t(i)],
              "concat dims");
    shape[size_t(d)] += x.shape[size_t(d)];
  }
  Array y(shape);
  int64_t outer = product(shape, 0, size_t(d));
  int64_t inner = product(shape, size_t(d) + 1, shape.size());
  int64_t total = shape[size_t(d)];
  int64_t offset = 0;
  for (const Array &x : inputs) {
    int64_t n = x.shape[size_t(d)];
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < inner; ++i)
          y.data[size_t((o * total + offset + j) * inner + i)] =
              x.data[size_t((o * n + j) * inner + i)];
    offset += n;
  }
  return y;
}

Array sdpa(const Array &q, const Array &k, const Array &v,
           std::optional<double> scaleFactor) {
  require(q.rank() >= 2 && k.rank() == q.rank() && v.rank() == q.rank(),
          "sdpa ranks");
  for (int64_t i = 0; i + 2 < q.rank(); ++i)
    require(q.shape[size_t(i)] == k.shape[size_t(i)] &&
                q.shape[size_t(i)] == v.shape[size_t(i)],
            "sdpa batch dims");
  int64_t sq = q.dim(-2), sk = k.dim(-2), d = q.dim(-1), dv = v.dim(-1);
  require(k.dim(-1) == d && v.dim(-2) == sk, "sdpa dims");
  double s = scaleFactor ? *scaleFactor : 1.0 / std::sqrt(double(d));
  std::vector<int64_t> shape = q.shape;
  shape.back() = dv;
  Array out(shape);
  int64_t batches = product(q.shape, 0, q.shape.size() - 2);
  std::vector<double> logits(static_cast<size_t>(sk));
  for (int64_t b = 0; b < batches; ++b) {
    const double *pq = q.data.data() + b * sq * d;
    const double *pk = k.data.data() + b * sk * d;
    const double *pv = v.data.data() + b * sk * dv;
    double *po = out.data.data() + b * sq * dv;
    for (int64_t i = 0; i < sq; ++i) {
      double m = -INFINITY;
      for (int64_t j = 0; j < sk; ++j) {
        double dot = 0;
        for (int64_t l = 0; l < d; ++l)
          dot += pq[i * d + l] * pk[j * d + l];
        logits[size_t(j)] = dot * s;
        m = std::max(m, logits[size_t(j)]);
      }
      double sum = 0;
      for (int64_t j = 0; j < sk; ++j) {
        logits[size_t(j)] = std::exp(logits[size_t(j)] - m);
        sum += logits[size_t(j)];
      }
      for (int64_t c = 0; c < dv; ++c) {
        double acc = 0;
        for (int64_t j = 0; j < sk; ++j)
          acc += logits[size_t(j)] * pv[j * dv + c];
        po[i * dv + c] = acc / sum;
      }
    }
  }
  return out;
}

Array embedding(const std::vector<int64_t> &idShape,
                const std::vector<int64_t> &ids, const Array &table) {
  require(table.rank() == 2, "embedding table rank");
  int64_t num = table.shape[0], dim = table.shape[1];
  std::vector<int64_t> shape = idShape;
  shape.push_back(dim);
  Array y(shape);
  for (size_t i = 0; i < ids.size(); ++i) {
    require(ids[i] >= 0 && ids[i] < num, "embedding id out of range");
    for (int64_t c = 0; c < dim; ++c)
      y.data[i * size_t(dim) + size_t(c)] =
          table.data[size_t(ids[i] * dim + c)];
  }
  return y;
}

Array positionalEncoding(int64_t seq, int64_t dim) {
  Array pe({seq, dim});
  for (int64_t p = 0; p < seq; ++p)
    for (int64_t j = 0; j < dim; ++j) {
      int64_t even = j - j % 2;
      double w = std::exp(-double(even) * std::log(10000.0) / double(dim));
      double angle = double(p) * w;
      pe.data[size_t(p * dim + j)] =
          j % 2 == 0 ? std::sin(angle) : std::cos(angle);
    }
  return pe;
}

Array maskedFill(const Array &x, const std::vector<int64_t> &maskShape,
                 const std::vector<int64_t> &mask, double value) {
  require(maskShape.size() <= x.shape.size(), "mask rank");
  require(int64_t(mask.size()) == product(maskShape, 0, maskShape.size()),
          "mask size");
  size_t lead = x.shape.size() - maskShape.size();
  for (size_t i = 0; i < maskShape.size(); ++i)
    require(maskShape[i] == 1 || maskShape[i] == x.shape[lead + i],
            "mask does not broadcast");
  Array y = x;
  for (int64_t flat = 0; flat < x.numel(); ++flat) {
    std::vector<int64_t> index = unflatten(flat, x.shape);
    if (mask[size_t(broadcastOffset(index, x.shape, maskShape))] != 0)
      y.data[size_t(flat)] = value;
  }
  return y;
}

Array causalMask(const Array &x) {
  require(x.rank() >= 2, "causal mask rank");
  int64_t queries = x.dim(-2), keys = x.dim(-1);
  Array y = x;
  for (int64_t flat = 0; flat < x.numel(); ++flat) {
    int64_t j = flat % keys, i = (flat / keys) % queries;
    if (j > i)
      y.data[size_t(flat)] = -INFINITY;
  }
  return y;
}

Array rows(const Array &x, int64_t begin, int64_t count) {
  require(x.rank() >= 1 && begin >= 0 && begin + count <= x.shape[0],
          "rows out of range");
  std::vector<int64_t> shape = x.shape;
  shape[0] = count;
  int64_t inner = product(x.shape, 1, x.shape.size());
  return Array(shape,
               std::vector<double>(x.data.begin() + begin * inner,
                                   x.data.begin() + (begin + count) * inner));
}

MhaWeights MhaWeights::packed(const Array &inProjWeight,
                              const Array *inProjBias, const Array &outWeight,
                              const Array *outBias) {
  int64_t e = inProjWeight.shape[1];
  require(inProjWeight.rank() == 2 && inProjWeight.shape[0] == 3 * e,
          "in_proj_weight must be [3E, E]");
  MhaWeights w;
  w.wq = rows(inProjWeight, 0, e);
  w.wk = rows(inProjWeight, e, e);
  w.wv = rows(inProjWeight, 2 * e, e);
  w.wo = outWeight;
  if (inProjBias) {
    w.bq = rows(*inProjBias, 0, e);
    w.bk = rows(*inProjBias, e, e);
    w.bv = rows(*inProjBias, 2 * e, e);
  }
  if (outBias)
    w.bo = *outBias;
  return w;
}

Array multiHeadAttention(const Array &q, const Array &k, const Array &v,
                         int64_t heads, const MhaWeights &w) {
  require(q.rank() == 2 || q.rank() == 3, "mha rank");
  require(k.rank() == q.rank() && v.rank() == q.rank(), "mha ranks differ");
  auto opt = [](const std::optional<Array> &a) { return a ? &*a : nullptr; };
  Array Q = linear(q, w.wq, opt(w.bq));
  Array K = linear(k, w.wk, opt(w.bk));
  Array V = linear(v, w.wv, opt(w.bv));
  int64_t e = Q.dim(-1);
  require(heads > 0 && e % heads == 0, "mha heads");
  int64_t hd = e / heads;
  int64_t batch = q.rank() == 3 ? q.shape[0] : 1;
  int64_t lq = q.dim(-2), lk = k.dim(-2);
  require(v.dim(-2) == lk, "mha key/value lengths");
  double s = 1.0 / std::sqrt(double(hd));
  Array attn(Q.shape);
  std::vector<double> p(static_cast<size_t>(lk));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < lq; ++i) {
        const double *qi = Q.data.data() + (b * lq + i) * e + h * hd;
        double m = -INFINITY;
        for (int64_t j = 0; j < lk; ++j) {
          const double *kj = K.data.data() + (b * lk + j) * e + h * hd;
          double dot = 0;
          for (int64_t c = 0; c < hd; ++c)
            dot += qi[c] * kj[c];
          p[size_t(j)] = dot * s;
          m = std::max(m, p[size_t(j)]);
        }
        double sum = 0;
        for (int64_t j = 0; j < lk; ++j) {
          p[size_t(j)] = std::exp(p[size_t(j)] - m);
          sum += p[size_t(j)];
        }
        double *out = attn.data.data() + (b * lq + i) * e + h * hd;
        for (int64_t c = 0; c < hd; ++c) {
          double acc = 0;
          for (int64_t j = 0; j < lk; ++j)
            acc += p[size_t(j)] * V.data[size_t((b * lk + j) * e + h * hd + c)];
          out[c] = acc / sum;
        }
      }
  return linear(attn, w.wo, opt(w.bo));
}

} // namespace ref
