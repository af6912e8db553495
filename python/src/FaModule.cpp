//===- FaModule.cpp - Python bindings of fa's runtime ---------------------===//
//
// The `fa._fa` extension: compile a spec, run its entries on raw tensor
// descriptors. Argument checking and tensor handling live in Python
// (python/fa); this layer only converts, and reports errors as ValueError
// (bad arguments, specs) or RuntimeError (a run that failed on the device
// or in a compile after its arguments were checked).
//
//===----------------------------------------------------------------------===//

#include "fa/Runtime.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <tuple>

namespace py = pybind11;

namespace {

fa::DType dtypeFromName(const std::string &name) {
  std::optional<fa::DType> dtype = fa::parseDType(name);
  if (!dtype)
    throw py::value_error("unknown dtype '" + name +
                          "'; expected f16, bf16, f32 or f64");
  return *dtype;
}

fa::Target targetFromName(const std::string &name) {
  if (name == "cpu")
    return fa::Target::CPU;
  if (name == "gpu")
    return fa::Target::GPU;
  if (name == "auto")
    return fa::Target::Auto;
  throw py::value_error("unknown target '" + name +
                        "'; expected cpu, gpu or auto");
}

fa::Entry entryFromName(const std::string &name) {
  if (name == "forward")
    return fa::Entry::Forward;
  if (name == "backward")
    return fa::Entry::Backward;
  throw py::value_error("entry must be 'forward' or 'backward', got '" + name +
                        "'");
}

/// (data pointer, dtype name, sizes, strides in elements)
using TensorTuple =
    std::tuple<std::uintptr_t, std::string, std::vector<int64_t>,
               std::vector<int64_t>>;

std::unique_ptr<fa::Program>
compile(const std::string &text, const std::string &name,
        std::optional<std::string> dtype, const std::string &target,
        int64_t blockM, int64_t blockN, int64_t mmaBlockN, int64_t mmaWarps,
        bool allowTf32, bool deterministic, std::optional<std::string> entry) {
  fa::CompileOptions options;
  if (entry)
    options.onlyEntry = entryFromName(*entry);
  if (dtype)
    options.dtype = dtypeFromName(*dtype);
  options.target = targetFromName(target);
  options.blockM = blockM;
  options.blockN = blockN;
  options.mmaBlockN = mmaBlockN;
  options.mmaWarps = mmaWarps;
  options.allowTf32 = allowTf32;
  options.deterministic = deterministic;
  std::string error;
  std::unique_ptr<fa::Program> program;
  {
    py::gil_scoped_release release; // compilation takes a while
    program = fa::Program::compile(text, name, options, error);
  }
  if (!program)
    throw py::value_error(error);
  return program;
}

/// The Python callable fa's log lines go to (a strong reference, taken and
/// dropped with the GIL held; never released at exit, so no reference is
/// dropped after the interpreter is gone).
PyObject *logCallable = nullptr;

/// fa's log handler while a Python callable is set: the line to it, under
/// the GIL, from whichever thread logs; to stderr once Python is finalizing
/// or when the callable fails.
void logToPython(const std::string &line) {
  if (Py_IsInitialized()) {
    py::gil_scoped_acquire gil;
    if (PyObject *callable = logCallable) {
      try {
        py::handle handler(callable);
        handler(line);
        return;
      } catch (py::error_already_set &e) {
        e.discard_as_unraisable("fa's log handler");
      }
    }
  }
  std::fprintf(stderr, "%s\n", line.c_str());
}

void setLogHandler(py::object handler) {
  PyObject *previous = logCallable;
  if (handler.is_none()) {
    fa::setLogHandler(nullptr);
    logCallable = nullptr;
  } else {
    logCallable = handler.inc_ref().ptr();
    fa::setLogHandler(&logToPython);
  }
  Py_XDECREF(previous);
}

/// The runtime's tensors of `tensors` (pointers, dtype names, sizes,
/// strides).
std::vector<fa::Tensor> toTensors(const std::vector<TensorTuple> &tensors) {
  std::vector<fa::Tensor> args;
  for (const auto &[data, dtype, sizes, strides] : tensors) {
    fa::Tensor t;
    t.data = reinterpret_cast<void *>(data);
    t.dtype = dtypeFromName(dtype);
    t.sizes = sizes;
    t.strides = strides;
    args.push_back(std::move(t));
  }
  return args;
}

void prepare(fa::Program &program, const std::string &kernel,
             const std::string &entry,
             const std::vector<TensorTuple> &tensors) {
  fa::Entry which = entryFromName(entry);
  std::vector<fa::Tensor> args = toTensors(tensors);
  std::string error;
  bool ok;
  {
    py::gil_scoped_release release; // it may compile a config
    ok = program.prepare(kernel, which, args, error);
  }
  if (!ok)
    throw py::value_error(error);
}

/// Raises a failed run's error: ValueError for its arguments, RuntimeError
/// for the device or a compile.
[[noreturn]] void raiseRunError(const std::string &error,
                                fa::RunFailure failure) {
  if (failure == fa::RunFailure::Arguments)
    throw py::value_error(error);
  throw std::runtime_error(error);
}

void run(fa::Program &program, const std::string &kernel,
         const std::string &entry, const std::vector<TensorTuple> &tensors,
         std::optional<std::uintptr_t> stream) {
  fa::Entry which = entryFromName(entry);
  std::vector<fa::Tensor> args = toTensors(tensors);
  std::string error;
  fa::RunFailure failure;
  bool ok;
  {
    py::gil_scoped_release release;
    ok = program.run(kernel, which, args, error, stream, &failure);
  }
  if (!ok)
    raiseRunError(error, failure);
}

std::unique_ptr<fa::BoundCall> bind(fa::Program &program,
                                    const std::string &kernel,
                                    const std::string &entry,
                                    const std::vector<TensorTuple> &tensors,
                                    std::optional<std::uintptr_t> stream) {
  fa::Entry which = entryFromName(entry);
  std::vector<fa::Tensor> args = toTensors(tensors);
  std::string error;
  fa::RunFailure failure;
  std::unique_ptr<fa::BoundCall> bound;
  {
    py::gil_scoped_release release; // it may compile or tune a config
    bound = program.bind(kernel, which, args, error, stream, &failure);
  }
  if (!bound)
    raiseRunError(error, failure);
  return bound;
}

void runBound(fa::BoundCall &bound, const std::vector<std::uintptr_t> &data,
              std::optional<std::uintptr_t> stream) {
  std::vector<void *> pointers(data.size());
  for (size_t i = 0; i < data.size(); ++i)
    pointers[i] = reinterpret_cast<void *>(data[i]);
  std::string error;
  fa::RunFailure failure;
  bool ok;
  {
    py::gil_scoped_release release;
    ok = bound.run(pointers, error, stream, &failure);
  }
  if (!ok)
    raiseRunError(error, failure);
}

py::dict describe(const fa::KernelInfo &info) {
  py::dict d;
  d["name"] = info.name;
  d["softmax_matmul"] = info.softmaxMatmul;
  d["has_backward"] = info.hasBackward;
  d["causal"] = info.causal;
  d["window"] = info.window ? py::cast(*info.window) : py::none();
  d["sink_tokens"] = info.sinkTokens;
  d["learnable_sinks"] = info.learnableSinks;
  d["key_lengths"] = info.keyLengths;
  d["block_table"] = info.blockTable;
  d["packed_sequences"] = info.packedSequences;
  d["appends"] = info.appends;
  d["scale"] = info.scale ? py::cast(*info.scale) : py::none();
  d["arg_names"] = info.argNames;
  d["arg_sizes"] = info.argSizes;
  return d;
}

} // namespace

PYBIND11_MODULE(_fa, m) {
  m.doc() = "fa's compiler and runtime (use the `fa` package)";
  py::class_<fa::BoundCall>(m, "BoundCall")
      .def("run", &runBound, py::arg("data"), py::arg("stream") = py::none(),
           "Runs the bound entry on these data pointers (bind's order)")
      .def_property_readonly("arity", &fa::BoundCall::arity);
  py::class_<fa::Program>(m, "Program")
      .def_static("compile", &compile, py::arg("text"), py::arg("name"),
                  py::arg("dtype") = py::none(), py::arg("target") = "auto",
                  py::arg("block_m") = 0, py::arg("block_n") = 0,
                  py::arg("mma_block_n") = 0, py::arg("mma_warps") = 0,
                  py::arg("allow_tf32") = false,
                  py::arg("deterministic") = false,
                  py::arg("entry") = py::none())
      .def("run", &run, py::arg("kernel"), py::arg("entry"), py::arg("tensors"),
           py::arg("stream") = py::none())
      .def("prepare", &prepare, py::arg("kernel"), py::arg("entry"),
           py::arg("tensors"))
      // The bound call keeps its program alive.
      .def("bind", &bind, py::arg("kernel"), py::arg("entry"),
           py::arg("tensors"), py::arg("stream") = py::none(),
           py::keep_alive<0, 1>())
      .def_property_readonly("kernels",
                             [](const fa::Program &p) {
                               py::list out;
                               for (const fa::KernelInfo &k : p.kernels())
                                 out.append(describe(k));
                               return out;
                             })
      .def_property_readonly(
          "dtype",
          [](const fa::Program &p) { return fa::dtypeName(p.dtype()); })
      .def_property_readonly("target",
                             [](const fa::Program &p) {
                               return p.target() == fa::Target::GPU ? "gpu"
                                                                    : "cpu";
                             })
      .def_property_readonly("cache_status", &fa::Program::cacheStatus);
  m.def("set_log_handler", &setLogHandler, py::arg("handler"),
        "Sends fa's notes and tuning progress (lines starting 'fa: ') to "
        "handler(line) instead of stderr; None restores stderr");
  m.def(
      "log_line", [](const std::string &line) { fa::logLine(line); },
      py::arg("line"), "Logs `line` as fa's runtime does (for tests)");
  m.def("gpu_available", []() {
    std::string why;
    bool ok = fa::gpuAvailable(&why);
    return py::make_tuple(ok, why);
  });
  m.def("workspace_peak_bytes", &fa::workspacePeakBytes,
        "Most bytes of device workspace fa held at once since the last "
        "reset_workspace_peak().");
  m.def("reset_workspace_peak", &fa::resetWorkspacePeak,
        "Restarts workspace_peak_bytes() from what fa holds now.");
  m.def("release_workspace_memory", &fa::releaseWorkspaceMemory,
        "Gives the device memory fa keeps for its workspaces back to the "
        "driver.");
}
