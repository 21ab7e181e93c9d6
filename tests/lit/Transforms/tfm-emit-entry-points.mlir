// RUN: tfm-opt %s -split-input-file -verify-diagnostics -tfm-emit-entry-points \
// RUN:   | FileCheck %s --implicit-check-not=tfm_artifact_metadata
// RUN: tfm-opt %s -split-input-file -verify-diagnostics -tfm-emit-entry-points=export-artifact-metadata=true \
// RUN:   | FileCheck %s --check-prefix=EXPORT

// A lowered model taking x: f32[seq, 2] and y: f32[seq] as memref
// descriptors (allocated, aligned, offset, sizes..., strides...).

// CHECK-LABEL: llvm.func internal @tiny(
// CHECK-SAME:    attributes {tfm.signature

// The metadata JSON of docs/artifact.md, NUL-terminated.
// CHECK:       llvm.mlir.global internal constant @tfm_tiny_metadata_json("{\22abi\22:1,\22model\22:\22tiny\22,\22entry\22:\22tfm_tiny_run_packed\22,\22workspace_entry\22:\22tfm_tiny_run_packed_with_workspace\22,\22workspace_size\22:\22tfm_tiny_workspace_size_packed\22,\22symbols\22:[\22seq\22],\22inputs\22:[{\22name\22:\22x\22,\22dtype\22:\22f32\22,\22shape\22:[\22seq\22,2]}],\22outputs\22:[{\22name\22:\22y\22,\22dtype\22:\22f32\22,\22shape\22:[\22seq\22]}]}\00")

// CHECK-LABEL: llvm.func @tfm_tiny_metadata() -> !llvm.ptr
// CHECK-NEXT:    %[[ADDR:.*]] = llvm.mlir.addressof @tfm_tiny_metadata_json : !llvm.ptr
// CHECK-NEXT:    llvm.return %[[ADDR]] : !llvm.ptr

// run_packed loads one pointer per input then output, and the symbols.
// CHECK-LABEL: llvm.func @tfm_tiny_run_packed(
// CHECK-SAME:    %[[BUFS:[^:]*]]: !llvm.ptr, %[[SYMS:[^:]*]]: !llvm.ptr, %[[EXEC:[^:]*]]: !llvm.ptr) -> i32
// CHECK:         %[[XSLOT:.*]] = llvm.getelementptr %[[BUFS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[XP:.*]] = llvm.load %[[XSLOT]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    %[[YSLOT:.*]] = llvm.getelementptr %[[BUFS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[YP:.*]] = llvm.load %[[YSLOT]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    %[[SEQSLOT:.*]] = llvm.getelementptr %[[SYMS]][0] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT:    %[[SEQ:.*]] = llvm.load %[[SEQSLOT]] : !llvm.ptr -> i64
// A negative symbol value, or a tensor whose byte size overflows int64_t,
// returns -1 before any descriptor is built (docs/artifact.md).
// CHECK:         %[[NEG:.*]] = llvm.icmp "slt" %[[SEQ]], %{{.*}} : i64
// CHECK:         %[[XBYTES:.*]] = "llvm.intr.smul.with.overflow"(%{{.*}}, %[[SEQ]]) : (i64, i64) -> !llvm.struct<(i64, i1)>
// CHECK:         %[[XROW:.*]] = llvm.extractvalue %[[XBYTES]][0]
// CHECK:         "llvm.intr.smul.with.overflow"(%[[XROW]], %{{.*}})
// CHECK:         "llvm.intr.smul.with.overflow"(%{{.*}}, %[[SEQ]])
// CHECK:         llvm.cond_br %[[BAD:.*]], ^[[FAIL:bb[0-9]+]], ^[[OK:bb[0-9]+]]
// CHECK:       ^[[FAIL]]:
// CHECK-NEXT:    %[[MINUS1:.*]] = llvm.mlir.constant(-1 : i32) : i32
// CHECK-NEXT:    llvm.return %[[MINUS1]] : i32
// CHECK:       ^[[OK]]:
// CHECK-DAG:     %[[TWO:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-DAG:     %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK:         %[[STRIDE0:.*]] = llvm.mul %[[ONE]], %[[TWO]] : i64
// CHECK:         %[[XOFF:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK:         %[[YSTRIDE:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK:         %[[YOFF:.*]] = llvm.mlir.constant(0 : i64) : i64
// Dense row-major descriptors: x is (p, p, 0, [seq, 2], [2, 1]), y is (p, p, 0, [seq], [1]).
// CHECK:         llvm.call @tiny(%[[XP]], %[[XP]], %[[XOFF]], %[[SEQ]], %[[TWO]], %[[STRIDE0]], %[[ONE]], %[[YP]], %[[YP]], %[[YOFF]], %[[SEQ]], %[[YSTRIDE]])
// CHECK:         %[[ZERO:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    llvm.return %[[ZERO]] : i32

// The typed entry point: x, y, then seq.
// CHECK-LABEL: llvm.func @tfm_tiny_run(
// CHECK-SAME:    %[[X:[^:]*]]: !llvm.ptr, %[[Y:[^:]*]]: !llvm.ptr, %[[N:[^:]*]]: i64) -> i32
// CHECK:         llvm.call @tiny(%[[X]], %[[X]], %{{.*}}, %[[N]], %{{.*}}, %{{.*}}, %{{.*}}, %[[Y]], %[[Y]], %{{.*}}, %[[N]], %{{.*}})
// CHECK:         llvm.return %{{.*}} : i32

// EXPORT-LABEL: llvm.func @tfm_tiny_metadata() -> !llvm.ptr
// EXPORT:       llvm.func @tfm_artifact_metadata() -> !llvm.ptr
// EXPORT-NEXT:    %[[ADDR:.*]] = llvm.mlir.addressof @tfm_tiny_metadata_json : !llvm.ptr
// EXPORT-NEXT:    llvm.return %[[ADDR]] : !llvm.ptr
// EXPORT:       llvm.func @tfm_tiny_run_packed(
// EXPORT:       llvm.func @tfm_tiny_run(

// A model without a workspace (no planned scratch) still has every entry
// point: the workspace is checked and then unused, and its size is 0 for
// dims the run accepts.
// CHECK-LABEL: llvm.func @tfm_tiny_run_packed_with_workspace(
// CHECK-SAME:    %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: i64) -> i32
// CHECK:         llvm.mlir.constant(-3 : i32)
// CHECK:         llvm.call @tiny(%{{[^)]*}}) : (!llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, !llvm.ptr, !llvm.ptr, i64, i64, i64) -> ()
// CHECK-LABEL: llvm.func @tfm_tiny_run_with_workspace(
// CHECK-LABEL: llvm.func @tfm_tiny_workspace_size_packed(
// CHECK-SAME:    %{{[^:]*}}: !llvm.ptr) -> i64
// CHECK:         llvm.mlir.constant(-1 : i64)
// CHECK:         %[[NOSCRATCH:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT:    llvm.return %[[NOSCRATCH]] : i64
// CHECK-LABEL: llvm.func @tfm_tiny_workspace_size(
// CHECK-SAME:    %{{[^:]*}}: i64) -> i64

module {
  llvm.func @tiny(%xa: !llvm.ptr, %xb: !llvm.ptr, %xo: i64, %xs0: i64, %xs1: i64, %xt0: i64, %xt1: i64,
                  %ya: !llvm.ptr, %yb: !llvm.ptr, %yo: i64, %ys0: i64, %yt0: i64) attributes {tfm.signature = #tfm.signature<
      model = "tiny", symbols = ["seq"],
      inputs = [#tfm.tensor<name = "x", elementType = f32, shape = ["seq", 2]>],
      outputs = [#tfm.tensor<name = "y", elementType = f32, shape = ["seq"]>]>} {
    llvm.return
  }
}

// -----

// Only the entry points stay global: tasks, kernel variants and weights get
// the same names in every model, and would clash when two models link into
// one program. Declarations of what the object calls stay external.

// CHECK-LABEL: llvm.mlir.global internal constant @weights(
// CHECK:       llvm.mlir.global private constant @packed(
// CHECK:       llvm.func @expf(f32) -> f32
// CHECK:       llvm.func internal @__tfm_task_linear_0_avx2(
// CHECK:       llvm.func internal @with_helpers(
// CHECK:       llvm.func @tfm_with_helpers_metadata()
// CHECK:       llvm.func @tfm_with_helpers_run_packed(
// CHECK:       llvm.func @tfm_with_helpers_run(
module {
  llvm.mlir.global external constant @weights(dense<1.0> : tensor<4xf32>) : !llvm.array<4 x f32>
  llvm.mlir.global private constant @packed(dense<2.0> : tensor<4xf32>) : !llvm.array<4 x f32>
  llvm.func @expf(f32) -> f32
  llvm.func @__tfm_task_linear_0_avx2(%x: f32) -> f32 {
    %0 = llvm.call @expf(%x) : (f32) -> f32
    llvm.return %0 : f32
  }
  llvm.func @with_helpers() attributes {tfm.signature = #tfm.signature<
      model = "with_helpers", symbols = [], inputs = [], outputs = []>} {
    llvm.return
  }
}

// -----

// Without symbols the typed entry point takes only buffers, and run_packed
// never reads the symbol array.

// CHECK-LABEL: llvm.func internal @static_model(
// CHECK-LABEL: llvm.func @tfm_static_model_run_packed(
// CHECK-SAME:    %[[BUFS:[^:]*]]: !llvm.ptr, %[[SYMS:[^:]*]]: !llvm.ptr, %{{[^:]*}}: !llvm.ptr) -> i32
// CHECK-NOT:     %[[SYMS]]
// CHECK:         llvm.call @static_model
// CHECK-LABEL: llvm.func @tfm_static_model_run(
// CHECK-SAME:    %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr) -> i32
module {
  llvm.func @static_model(%xa: !llvm.ptr, %xb: !llvm.ptr, %xo: i64, %xs0: i64, %xt0: i64,
                          %ya: !llvm.ptr, %yb: !llvm.ptr, %yo: i64) attributes {tfm.signature = #tfm.signature<
      model = "static_model", symbols = [],
      inputs = [#tfm.tensor<name = "ids", elementType = i64, shape = [4]>],
      outputs = [#tfm.tensor<name = "s", elementType = f64, shape = []>]>} {
    llvm.return
  }
}

// -----

// A model function with a trailing pointer beyond its descriptors takes the
// tfm_exec of tfm-dispatch-tasks: run_packed forwards its exec argument,
// the typed entry point passes NULL.

// CHECK-LABEL: llvm.func internal @with_exec(
// CHECK-LABEL: llvm.func @tfm_with_exec_run_packed(
// CHECK-SAME:    %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %[[EXEC:[^:]*]]: !llvm.ptr) -> i32
// CHECK:         llvm.call @with_exec(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[EXEC]]) : (!llvm.ptr, !llvm.ptr, i64, i64, i64, !llvm.ptr) -> ()
// CHECK-LABEL: llvm.func @tfm_with_exec_run(
// CHECK-SAME:    %[[X:[^:]*]]: !llvm.ptr) -> i32
// CHECK:         %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK:         llvm.call @with_exec(%[[X]], %[[X]], %{{.*}}, %{{.*}}, %{{.*}}, %[[NULL]])
module {
  llvm.func @with_exec(%xa: !llvm.ptr, %xb: !llvm.ptr, %xo: i64, %xs0: i64, %xt0: i64, %exec: !llvm.ptr)
      attributes {tfm.signature = #tfm.signature<model = "with_exec", symbols = [],
                  inputs = [#tfm.tensor<name = "x", elementType = f32, shape = [4]>], outputs = []>} {
    llvm.return
  }
}

// -----

// expected-error @+1 {{expected exactly one function with tfm.signature, found 0}}
module {
  llvm.func @no_signature() {
    llvm.return
  }
}

// -----

// expected-error @+1 {{expected exactly one function with tfm.signature, found 2}}
module {
  llvm.func @a() attributes {tfm.signature = #tfm.signature<model = "a", symbols = [], inputs = [], outputs = []>} {
    llvm.return
  }
  llvm.func @b() attributes {tfm.signature = #tfm.signature<model = "b", symbols = [], inputs = [], outputs = []>} {
    llvm.return
  }
}

// -----

module {
  // expected-error @+1 {{model function takes 1 arguments but its signature describes 5 (inputs and outputs as memref descriptors)}}
  llvm.func @arity(%x: !llvm.ptr) attributes {tfm.signature = #tfm.signature<
      model = "arity", symbols = [], inputs = [#tfm.tensor<name = "x", elementType = f32, shape = [2]>], outputs = []>} {
    llvm.return
  }
}

// -----

module {
  // expected-error @+1 {{model function must return its results through out-parameters (and nothing or an i32 status)}}
  llvm.func @returns_value() -> f32 attributes {tfm.signature = #tfm.signature<
      model = "returns_value", symbols = [], inputs = [], outputs = []>} {
    %0 = llvm.mlir.constant(0.0 : f32) : f32
    llvm.return %0 : f32
  }
}

// -----

// A model with run-time checks returns its i32 status, and both entry points
// return it; the checks' codes are in the metadata as "errors".

// CHECK-LABEL: llvm.func internal @checked(
// CHECK:       llvm.mlir.global internal constant @tfm_checked_metadata_json({{.*}}\22errors\22:[{\22code\22:1,\22message\22:\22embedding 'E': a token id is outside [0, 6)\22}]}\00")
// CHECK-LABEL: llvm.func @tfm_checked_run_packed(
// CHECK:         %[[STATUS:.*]] = llvm.call @checked(
// CHECK-NEXT:    llvm.return %[[STATUS]] : i32
// CHECK-LABEL: llvm.func @tfm_checked_run(
// CHECK:         %[[STATUS:.*]] = llvm.call @checked(
// CHECK-NEXT:    llvm.return %[[STATUS]] : i32
module {
  llvm.func @checked(%a: !llvm.ptr, %b: !llvm.ptr, %o: i64, %s: i64, %t: i64) -> i32 attributes {tfm.signature = #tfm.signature<
      model = "checked", symbols = [], inputs = [#tfm.tensor<name = "ids", elementType = i64, shape = [3]>], outputs = [],
      errors = [#tfm.error<code = 1, message = "embedding 'E': a token id is outside [0, 6)">]>} {
    %0 = llvm.mlir.constant(1 : i32) : i32
    llvm.return %0 : i32
  }
}

// -----

// A model that takes the caller's workspace (tfm-plan-workspace) as a
// memref<?xi8> descriptor before the exec pointer. The plain entry points
// pass none (NULL, 0 bytes); the _with_workspace ones check theirs (-3 for a
// negative size, NULL with a size or a pointer off 64 bytes, after the dims'
// -1) and pass it on; _workspace_size calls the size function named by
// tfm.workspace_size with NULL data pointers.

// CHECK-LABEL: llvm.func internal @sized(
// CHECK-LABEL: llvm.func internal @ws(
// CHECK:       llvm.mlir.global internal constant @tfm_ws_metadata_json({{.*}}\22workspace_entry\22:\22tfm_ws_run_packed_with_workspace\22,\22workspace_size\22:\22tfm_ws_workspace_size_packed\22{{.*}}

// CHECK-LABEL: llvm.func @tfm_ws_run_packed(
// CHECK-SAME:    %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %[[EXEC:[^:]*]]: !llvm.ptr) -> i32
// CHECK:         %[[NONE:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT:    %[[NOBYTES:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK:         llvm.call @ws(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[NONE]], %[[NONE]], %{{.*}}, %[[NOBYTES]], %{{.*}}, %[[EXEC]])

// CHECK-LABEL: llvm.func @tfm_ws_run(
// CHECK-SAME:    %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: i64) -> i32
// CHECK:         %[[NONE:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK:         llvm.call @ws(%{{.*}}, %[[NONE]], %[[NONE]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})

// CHECK-LABEL: llvm.func @tfm_ws_run_packed_with_workspace(
// CHECK-SAME:    %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %[[EXEC:[^:]*]]: !llvm.ptr, %[[WS:[^:]*]]: !llvm.ptr, %[[BYTES:[^:]*]]: i64) -> i32
// CHECK:         llvm.cond_br %{{.*}}, ^[[BADDIMS:bb[0-9]+]], ^[[DIMSOK:bb[0-9]+]]
// CHECK:       ^[[BADDIMS]]:
// CHECK-NEXT:    llvm.mlir.constant(-1 : i32)
// CHECK:       ^[[DIMSOK]]:
// CHECK:         %[[ZERO:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK:         %[[ADDR:.*]] = llvm.ptrtoint %[[WS]] : !llvm.ptr to i64
// CHECK:         %[[NEGATIVE:.*]] = llvm.icmp "slt" %[[BYTES]], %[[ZERO]]
// CHECK:         %[[NULL:.*]] = llvm.icmp "eq" %[[ADDR]], %[[ZERO]]
// CHECK:         %[[SIZED:.*]] = llvm.icmp "ne" %[[BYTES]], %[[ZERO]]
// CHECK:         %[[C63:.*]] = llvm.mlir.constant(63 : i64)
// CHECK:         %[[LOWBITS:.*]] = llvm.and %[[ADDR]], %[[C63]]
// CHECK:         %[[MISALIGNED:.*]] = llvm.icmp "ne" %[[LOWBITS]], %[[ZERO]]
// CHECK:         %[[BAD1:.*]] = llvm.or %[[NEGATIVE]], %[[MISALIGNED]]
// CHECK:         %[[NULLSIZED:.*]] = llvm.and %[[NULL]], %[[SIZED]]
// CHECK:         %[[BAD:.*]] = llvm.or %[[BAD1]], %[[NULLSIZED]]
// CHECK:         llvm.cond_br %[[BAD]], ^[[BADWS:bb[0-9]+]], ^[[WSOK:bb[0-9]+]]
// CHECK:       ^[[BADWS]]:
// CHECK-NEXT:    %[[MINUS3:.*]] = llvm.mlir.constant(-3 : i32) : i32
// CHECK-NEXT:    llvm.return %[[MINUS3]] : i32
// CHECK:       ^[[WSOK]]:
// CHECK:         %[[STATUS:.*]] = llvm.call @ws(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[WS]], %[[WS]], %{{.*}}, %[[BYTES]], %{{.*}}, %[[EXEC]])
// CHECK-NEXT:    llvm.return %[[STATUS]] : i32

// CHECK-LABEL: llvm.func @tfm_ws_run_with_workspace(
// CHECK-SAME:    %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: i64, %[[WS:[^:]*]]: !llvm.ptr, %[[BYTES:[^:]*]]: i64) -> i32
// CHECK:         llvm.mlir.constant(-3 : i32)
// CHECK:         %[[NOEXEC:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK:         llvm.call @ws(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[WS]], %[[WS]], %{{.*}}, %[[BYTES]], %{{.*}}, %[[NOEXEC]])

// The typed entry point with the caller's exec, and no workspace.
// CHECK-LABEL: llvm.func @tfm_ws_run_with_exec(
// CHECK-SAME:    %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: i64, %[[EXEC:[^:]*]]: !llvm.ptr) -> i32
// CHECK:         %[[NONE:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK:         llvm.call @ws(%{{.*}}, %[[NONE]], %[[NONE]], %{{.*}}, %{{.*}}, %{{.*}}, %[[EXEC]])

// The size: -1 for bad dims (an i64 now), else the size function's answer
// for descriptors with NULL data.
// CHECK-LABEL: llvm.func @tfm_ws_workspace_size_packed(
// CHECK-SAME:    %[[SYMS:[^:]*]]: !llvm.ptr) -> i64
// CHECK:         %[[N:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK:         llvm.cond_br %{{.*}}, ^[[BAD:bb[0-9]+]], ^[[OK:bb[0-9]+]]
// CHECK:       ^[[BAD]]:
// CHECK-NEXT:    %[[MINUS1:.*]] = llvm.mlir.constant(-1 : i64) : i64
// CHECK-NEXT:    llvm.return %[[MINUS1]] : i64
// CHECK:       ^[[OK]]:
// CHECK-NEXT:    %[[NULLDATA:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK:         %[[BYTES:.*]] = llvm.call @sized(%[[NULLDATA]], %[[NULLDATA]], %{{.*}}, %[[N]], %{{.*}}) : (!llvm.ptr, !llvm.ptr, i64, i64, i64) -> i64
// CHECK-NEXT:    llvm.return %[[BYTES]] : i64
// CHECK-LABEL: llvm.func @tfm_ws_workspace_size(
// CHECK-SAME:    %[[N:[^:]*]]: i64) -> i64
// CHECK:         llvm.call @sized(%{{.*}}, %{{.*}}, %{{.*}}, %[[N]], %{{.*}})
module {
  llvm.func @sized(%xa: !llvm.ptr, %xb: !llvm.ptr, %xo: i64, %xs0: i64, %xt0: i64) -> i64 {
    llvm.return %xs0 : i64
  }
  llvm.func @ws(%xa: !llvm.ptr, %xb: !llvm.ptr, %xo: i64, %xs0: i64, %xt0: i64,
                %wa: !llvm.ptr, %wb: !llvm.ptr, %wo: i64, %wbytes: i64, %wt: i64, %exec: !llvm.ptr) -> i32
      attributes {tfm.signature = #tfm.signature<model = "ws", symbols = ["n"],
                  inputs = [#tfm.tensor<name = "x", elementType = f32, shape = ["n"]>], outputs = []>,
                  tfm.workspace_size = @sized} {
    %0 = llvm.mlir.constant(0 : i32) : i32
    llvm.return %0 : i32
  }
}

// -----

module {
  // expected-error @+1 {{tfm.workspace_size names @missing, which is not a defined function returning i64}}
  llvm.func @dangling(%xa: !llvm.ptr, %xb: !llvm.ptr, %xo: i64, %xs0: i64, %xt0: i64,
                      %wa: !llvm.ptr, %wb: !llvm.ptr, %wo: i64, %wbytes: i64, %wt: i64)
      attributes {tfm.signature = #tfm.signature<model = "m", symbols = [],
                  inputs = [#tfm.tensor<name = "x", elementType = f32, shape = [4]>], outputs = []>,
                  tfm.workspace_size = @missing} {
    llvm.return
  }
}
