// RUN: tfm-opt %s -convert-forall-to-tasks -verify-diagnostics

func.func @on_tensors(%t: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{must be bufferized before convert-forall-to-tasks}}
  %r = scf.forall (%i) in (8) shared_outs(%o = %t) -> (tensor<8xf32>) {
    scf.forall.in_parallel {
    }
  }
  return %r : tensor<8xf32>
}
