//===- Fixture.h - A compiled model with the weights it was built from -*- C++
//-*-===//
#ifndef TFM_TESTS_E2E_FIXTURE_H
#define TFM_TESTS_E2E_FIXTURE_H

#include "Harness.h"
#include "Reference.h"

namespace e2e {

/// A compiled model and the weights it was compiled with, so a test can hand
/// the same weights to the float64 reference.
struct Fixture {
  Weights weights;
  std::shared_ptr<Model> model;
  ref::Array w(const std::string &name) const {
    return ref::fromWeight(weights.at(name));
  }
};

inline Fixture makeFixture(const std::string &source, Weights weights) {
  Fixture f;
  f.weights = std::move(weights);
  f.model = Model::build(source, f.weights);
  return f;
}

} // namespace e2e

#endif // TFM_TESTS_E2E_FIXTURE_H
