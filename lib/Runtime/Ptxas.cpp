//===- Ptxas.cpp - Kernels assembled by ptxas ahead of the driver ---------===//

#include "Ptxas.h"

#include "fa/Conversion/Pipelines.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir;

namespace fa {

std::string findPtxas() {
  if (const char *chosen = std::getenv("FA_PTXAS"))
    return chosen;
  std::string root = findCudaRoot();
  if (!root.empty()) {
    llvm::SmallString<128> path(root);
    llvm::sys::path::append(path, "bin", "ptxas");
    if (llvm::sys::fs::can_execute(path))
      return std::string(path);
  }
  llvm::ErrorOr<std::string> onPath = llvm::sys::findProgramByName("ptxas");
  return onPath ? *onPath : "";
}

/// Runs `argv` with its output in a temporary file; that output.
static std::string outputOf(llvm::StringRef program,
                            llvm::ArrayRef<llvm::StringRef> argv) {
  llvm::SmallString<128> out;
  if (llvm::sys::fs::createTemporaryFile("fa-ptxas", "txt", out))
    return "";
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, out.str(),
                                                out.str()};
  int rc = llvm::sys::ExecuteAndWait(program, argv, std::nullopt, redirects,
                                     /*SecondsToWait=*/30);
  auto text = llvm::MemoryBuffer::getFile(out);
  llvm::sys::fs::remove(out);
  return rc == 0 && text ? (*text)->getBuffer().str() : "";
}

int ptxasRelease(llvm::StringRef ptxas) {
  std::string version = outputOf(ptxas, {ptxas, "--version"});
  llvm::SmallVector<llvm::StringRef, 3> match;
  if (!llvm::Regex("release ([0-9]+)\\.([0-9]+)").match(version, &match))
    return 0;
  int major = 0, minor = 0;
  if (match[1].getAsInteger(10, major) || match[2].getAsInteger(10, minor))
    return 0;
  return major * 1000 + minor * 10;
}

bool assemblePtx(llvm::StringRef ptxas, llvm::StringRef arch,
                 llvm::StringRef name, llvm::StringRef ptx, std::string &cubin,
                 std::string &error) {
  llvm::SmallString<128> ptxPath, cubinPath, logPath;
  if (llvm::sys::fs::createTemporaryFile("fa-kernel", "ptx", ptxPath) ||
      llvm::sys::fs::createTemporaryFile("fa-kernel", "cubin", cubinPath) ||
      llvm::sys::fs::createTemporaryFile("fa-kernel", "log", logPath)) {
    error = "no temporary file for ptxas";
    return false;
  }
  auto cleanup = [&] {
    for (llvm::StringRef path : {ptxPath.str(), cubinPath.str(), logPath.str()})
      llvm::sys::fs::remove(path);
  };
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(ptxPath, ec);
    if (ec) {
      cleanup();
      error = "cannot write " + ptxPath.str().str() + ": " + ec.message();
      return false;
    }
    out << ptx;
  }
  std::string archFlag = ("-arch=" + arch).str();
  llvm::StringRef argv[] = {ptxas, archFlag, ptxPath, "-o", cubinPath};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, logPath.str(),
                                                logPath.str()};
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(ptxas, argv, std::nullopt, redirects,
                                     /*SecondsToWait=*/300, 0, &message);
  auto log = llvm::MemoryBuffer::getFile(logPath);
  auto binary = llvm::MemoryBuffer::getFile(cubinPath, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  cleanup();
  if (rc != 0 || !binary) {
    error =
        "ptxas failed on " + name.str() + " (exit " + std::to_string(rc) +
        (message.empty() ? "" : ", " + message) + ")" +
        (log ? ": " + llvm::StringRef((*log)->getBuffer()).trim().str() : "");
    return false;
  }
  cubin = (*binary)->getBuffer().str();
  return true;
}

int assembleKernels(ModuleOp module, llvm::StringRef ptxas,
                    llvm::StringRef arch, std::string &note) {
  struct Job {
    gpu::BinaryOp binary;
    unsigned index;
    std::string name, ptx, cubin, error;
    bool ok = false;
  };
  std::vector<Job> jobs;
  module.walk([&](gpu::BinaryOp binary) {
    for (auto [i, object] : llvm::enumerate(binary.getObjects())) {
      auto attr = cast<gpu::ObjectAttr>(object);
      if (attr.getFormat() != gpu::CompilationTarget::Assembly)
        continue;
      Job &job = jobs.emplace_back();
      job.binary = binary;
      job.index = static_cast<unsigned>(i);
      job.name = binary.getSymName().str();
      job.ptx = attr.getObject().getValue().str();
    }
  });
  // One process per kernel: ptxas is single-threaded, and each thread here
  // only waits for its process.
  llvm::ThreadPoolStrategy threads = llvm::hardware_concurrency(jobs.size());
  threads.Limit = true; // no more processes at once than cores
  llvm::StdThreadPool pool(threads);
  for (Job &job : jobs)
    pool.async([&job, ptxas, arch] {
      job.ok =
          assemblePtx(ptxas, arch, job.name, job.ptx, job.cubin, job.error);
    });
  pool.wait();
  int assembled = 0;
  for (Job &job : jobs) {
    if (!job.ok) {
      note += (note.empty() ? "" : "; ") + job.error;
      continue;
    }
    SmallVector<Attribute> objects(job.binary.getObjects().begin(),
                                   job.binary.getObjects().end());
    auto ptx = cast<gpu::ObjectAttr>(objects[job.index]);
    objects[job.index] = gpu::ObjectAttr::get(
        module.getContext(), ptx.getTarget(), gpu::CompilationTarget::Binary,
        StringAttr::get(module.getContext(), job.cubin), ptx.getProperties(),
        ptx.getKernels());
    job.binary.setObjectsAttr(ArrayAttr::get(module.getContext(), objects));
    ++assembled;
  }
  return assembled;
}

} // namespace fa
