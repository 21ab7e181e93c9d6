//===- ModelTest.cpp - Tests of model validation and loading ----*- C++ -*-===//

#include "tfm/runtime.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace {

const char *const kAddMetadata = R"({
  "abi": 1,
  "model": "add",
  "entry": "tfm_add_run_packed",
  "symbols": ["seq"],
  "inputs": [{"name": "x", "dtype": "f32", "shape": ["seq", 2]},
             {"name": "y", "dtype": "f32", "shape": ["seq", 2]}],
  "outputs": [{"name": "z", "dtype": "f32", "shape": ["seq", 2]}]
})";

int entryCalls = 0;

int32_t addEntry(void *const *buffers, const int64_t *symbols,
                 const tfm_exec *exec) {
  ++entryCalls;
  if (exec)
    return 9;
  const float *x = static_cast<const float *>(buffers[0]);
  const float *y = static_cast<const float *>(buffers[1]);
  float *z = static_cast<float *>(buffers[2]);
  for (int64_t i = 0; i < symbols[0] * 2; ++i)
    z[i] = x[i] + y[i];
  return 0;
}

int32_t failingEntry(void *const *, const int64_t *, const tfm_exec *) {
  return 7;
}

int32_t throwingEntry(void *const *, const int64_t *, const tfm_exec *) {
  throw std::runtime_error("boom");
}

/// Takes ownership of a status and exposes its code and message.
struct Status {
  explicit Status(tfm_status status)
      : code(tfm_status_code(status)), message(tfm_status_message(status)) {
    tfm_status_free(status);
  }
  tfm_status_code_t code;
  std::string message;
};

struct Model {
  explicit Model(tfm_run_packed_fn entry = addEntry,
                 const char *metadata = kAddMetadata) {
    Status status(tfm_model_create_from_symbols(metadata, entry, &model));
    INFO(status.message);
    REQUIRE(status.code == TFM_STATUS_OK);
    REQUIRE(model);
  }
  ~Model() { tfm_model_release(model); }
  tfm_model *model = nullptr;
};

tfm_tensor view(tfm_dtype dtype, std::vector<int64_t> shape, void *data) {
  tfm_tensor tensor{};
  tensor.dtype = dtype;
  tensor.rank = static_cast<int32_t>(shape.size());
  for (size_t d = 0; d < shape.size(); ++d)
    tensor.shape[d] = shape[d];
  tensor.data = data;
  return tensor;
}

/// Buffers and views for the add model with seq = 3.
struct AddArguments {
  float x[6] = {1, 2, 3, 4, 5, 6};
  float y[6] = {10, 20, 30, 40, 50, 60};
  float z[6] = {};
  tfm_tensor inputs[2] = {view(TFM_DTYPE_F32, {3, 2}, x),
                          view(TFM_DTYPE_F32, {3, 2}, y)};
  tfm_tensor outputs[1] = {view(TFM_DTYPE_F32, {3, 2}, z)};

  Status run(const tfm_model *model) {
    return Status(tfm_model_run(model, inputs, 2, outputs, 1));
  }
};

Status createWithMetadata(const char *metadata) {
  tfm_model *model = reinterpret_cast<tfm_model *>(1);
  Status status(tfm_model_create_from_symbols(metadata, addEntry, &model));
  CHECK(model == nullptr);
  return status;
}

std::string tempPath(const std::string &name) {
  return std::string(TFM_TEST_TMPDIR) + "/model-" + name;
}

} // namespace

TEST_CASE("status basics", "[model]") {
  CHECK(tfm_status_code(nullptr) == TFM_STATUS_OK);
  CHECK(std::string(tfm_status_message(nullptr)) == "OK");
  tfm_status_free(nullptr);
  CHECK(std::string(tfm_status_code_name(TFM_STATUS_SHAPE_MISMATCH)) ==
        "SHAPE_MISMATCH");
  CHECK(tfm_dtype_size(TFM_DTYPE_F64) == 8);
  CHECK(tfm_dtype_size(TFM_DTYPE_INVALID) == 0);
  CHECK(std::string(tfm_dtype_name(TFM_DTYPE_I32)) == "i32");
}

TEST_CASE("the runtime reports its versions", "[model]") {
  // A header from another release than the library shows up here.
  CHECK(tfm_api_version() == TFM_API_VERSION);
  CHECK(std::string(tfm_version()) == TFM_TEST_VERSION);
}

TEST_CASE("tensor allocation", "[model]") {
  tfm_tensor tensor{};
  int64_t shape[] = {3, 5};
  REQUIRE(tfm_tensor_allocate(TFM_DTYPE_F64, 2, shape, &tensor) == nullptr);
  CHECK(reinterpret_cast<uintptr_t>(tensor.data) % 64 == 0);
  CHECK(tfm_tensor_element_count(&tensor) == 15);
  CHECK(tfm_tensor_byte_size(&tensor) == 120);
  CHECK(static_cast<double *>(tensor.data)[14] == 0.0);
  tfm_tensor_release_data(&tensor);
  CHECK(tensor.data == nullptr);

  int64_t empty[] = {0, 4};
  REQUIRE(tfm_tensor_allocate(TFM_DTYPE_I32, 2, empty, &tensor) == nullptr);
  CHECK(tensor.data != nullptr);
  tfm_tensor_release_data(&tensor);

  REQUIRE(tfm_tensor_allocate(TFM_DTYPE_I64, 0, nullptr, &tensor) == nullptr);
  CHECK(tfm_tensor_element_count(&tensor) == 1);
  tfm_tensor_release_data(&tensor);

  int64_t negative[] = {2, -1};
  Status bad(tfm_tensor_allocate(TFM_DTYPE_F32, 2, negative, &tensor));
  CHECK(bad.code == TFM_STATUS_INVALID_ARGUMENT);
  CHECK(tensor.data == nullptr);
  int64_t huge[] = {INT64_MAX / 2, 3};
  CHECK(Status(tfm_tensor_allocate(TFM_DTYPE_F32, 2, huge, &tensor)).code ==
        TFM_STATUS_INVALID_ARGUMENT);
  CHECK(Status(tfm_tensor_allocate(TFM_DTYPE_INVALID, 0, nullptr, &tensor))
            .code == TFM_STATUS_INVALID_ARGUMENT);
  CHECK(Status(tfm_tensor_allocate(TFM_DTYPE_F32, 9, shape, &tensor)).code ==
        TFM_STATUS_INVALID_ARGUMENT);
  CHECK(Status(tfm_tensor_allocate(TFM_DTYPE_F32, 2, nullptr, &tensor)).code ==
        TFM_STATUS_INVALID_ARGUMENT);
  CHECK(Status(tfm_tensor_allocate(TFM_DTYPE_F32, 2, shape, nullptr)).code ==
        TFM_STATUS_INVALID_ARGUMENT);
  CHECK(tfm_tensor_element_count(nullptr) == -1);
  tfm_tensor_release_data(nullptr);
}

TEST_CASE("a model from symbols describes its signature", "[model]") {
  Model add;
  tfm_model *model = add.model;
  CHECK(std::string(tfm_model_name(model)) == "add");
  CHECK(tfm_model_input_count(model) == 2);
  CHECK(tfm_model_output_count(model) == 1);
  CHECK(tfm_model_symbol_count(model) == 1);
  CHECK(std::string(tfm_model_symbol_name(model, 0)) == "seq");
  CHECK(tfm_model_symbol_name(model, 1) == nullptr);
  CHECK(std::string(tfm_model_input_name(model, 1)) == "y");
  CHECK(std::string(tfm_model_output_name(model, 0)) == "z");
  CHECK(tfm_model_input_name(model, 2) == nullptr);
  CHECK(tfm_model_output_dtype(model, 0) == TFM_DTYPE_F32);
  CHECK(tfm_model_output_dtype(model, 1) == TFM_DTYPE_INVALID);
  CHECK(tfm_model_input_rank(model, 0) == 2);
  CHECK(tfm_model_output_rank(model, 5) == -1);

  const char *symbol = "unset";
  CHECK(tfm_model_input_dim(model, 0, 0, &symbol) == -1);
  CHECK(std::string(symbol) == "seq");
  CHECK(tfm_model_input_dim(model, 0, 1, &symbol) == 2);
  CHECK(symbol == nullptr);
  CHECK(tfm_model_output_dim(model, 0, 2, &symbol) == -1);
  CHECK(symbol == nullptr);
  CHECK(tfm_model_input_dim(model, 0, 1, nullptr) == 2);

  // No input of `add` is a cache; bad indices and models say 0 too.
  CHECK(tfm_model_input_is_cache(model, 0) == 0);
  CHECK(tfm_model_input_is_cache(model, 7) == 0);
  CHECK(tfm_model_input_is_cache(nullptr, 0) == 0);

  CHECK(tfm_model_name(nullptr) == nullptr);
  CHECK(tfm_model_input_count(nullptr) == 0);
  CHECK(tfm_model_input_dim(nullptr, 0, 0, &symbol) == -1);
}

TEST_CASE("metadata flags cache inputs", "[model]") {
  // `add` with y declared a cache: the runtime passes y's memory, which the
  // model may write (docs/generation.md).
  const char *metadata = R"({"abi": 1, "model": "add", "entry": "e",
      "symbols": ["seq"],
      "inputs": [{"name": "x", "dtype": "f32", "shape": ["seq", 2]},
                 {"name": "y", "dtype": "f32", "shape": ["seq", 2],
                  "cache": true}],
      "outputs": [{"name": "z", "dtype": "f32", "shape": ["seq", 2]}]})";
  tfm_model *model = nullptr;
  Status status(tfm_model_create_from_symbols(metadata, addEntry, &model));
  REQUIRE(status.code == TFM_STATUS_OK);
  CHECK(tfm_model_input_is_cache(model, 0) == 0);
  CHECK(tfm_model_input_is_cache(model, 1) == 1);
  tfm_model_release(model);
}

TEST_CASE("a model runs and infers its output shapes", "[model]") {
  Model add;
  AddArguments args;
  tfm_tensor inferred[1] = {};
  Status infer(
      tfm_model_infer_output_shapes(add.model, args.inputs, 2, inferred, 1));
  REQUIRE(infer.code == TFM_STATUS_OK);
  CHECK(inferred[0].dtype == TFM_DTYPE_F32);
  CHECK(inferred[0].rank == 2);
  CHECK(inferred[0].shape[0] == 3);
  CHECK(inferred[0].shape[1] == 2);

  Status run = args.run(add.model);
  INFO(run.message);
  REQUIRE(run.code == TFM_STATUS_OK);
  const float expected[6] = {11, 22, 33, 44, 55, 66};
  CHECK(std::memcmp(args.z, expected, sizeof(expected)) == 0);

  // Shape inference ignores the data pointers.
  args.inputs[0].data = nullptr;
  CHECK(Status(tfm_model_infer_output_shapes(add.model, args.inputs, 2,
                                             inferred, 1))
            .code == TFM_STATUS_OK);

  // Zero-sized inputs are valid.
  AddArguments empty;
  for (tfm_tensor &t : empty.inputs)
    t.shape[0] = 0;
  empty.outputs[0].shape[0] = 0;
  CHECK(empty.run(add.model).code == TFM_STATUS_OK);
}

TEST_CASE("run rejects tensors that do not fit the signature", "[model]") {
  Model add;
  int callsBefore = entryCalls;

  SECTION("wrong dtype") {
    AddArguments args;
    args.inputs[1].dtype = TFM_DTYPE_I32;
    Status status = args.run(add.model);
    CHECK(status.code == TFM_STATUS_INVALID_ARGUMENT);
    CHECK(status.message ==
          "input 'y': dtype is i32 but the model expects f32[seq, 2]");
  }
  SECTION("wrong rank") {
    AddArguments args;
    args.inputs[0].rank = 3;
    Status status = args.run(add.model);
    CHECK(status.code == TFM_STATUS_SHAPE_MISMATCH);
    CHECK(status.message ==
          "input 'x': rank is 3 but the model expects f32[seq, 2]");
  }
  SECTION("wrong static dim") {
    AddArguments args;
    args.inputs[0].shape[0] = 2;
    args.inputs[0].shape[1] = 3;
    Status status = args.run(add.model);
    CHECK(status.code == TFM_STATUS_SHAPE_MISMATCH);
    CHECK(status.message ==
          "input 'x' dim 1 is 3 but the model expects f32[seq, 2]");
  }
  SECTION("inconsistent symbol binding") {
    AddArguments args;
    args.inputs[1].shape[0] = 2;
    Status status = args.run(add.model);
    CHECK(status.code == TFM_STATUS_SHAPE_MISMATCH);
    CHECK(status.message == "input 'y' dim 0 is 2 but symbol 'seq' was bound "
                            "to 3 by input 'x'");
  }
  SECTION("negative dim") {
    AddArguments args;
    args.inputs[0].shape[0] = -3;
    args.inputs[1].shape[0] = -3;
    CHECK(args.run(add.model).code == TFM_STATUS_INVALID_ARGUMENT);
  }
  SECTION("wrong output shape") {
    AddArguments args;
    args.outputs[0].shape[0] = 2;
    Status status = args.run(add.model);
    CHECK(status.code == TFM_STATUS_SHAPE_MISMATCH);
    CHECK(status.message == "output 'z': shape is f32[2, 2] but the model "
                            "produces f32[3, 2] for these inputs");
  }
  SECTION("wrong output rank") {
    AddArguments args;
    args.outputs[0].rank = 1;
    CHECK(args.run(add.model).code == TFM_STATUS_SHAPE_MISMATCH);
    args.outputs[0].rank = 100;
    CHECK(args.run(add.model).code == TFM_STATUS_SHAPE_MISMATCH);
  }
  SECTION("wrong output dtype") {
    AddArguments args;
    args.outputs[0].dtype = TFM_DTYPE_F64;
    CHECK(args.run(add.model).code == TFM_STATUS_INVALID_ARGUMENT);
  }
  SECTION("wrong counts") {
    AddArguments args;
    Status status(tfm_model_run(add.model, args.inputs, 1, args.outputs, 1));
    CHECK(status.code == TFM_STATUS_INVALID_ARGUMENT);
    CHECK(status.message == "got 1 inputs but model 'add' takes 2 (x, y)");
    Status outputs(tfm_model_run(add.model, args.inputs, 2, args.outputs, 2));
    CHECK(outputs.code == TFM_STATUS_INVALID_ARGUMENT);
    CHECK(outputs.message == "got 2 outputs but model 'add' produces 1 (z)");
  }
  SECTION("NULL pointers") {
    AddArguments args;
    Status model(tfm_model_run(nullptr, args.inputs, 2, args.outputs, 1));
    CHECK(model.code == TFM_STATUS_INVALID_ARGUMENT);
    CHECK(model.message == "tfm_model_run: argument 'model' is NULL");
    Status inputs(tfm_model_run(add.model, nullptr, 2, args.outputs, 1));
    CHECK(inputs.message == "tfm_model_run: argument 'inputs' is NULL");
    Status outputs(tfm_model_run(add.model, args.inputs, 2, nullptr, 1));
    CHECK(outputs.message == "tfm_model_run: argument 'outputs' is NULL");
    CHECK(Status(tfm_model_infer_output_shapes(add.model, args.inputs, 2,
                                               nullptr, 1))
              .code == TFM_STATUS_INVALID_ARGUMENT);

    args.inputs[1].data = nullptr;
    Status inputData = args.run(add.model);
    CHECK(inputData.code == TFM_STATUS_INVALID_ARGUMENT);
    CHECK(inputData.message == "input 'y': data is NULL");
    args.inputs[1].data = args.y;
    args.outputs[0].data = nullptr;
    CHECK(args.run(add.model).message == "output 'z': data is NULL");
  }
  SECTION("an output overlapping an input") {
    AddArguments args;
    args.outputs[0].data = args.x + 1;
    Status status = args.run(add.model);
    CHECK(status.code == TFM_STATUS_INVALID_ARGUMENT);
    CHECK(status.message == "output 'z' overlaps input 'x' in memory");
  }
  // None of these may reach the compiled code.
  CHECK(entryCalls == callsBefore);
}

TEST_CASE("errors of the entry point become statuses", "[model]") {
  AddArguments args;
  SECTION("non-zero return") {
    Model failing(failingEntry);
    Status status = args.run(failing.model);
    CHECK(status.code == TFM_STATUS_RUNTIME_ERROR);
    CHECK(status.message ==
          "model 'add': tfm_add_run_packed returned error code 7");
  }
  SECTION("a code the metadata documents names its check") {
    std::string metadata = kAddMetadata;
    metadata.insert(metadata.rfind('}'),
                    R"(, "errors": [{"code": 7, "message": "x is odd"}])");
    Model failing(failingEntry, metadata.c_str());
    Status status = args.run(failing.model);
    CHECK(status.code == TFM_STATUS_RUNTIME_ERROR);
    CHECK(status.message == "model 'add': x is odd (error code 7)");
  }
  SECTION("malformed errors metadata is rejected") {
    std::string metadata = kAddMetadata;
    metadata.insert(metadata.rfind('}'), R"(, "errors": [{"code": "7"}])");
    tfm_model *model = nullptr;
    Status status(
        tfm_model_create_from_symbols(metadata.c_str(), failingEntry, &model));
    CHECK(status.code == TFM_STATUS_FORMAT_ERROR);
    CHECK(status.message.find("\"errors\" entries need") != std::string::npos);
    tfm_model_release(model);
  }
  SECTION("codes outside int32_t are rejected, not truncated") {
    // 4294967373 truncates to 77: the message written for it would be shown
    // for a real 77.
    for (const char *code : {"4294967373", "-2147483649", "0"}) {
      std::string metadata = kAddMetadata;
      metadata.insert(metadata.rfind('}'),
                      std::string(R"(, "errors": [{"code": )") + code +
                          R"(, "message": "m"}])");
      Status status = createWithMetadata(metadata.c_str());
      INFO(code);
      CHECK(status.code == TFM_STATUS_FORMAT_ERROR);
      CHECK(status.message ==
            std::string("tfm_model_create_from_symbols: metadata: \"errors\" "
                        "code ") +
                code + " is not a non-zero 32-bit integer");
    }
    std::string twice = kAddMetadata;
    twice.insert(twice.rfind('}'),
                 R"(, "errors": [{"code": 7, "message": "a"},
                                 {"code": 7, "message": "b"}])");
    CHECK(createWithMetadata(twice.c_str()).message ==
          "tfm_model_create_from_symbols: metadata: \"errors\" lists code 7 "
          "twice");
    std::string extremes = kAddMetadata;
    extremes.insert(extremes.rfind('}'),
                    R"(, "errors": [{"code": 2147483647, "message": "max"},
                                    {"code": -2147483648, "message": "min"}])");
    Model ok(failingEntry, extremes.c_str());
  }
  SECTION("an exception does not escape the C API") {
    Model throwing(throwingEntry);
    Status status = args.run(throwing.model);
    CHECK(status.code == TFM_STATUS_RUNTIME_ERROR);
    CHECK(status.message == "tfm_model_run: internal error: boom");
  }
}

TEST_CASE("create_from_symbols rejects bad metadata", "[model]") {
  auto formatError = [](const char *metadata, const std::string &needle) {
    Status status = createWithMetadata(metadata);
    INFO(status.message);
    CHECK(status.code == TFM_STATUS_FORMAT_ERROR);
    CHECK(status.message.find(needle) != std::string::npos);
  };
  formatError("not json", "metadata is not valid JSON");
  formatError("[1, 2]", "not a JSON object");
  formatError(R"({"abi": 2, "model": "m", "entry": "e", "inputs": [],
                  "outputs": []})",
              "\"abi\" is 2");
  formatError(R"({"abi": 1, "entry": "e", "inputs": [], "outputs": []})",
              "\"model\" and \"entry\"");
  formatError(R"({"abi": 1, "model": "m", "entry": "e", "outputs": []})",
              "no \"inputs\" array");
  formatError(R"({"abi": 1, "model": "m", "entry": "e", "outputs": [],
                  "inputs": [{"name": "x", "dtype": "u16", "shape": []}]})",
              "inputs[0] ('x'): \"dtype\" must be one of f32, f64, i32, i64, "
              "bool, f16, bf16, i8, u8");
  formatError(R"({"abi": 1, "model": "m", "entry": "e", "outputs": [],
                  "inputs": [{"name": "x", "dtype": "f32", "shape": ["n"]}]})",
              "names 'n', which is not in \"symbols\"");
  formatError(R"({"abi": 1, "model": "m", "entry": "e", "outputs": [],
                  "inputs": [{"name": "c", "dtype": "f32", "shape": [],
                              "cache": 1}]})",
              "inputs[0] ('c'): \"cache\" must be true or false");
  formatError(R"({"abi": 1, "model": "m", "entry": "e", "outputs": [],
                  "inputs": [{"name": "x", "dtype": "f32", "shape": [-1]}]})",
              "dim 0 is -1");
  formatError(R"({"abi": 1, "model": "m", "entry": "e", "outputs": [],
                  "inputs": [{"name": "x", "dtype": "f32",
                              "shape": [1,1,1,1,1,1,1,1,1]}]})",
              "rank 9");
  formatError(R"({"abi": 1, "model": "m", "entry": "e", "symbols": ["n"],
                  "inputs": [],
                  "outputs": [{"name": "y", "dtype": "f32", "shape": ["n"]}]})",
              "symbol 'n' occurs in no input shape");
  formatError(R"({"abi": 1, "model": "m", "entry": "e", "outputs": [],
                  "inputs": [{"name": "x", "dtype": "f32", "shape": []},
                             {"name": "x", "dtype": "f32", "shape": []}]})",
              "the name 'x' is used twice");
  // The workspace entry points come in pairs.
  formatError(R"({"abi": 1, "model": "m", "entry": "e", "inputs": [],
                  "outputs": [], "workspace_entry": "w"})",
              "\"workspace_entry\" and \"workspace_size\" must both");
  formatError(R"({"abi": 1, "model": "m", "entry": "e", "inputs": [],
                  "outputs": [], "workspace_entry": "w",
                  "workspace_size": 3})",
              "\"workspace_entry\" and \"workspace_size\" must both");

  tfm_model *model = nullptr;
  CHECK(Status(tfm_model_create_from_symbols(nullptr, addEntry, &model)).code ==
        TFM_STATUS_INVALID_ARGUMENT);
  CHECK(Status(tfm_model_create_from_symbols(kAddMetadata, nullptr, &model))
            .code == TFM_STATUS_INVALID_ARGUMENT);
  CHECK(Status(tfm_model_create_from_symbols(kAddMetadata, addEntry, nullptr))
            .code == TFM_STATUS_INVALID_ARGUMENT);
  tfm_model_release(nullptr);
}

TEST_CASE("deeply nested metadata is an error, not a stack overflow",
          "[model]") {
  // A million levels: dumping the value into a message used to recurse once
  // per level.
  for (const char *key : {"abi", "symbols"}) {
    std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
    std::string metadata = std::string("{\"") + key + "\": " + deep + "}";
    Status status = createWithMetadata(metadata.c_str());
    INFO(key);
    CHECK(status.code == TFM_STATUS_FORMAT_ERROR);
    CHECK(status.message == "tfm_model_create_from_symbols: metadata nests "
                            "deeper than 16 levels");
  }
  // Within the limit, messages name an array's type, never its contents.
  Status abi = createWithMetadata(R"({"abi": [[[1]]], "model": "m"})");
  CHECK(abi.message == "tfm_model_create_from_symbols: metadata: \"abi\" is "
                       "array, but this runtime supports ABI version 1");
  Status dim = createWithMetadata(
      R"({"abi": 1, "model": "m", "entry": "e", "outputs": [],
          "inputs": [{"name": "x", "dtype": "f32", "shape": [[[2]]]}]})");
  CHECK(dim.message == "tfm_model_create_from_symbols: metadata: inputs[0] "
                       "('x') dim 0 is array, not a non-negative integer or a "
                       "symbol name");
  // Brackets inside strings do not count.
  std::string quoted = "{\"abi\": 1, \"model\": \"" + std::string(100, '[') +
                       "\", \"entry\": \"e\", \"inputs\": [], \"outputs\": []}";
  tfm_model *model = nullptr;
  Status ok(tfm_model_create_from_symbols(quoted.c_str(), addEntry, &model));
  CHECK(ok.code == TFM_STATUS_OK);
  tfm_model_release(model);
}

TEST_CASE("a model without symbols or inputs runs", "[model]") {
  Model constant(
      [](void *const *buffers, const int64_t *symbols,
         const tfm_exec *) -> int32_t {
        if (symbols)
          return 1;
        *static_cast<int64_t *>(buffers[0]) = 42;
        return 0;
      },
      R"({"abi": 1, "model": "answer", "entry": "e", "inputs": [],
          "outputs": [{"name": "a", "dtype": "i64", "shape": []}]})");
  int64_t answer = 0;
  tfm_tensor output = view(TFM_DTYPE_I64, {}, &answer);
  Status status(tfm_model_run(constant.model, nullptr, 0, &output, 1));
  INFO(status.message);
  CHECK(status.code == TFM_STATUS_OK);
  CHECK(answer == 42);
}

TEST_CASE("loading fails cleanly on files that are not artifacts",
          "[model][load]") {
  tfm_model *model = reinterpret_cast<tfm_model *>(1);
  SECTION("a missing file") {
    Status status(tfm_model_load("/nonexistent/model.so", &model));
    CHECK(status.code == TFM_STATUS_NOT_FOUND);
    CHECK(status.message == "/nonexistent/model.so: No such file or directory");
  }
  SECTION("a text file") {
    std::string path = tempPath("text.so");
    std::ofstream(path) << "not a shared library\n";
    Status status(tfm_model_load(path.c_str(), &model));
    CHECK(status.code == TFM_STATUS_FORMAT_ERROR);
    CHECK(status.message.rfind(path + ": cannot load the shared library: ",
                               0) == 0);
  }
  SECTION("a FIFO, which dlopen would wait on forever") {
    std::string path = tempPath("fifo.so");
    ::unlink(path.c_str());
    REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
    Status status(tfm_model_load(path.c_str(), &model));
    CHECK(status.code == TFM_STATUS_FORMAT_ERROR);
    CHECK(status.message == path + ": not a regular file");
    ::unlink(path.c_str());
  }
  SECTION("a directory") {
    Status status(tfm_model_load(TFM_TEST_TMPDIR, &model));
    CHECK(status.code == TFM_STATUS_FORMAT_ERROR);
    CHECK(status.message ==
          std::string(TFM_TEST_TMPDIR) + ": not a regular file");
  }
  SECTION("a library without metadata") {
    Status status(tfm_model_load(TFM_TEST_NOT_AN_ARTIFACT, &model));
    CHECK(status.code == TFM_STATUS_NOT_FOUND);
    CHECK(status.message.find("no symbol 'tfm_artifact_metadata'") !=
          std::string::npos);
  }
  SECTION("NULL arguments") {
    CHECK(Status(tfm_model_load(nullptr, &model)).code ==
          TFM_STATUS_INVALID_ARGUMENT);
    CHECK(Status(tfm_model_load(TFM_TEST_MODEL, nullptr)).code ==
          TFM_STATUS_INVALID_ARGUMENT);
  }
  CHECK(model == nullptr);
}

TEST_CASE("a shared-library artifact loads and runs", "[model][load]") {
  tfm_model *model = nullptr;
  Status load(tfm_model_load(TFM_TEST_MODEL, &model));
  INFO(load.message);
  REQUIRE(load.code == TFM_STATUS_OK);
  CHECK(std::string(tfm_model_name(model)) == "add");
  AddArguments args;
  Status run = args.run(model);
  CHECK(run.code == TFM_STATUS_OK);
  CHECK(args.z[5] == 66.0f);

  // The test artifact fails for seq == 7.
  std::vector<float> x(14), y(14), z(14);
  tfm_tensor inputs[2] = {view(TFM_DTYPE_F32, {7, 2}, x.data()),
                          view(TFM_DTYPE_F32, {7, 2}, y.data())};
  tfm_tensor output = view(TFM_DTYPE_F32, {7, 2}, z.data());
  Status failed(tfm_model_run(model, inputs, 2, &output, 1));
  CHECK(failed.code == TFM_STATUS_RUNTIME_ERROR);
  tfm_model_release(model);
}

TEST_CASE("a model with bool inputs and outputs", "[model]") {
  // y[i] = x[i] masked where m[i] is true; k = !m. As an attention mask would
  // come in: bool[seq], one byte per element.
  Model masked(
      [](void *const *buffers, const int64_t *symbols,
         const tfm_exec *) -> int32_t {
        const float *x = static_cast<const float *>(buffers[0]);
        const unsigned char *m = static_cast<const unsigned char *>(buffers[1]);
        float *y = static_cast<float *>(buffers[2]);
        unsigned char *k = static_cast<unsigned char *>(buffers[3]);
        for (int64_t i = 0; i < symbols[0]; ++i) {
          y[i] = m[i] ? 0.0f : x[i];
          k[i] = !m[i];
        }
        return 0;
      },
      R"({"abi": 1, "model": "masked", "entry": "e", "symbols": ["seq"],
          "inputs": [{"name": "x", "dtype": "f32", "shape": ["seq"]},
                     {"name": "m", "dtype": "bool", "shape": ["seq"]}],
          "outputs": [{"name": "y", "dtype": "f32", "shape": ["seq"]},
                      {"name": "k", "dtype": "bool", "shape": ["seq"]}]})");
  CHECK(tfm_dtype_size(TFM_DTYPE_BOOL) == 1);
  CHECK(std::string(tfm_dtype_name(TFM_DTYPE_BOOL)) == "bool");
  CHECK(tfm_model_input_dtype(masked.model, 1) == TFM_DTYPE_BOOL);
  CHECK(tfm_model_output_dtype(masked.model, 1) == TFM_DTYPE_BOOL);

  float x[3] = {1, 2, 3};
  unsigned char m[3] = {0, 1, 0};
  float y[3] = {};
  unsigned char k[3] = {7, 7, 7};
  tfm_tensor inputs[2] = {view(TFM_DTYPE_F32, {3}, x),
                          view(TFM_DTYPE_BOOL, {3}, m)};
  tfm_tensor outputs[2] = {view(TFM_DTYPE_F32, {3}, y),
                           view(TFM_DTYPE_BOOL, {3}, k)};

  SECTION("output shapes") {
    tfm_tensor inferred[2] = {};
    Status status(
        tfm_model_infer_output_shapes(masked.model, inputs, 2, inferred, 2));
    REQUIRE(status.code == TFM_STATUS_OK);
    CHECK(inferred[1].dtype == TFM_DTYPE_BOOL);
    CHECK(inferred[1].shape[0] == 3);
    CHECK(tfm_tensor_byte_size(&inferred[1]) == 3);
  }
  SECTION("runs") {
    Status status(tfm_model_run(masked.model, inputs, 2, outputs, 2));
    INFO(status.message);
    REQUIRE(status.code == TFM_STATUS_OK);
    CHECK(y[0] == 1);
    CHECK(y[1] == 0);
    CHECK(y[2] == 3);
    CHECK(k[0] == 1);
    CHECK(k[1] == 0);
    CHECK(k[2] == 1);
  }
  SECTION("a bool byte other than 0 or 1 is rejected") {
    m[2] = 2;
    Status status(tfm_model_run(masked.model, inputs, 2, outputs, 2));
    CHECK(status.code == TFM_STATUS_INVALID_ARGUMENT);
    CHECK(status.message == "input 'm': bool element 2 is the byte 2, not 0 "
                            "or 1");
    CHECK(y[0] == 0); // The entry point never ran.
  }
  SECTION("an f32 or i64 tensor is no bool") {
    inputs[1].dtype = TFM_DTYPE_I32;
    Status status(tfm_model_run(masked.model, inputs, 2, outputs, 2));
    CHECK(status.code == TFM_STATUS_INVALID_ARGUMENT);
    CHECK(status.message ==
          "input 'm': dtype is i32 but the model expects bool[seq]");
  }
}

namespace {
/// A workspace entry point for the add model that records what it got and
/// needs 100 bytes per seq element (or -2 for seq 999).
struct WorkspaceCall {
  void *workspace = nullptr;
  int64_t bytes = -1;
};
WorkspaceCall lastWorkspaceCall;

int64_t addWorkspaceSize(const int64_t *symbols) {
  return symbols[0] == 999 ? -2 : symbols[0] * 100;
}

int32_t addEntryWithWorkspace(void *const *buffers, const int64_t *symbols,
                              const tfm_exec *exec, void *workspace,
                              int64_t bytes) {
  lastWorkspaceCall = {workspace, bytes};
  if (bytes < addWorkspaceSize(symbols))
    return -4;
  // Scribble over the whole workspace: it is the model's.
  std::memset(workspace, 0x5a, size_t(addWorkspaceSize(symbols)));
  return addEntry(buffers, symbols, exec);
}

struct WorkspaceModel {
  WorkspaceModel() {
    Status status(tfm_model_create_from_symbols_with_workspace(
        kAddMetadata, addEntry, addEntryWithWorkspace, addWorkspaceSize,
        &model));
    INFO(status.message);
    REQUIRE(status.code == TFM_STATUS_OK);
  }
  ~WorkspaceModel() { tfm_model_release(model); }
  tfm_model *model = nullptr;
};
} // namespace

TEST_CASE("runs reuse the model's workspace", "[model][workspace]") {
  WorkspaceModel m;
  AddArguments args;
  entryCalls = 0;
  lastWorkspaceCall = {};
  REQUIRE(args.run(m.model).code == TFM_STATUS_OK);
  CHECK(args.z[5] == 66.0f);
  // Through the workspace entry point, in 64-byte aligned memory of at least
  // 300 bytes (seq 3).
  void *first = lastWorkspaceCall.workspace;
  REQUIRE(first);
  CHECK(reinterpret_cast<uintptr_t>(first) % TFM_WORKSPACE_ALIGNMENT == 0);
  CHECK(lastWorkspaceCall.bytes >= 300);
  CHECK(entryCalls == 1);
  // The same workspace next time.
  REQUIRE(args.run(m.model).code == TFM_STATUS_OK);
  CHECK(lastWorkspaceCall.workspace == first);

  int64_t bytes = -1;
  REQUIRE(
      Status(tfm_model_workspace_size(m.model, args.inputs, 2, &bytes)).code ==
      TFM_STATUS_OK);
  CHECK(bytes == 300);
}

TEST_CASE("the caller's workspace is checked before the run",
          "[model][workspace]") {
  WorkspaceModel m;
  AddArguments args;
  alignas(64) static unsigned char memory[512];
  auto run = [&](void *workspace, int64_t bytes) {
    return Status(tfm_model_run_with_workspace(
        m.model, args.inputs, 2, args.outputs, 1, nullptr, workspace, bytes));
  };
  lastWorkspaceCall = {};
  Status ok = run(memory, 300);
  INFO(ok.message);
  CHECK(ok.code == TFM_STATUS_OK);
  CHECK(lastWorkspaceCall.workspace == memory);
  CHECK(lastWorkspaceCall.bytes == 300);

  lastWorkspaceCall = {};
  auto refused = [&](void *workspace, int64_t bytes, const char *says) {
    Status status = run(workspace, bytes);
    INFO(status.message);
    CHECK(status.code == TFM_STATUS_INVALID_ARGUMENT);
    CHECK(status.message.find(says) != std::string::npos);
    CHECK(lastWorkspaceCall.workspace == nullptr); // never called
  };
  refused(memory, 299, "has 299 bytes but model 'add' needs 300");
  refused(memory + 1, 300, "is not aligned to 64 bytes");
  refused(nullptr, 300, "NULL with 300 bytes");
  refused(memory, -1, "with -1 bytes");
  // NULL and 0: the model's own workspace.
  CHECK(run(nullptr, 0).code == TFM_STATUS_OK);
  CHECK(lastWorkspaceCall.workspace != nullptr);
}

TEST_CASE("workspace sizes the model cannot have are errors",
          "[model][workspace]") {
  WorkspaceModel m;
  std::vector<float> big(999 * 2);
  tfm_tensor inputs[2] = {view(TFM_DTYPE_F32, {999, 2}, big.data()),
                          view(TFM_DTYPE_F32, {999, 2}, big.data())};
  std::vector<float> out(999 * 2);
  tfm_tensor outputs[1] = {view(TFM_DTYPE_F32, {999, 2}, out.data())};
  int64_t bytes = 0;
  Status size(tfm_model_workspace_size(m.model, inputs, 2, &bytes));
  CHECK(size.code == TFM_STATUS_RUNTIME_ERROR);
  CHECK(size.message.find("scratch memory") != std::string::npos);
  Status run(tfm_model_run(m.model, inputs, 2, outputs, 1));
  CHECK(run.code == TFM_STATUS_RUNTIME_ERROR);
  CHECK(run.message.find("scratch memory") != std::string::npos);

  // A model without workspace entry points says so.
  Model plain;
  AddArguments args;
  Status none(tfm_model_workspace_size(plain.model, args.inputs, 2, &bytes));
  CHECK(none.code == TFM_STATUS_INVALID_ARGUMENT);
  CHECK(none.message.find("no workspace entry points") != std::string::npos);
  alignas(64) static unsigned char memory[512];
  CHECK(Status(tfm_model_run_with_workspace(plain.model, args.inputs, 2,
                                            args.outputs, 1, nullptr, memory,
                                            512))
            .code == TFM_STATUS_INVALID_ARGUMENT);
  // ... but runs as before without one.
  CHECK(args.run(plain.model).code == TFM_STATUS_OK);

  tfm_model *model = nullptr;
  CHECK(Status(tfm_model_create_from_symbols_with_workspace(
                   kAddMetadata, addEntry, nullptr, addWorkspaceSize, &model))
            .code == TFM_STATUS_INVALID_ARGUMENT);
  CHECK(Status(
            tfm_model_create_from_symbols_with_workspace(
                kAddMetadata, addEntry, addEntryWithWorkspace, nullptr, &model))
            .code == TFM_STATUS_INVALID_ARGUMENT);
  CHECK(model == nullptr);
  CHECK(
      Status(tfm_model_workspace_size(nullptr, args.inputs, 2, &bytes)).code ==
      TFM_STATUS_INVALID_ARGUMENT);
}
