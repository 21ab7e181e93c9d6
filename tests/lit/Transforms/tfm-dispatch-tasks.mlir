// RUN: tfm-opt %s -split-input-file -verify-diagnostics -tfm-dispatch-tasks | FileCheck %s
// RUN: tfm-opt %s -split-input-file -verify-diagnostics -tfm-dispatch-tasks | FileCheck %s --check-prefix=ALL-REPLACED

// Every call of the thread-count declaration is replaced, in every case.
// ALL-REPLACED-NOT: @__tfm_exec_threads

// A call of an outlined task (operands, then the range [begin, end)) becomes:
// the plain call when exec or exec->parallel_for is NULL, otherwise
// parallel_for(context, end - begin, trampoline, packed operands). The model
// function gains the trailing exec pointer.

// CHECK-LABEL: llvm.func internal @__tfm_task_scale_0_trampoline(
// CHECK-SAME:    %[[ARGS:[^:]*]]: !llvm.ptr, %[[B:[^:]*]]: i64, %[[E:[^:]*]]: i64)
// CHECK:         %[[S0:.*]] = llvm.getelementptr %[[ARGS]][0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, i64, i64)>
// CHECK-NEXT:    %[[BUF:.*]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    %[[S1:.*]] = llvm.getelementptr %[[ARGS]][0, 1]
// CHECK-NEXT:    %[[N:.*]] = llvm.load %[[S1]] : !llvm.ptr -> i64
// CHECK-NEXT:    %[[S2:.*]] = llvm.getelementptr %[[ARGS]][0, 2]
// CHECK-NEXT:    %[[OFF:.*]] = llvm.load %[[S2]] : !llvm.ptr -> i64
// CHECK-NEXT:    %[[LO:.*]] = llvm.add %[[OFF]], %[[B]] : i64
// CHECK-NEXT:    %[[HI:.*]] = llvm.add %[[OFF]], %[[E]] : i64
// CHECK-NEXT:    llvm.call @__tfm_task_scale_0(%[[BUF]], %[[N]], %[[LO]], %[[HI]])

// CHECK-LABEL: llvm.func @model(
// CHECK-SAME:    %[[BUFARG:[^:]*]]: !llvm.ptr, %[[NARG:[^:]*]]: i64, %[[EXEC:[^:]*]]: !llvm.ptr)
// CHECK-SAME:    attributes {tfm.signature
// CHECK:         %[[SLOT:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(ptr, i64, i64)>
// CHECK-DAG:     %[[BEGIN:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-DAG:     %[[END:.*]] = llvm.mlir.constant(10 : i64) : i64
// CHECK:         %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK:         %[[NOEXEC:.*]] = llvm.icmp "eq" %[[EXEC]], %[[NULL]] : !llvm.ptr
// CHECK:         llvm.cond_br %[[NOEXEC]], ^[[SERIAL:.*]], ^[[CHECK:[^ ]*]]
// CHECK:       ^[[CHECK]]:
// CHECK:         %[[PFSLOT:.*]] = llvm.getelementptr %[[EXEC]][0, 2] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i32, i32, ptr, ptr)>
// CHECK:         %[[PF:.*]] = llvm.load %[[PFSLOT]] : !llvm.ptr -> !llvm.ptr
// CHECK:         %[[NOPF:.*]] = llvm.icmp "eq" %[[PF]], %[[NULL]]
// CHECK:         llvm.cond_br %[[NOPF]], ^[[SERIAL]], ^[[PARALLEL:[^ ]*]]
// CHECK:       ^[[PARALLEL]]:
// CHECK:         %[[CTXSLOT:.*]] = llvm.getelementptr %[[EXEC]][0, 3]
// CHECK:         %[[CTX:.*]] = llvm.load %[[CTXSLOT]] : !llvm.ptr -> !llvm.ptr
// CHECK:         llvm.store %[[BUFARG]], %{{.*}} : !llvm.ptr, !llvm.ptr
// CHECK:         llvm.store %[[NARG]], %{{.*}} : i64, !llvm.ptr
// CHECK:         llvm.store %[[BEGIN]], %{{.*}} : i64, !llvm.ptr
// CHECK:         %[[COUNT:.*]] = llvm.sub %[[END]], %[[BEGIN]] : i64
// CHECK:         %[[FN:.*]] = llvm.mlir.addressof @__tfm_task_scale_0_trampoline : !llvm.ptr
// CHECK:         llvm.call %[[PF]](%[[CTX]], %[[COUNT]], %[[FN]], %[[SLOT]]) : !llvm.ptr, (!llvm.ptr, i64, !llvm.ptr, !llvm.ptr) -> ()
// CHECK:         llvm.br ^[[JOIN:[^ ]*]]
// CHECK:       ^[[SERIAL]]:
// CHECK:         llvm.call @__tfm_task_scale_0(%[[BUFARG]], %[[NARG]], %[[BEGIN]], %[[END]])
// CHECK:         llvm.br ^[[JOIN]]
// CHECK:       ^[[JOIN]]:
// CHECK-NEXT:    llvm.return

// Functions without tfm.signature keep their type.
// CHECK-LABEL: llvm.func @helper()
module {
  llvm.func @__tfm_task_scale_0(%buf: !llvm.ptr, %n: i64, %begin: i64, %end: i64) attributes {tfm.task} {
    llvm.return
  }
  llvm.func @model(%buf: !llvm.ptr, %n: i64) attributes {tfm.signature = #tfm.signature<model = "model", symbols = [], inputs = [], outputs = []>} {
    %c2 = llvm.mlir.constant(2 : i64) : i64
    %c10 = llvm.mlir.constant(10 : i64) : i64
    llvm.call @__tfm_task_scale_0(%buf, %n, %c2, %c10) : (!llvm.ptr, i64, i64, i64) -> ()
    llvm.return
  }
  llvm.func @helper() {
    llvm.return
  }
}

// -----

// A model without tasks still takes the exec pointer (the ABI is uniform).

// CHECK-LABEL: llvm.func @no_tasks(
// CHECK-SAME:    %{{[^:]*}}: i64, %{{[^:]*}}: !llvm.ptr)
// CHECK-NEXT:    llvm.return
module {
  llvm.func @no_tasks(%n: i64) attributes {tfm.signature = #tfm.signature<model = "no_tasks", symbols = [], inputs = [], outputs = []>} {
    llvm.return
  }
}

// -----

module {
  llvm.func @__tfm_task_bad(%begin: i32, %end: i32) attributes {tfm.task} {
    llvm.return
  }
  llvm.func @bad_range() attributes {tfm.signature = #tfm.signature<model = "bad_range", symbols = [], inputs = [], outputs = []>} {
    %c0 = llvm.mlir.constant(0 : i32) : i32
    // expected-error @+1 {{task ranges must be i64}}
    llvm.call @__tfm_task_bad(%c0, %c0) : (i32, i32) -> ()
    llvm.return
  }
}

// -----

module {
  llvm.func @__tfm_task_no_range() attributes {tfm.task} {
    llvm.return
  }
  llvm.func @no_range() attributes {tfm.signature = #tfm.signature<model = "no_range", symbols = [], inputs = [], outputs = []>} {
    // expected-error @+1 {{malformed task call}}
    llvm.call @__tfm_task_no_range() : () -> ()
    llvm.return
  }
}

// -----

// Calls of the tfm.exec_threads declaration become the caller's thread count:
// in a model function, exec->num_threads (1 for a NULL exec or a count below
// 1) through an internal helper LLVM inlines; anywhere else (a task, where
// nested ranges run inline) the constant 1. The declaration goes away.

// CHECK-LABEL: llvm.func internal @__tfm_exec_thread_count_i64(
// CHECK-SAME:    %[[EXEC:[^:]*]]: !llvm.ptr) -> i64
// CHECK:         %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK:         %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK:         %[[NOEXEC:.*]] = llvm.icmp "eq" %[[EXEC]], %[[NULL]]
// CHECK:         llvm.cond_br %[[NOEXEC]], ^[[NONE:[^,]*]], ^[[READ:[^ ]*]]
// CHECK:       ^[[READ]]:
// CHECK:         %[[SLOT:.*]] = llvm.getelementptr %[[EXEC]][0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i32, i32, ptr, ptr)>
// CHECK:         %[[N32:.*]] = llvm.load %[[SLOT]] : !llvm.ptr -> i32
// CHECK:         %[[N:.*]] = llvm.zext %[[N32]] : i32 to i64
// CHECK:         %[[MANY:.*]] = llvm.icmp "ugt" %[[N]], %[[ONE]]
// CHECK:         %[[COUNT:.*]] = llvm.select %[[MANY]], %[[N]], %[[ONE]]
// CHECK:         llvm.return %[[COUNT]]
// CHECK:       ^[[NONE]]:
// CHECK:         llvm.return %[[ONE]]
// CHECK-LABEL: llvm.func @in_task(
// CHECK:         %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK:         llvm.call @sink(%[[ONE]])
// CHECK-LABEL: llvm.func @threads(
// CHECK-SAME:    %[[MODEL_EXEC:[^:]*]]: !llvm.ptr)
// CHECK:         %[[T:.*]] = llvm.call @__tfm_exec_thread_count_i64(%[[MODEL_EXEC]]) : (!llvm.ptr) -> i64
// CHECK:         llvm.call @sink(%[[T]])
module {
  llvm.func @__tfm_exec_threads() -> i64 attributes {tfm.exec_threads}
  llvm.func @sink(i64)
  llvm.func @in_task() {
    %n = llvm.call @__tfm_exec_threads() : () -> i64
    llvm.call @sink(%n) : (i64) -> ()
    llvm.return
  }
  llvm.func @threads() attributes {tfm.signature = #tfm.signature<model = "threads", symbols = [], inputs = [], outputs = []>} {
    %n = llvm.call @__tfm_exec_threads() : () -> i64
    llvm.call @sink(%n) : (i64) -> ()
    llvm.return
  }
}
