//===- HostCode.cpp - fa's host code as an object file, JIT-linked -------===//

#include "HostCode.h"

#include "CudaDriver.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <mutex>
#include <tuple>

using namespace fa;

static constexpr llvm::StringLiteral kInit = "__fa_host_init";
static constexpr llvm::StringLiteral kFini = "__fa_host_fini";
static constexpr llvm::StringLiteral kEntryPrefix = "_mlir_ciface_";
static constexpr llvm::StringLiteral kPackedPrefix = "__fa_packed_";

static llvm::Error failure(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static void initializeNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

/// Replaces the global constructor or destructor list `listName` by one
/// external function `name` that calls its entries: constructors by
/// ascending priority (in the list's order where priorities tie),
/// destructors in the reverse order.
static void gatherIntoCaller(llvm::Module &module, llvm::StringRef listName,
                             llvm::StringRef name, bool reverse) {
  // (priority, position in the list, function)
  llvm::SmallVector<std::tuple<uint64_t, size_t, llvm::Function *>> entries;
  llvm::GlobalVariable *list = module.getNamedGlobal(listName);
  if (list && list->hasInitializer())
    if (auto *array =
            llvm::dyn_cast<llvm::ConstantArray>(list->getInitializer()))
      for (llvm::Use &use : array->operands()) {
        auto *entry = llvm::cast<llvm::ConstantStruct>(use.get());
        auto *priority = llvm::cast<llvm::ConstantInt>(entry->getOperand(0));
        if (auto *function = llvm::dyn_cast<llvm::Function>(
                entry->getOperand(1)->stripPointerCasts()))
          entries.push_back(
              {priority->getZExtValue(), entries.size(), function});
      }
  llvm::sort(entries);
  if (reverse)
    std::reverse(entries.begin(), entries.end());
  llvm::LLVMContext &context = module.getContext();
  auto *caller = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(context), false),
      llvm::GlobalValue::ExternalLinkage, name, module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", caller));
  for (auto &entry : entries)
    b.CreateCall(std::get<2>(entry));
  b.CreateRetVoid();
  if (list)
    list->eraseFromParent();
}

/// Adds `__fa_packed_<name>(void **args)` beside each C-interface entry.
static void addPackedEntries(llvm::Module &module) {
  llvm::LLVMContext &context = module.getContext();
  llvm::Type *pointer = llvm::PointerType::getUnqual(context);
  llvm::SmallVector<llvm::Function *> entries;
  for (llvm::Function &function : module)
    if (!function.isDeclaration() &&
        function.getName().starts_with(kEntryPrefix))
      entries.push_back(&function);
  for (llvm::Function *entry : entries) {
    auto *packed = llvm::Function::Create(
        llvm::FunctionType::get(llvm::Type::getVoidTy(context), {pointer},
                                false),
        llvm::GlobalValue::ExternalLinkage,
        kPackedPrefix + entry->getName().drop_front(kEntryPrefix.size()),
        module);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", packed));
    llvm::Value *args = packed->getArg(0);
    llvm::SmallVector<llvm::Value *> values;
    for (llvm::Argument &arg : entry->args()) {
      llvm::Value *slot = b.CreateLoad(
          pointer, b.CreateConstGEP1_64(pointer, args, arg.getArgNo()));
      values.push_back(b.CreateLoad(arg.getType(), slot));
    }
    llvm::Value *result = b.CreateCall(entry, values);
    if (!entry->getReturnType()->isVoidTy())
      b.CreateStore(
          result, b.CreateLoad(pointer, b.CreateConstGEP1_64(
                                            pointer, args, entry->arg_size())));
    b.CreateRetVoid();
  }
}

llvm::Expected<std::string>
fa::emitHostObject(mlir::ModuleOp lowered, const HostObjectOptions &options) {
  initializeNativeTarget();
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module =
      mlir::translateModuleToLLVMIR(lowered, context, "fa-host");
  if (!module)
    return failure("translating the host code to LLVM IR failed");
  llvm::orc::JITTargetMachineBuilder builder{
      llvm::Triple(llvm::sys::getProcessTriple())};
  if (options.hostCpu) {
    auto host = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!host)
      return host.takeError();
    builder = std::move(*host);
  }
  builder.setRelocationModel(llvm::Reloc::PIC_);
  builder.setCodeGenOptLevel(
      options.optLevel == 0   ? llvm::CodeGenOptLevel::None
      : options.optLevel == 1 ? llvm::CodeGenOptLevel::Less
      : options.optLevel == 2 ? llvm::CodeGenOptLevel::Default
                              : llvm::CodeGenOptLevel::Aggressive);
  auto machine = builder.createTargetMachine();
  if (!machine)
    return machine.takeError();
  mlir::ExecutionEngine::setupTargetTripleAndDataLayout(module.get(),
                                                        machine->get());
  if (options.forLoader) {
    gatherIntoCaller(*module, "llvm.global_ctors", kInit, /*reverse=*/false);
    gatherIntoCaller(*module, "llvm.global_dtors", kFini, /*reverse=*/true);
    addPackedEntries(*module);
  }
  for (llvm::Function &function : *module) {
    if (function.isDeclaration())
      continue;
    function.setUWTableKind(llvm::UWTableKind::None);
    function.addFnAttr(llvm::Attribute::NoUnwind);
  }
  if (llvm::Error e = mlir::makeOptimizingTransformer(
          options.optLevel, /*sizeLevel=*/0, machine->get())(module.get()))
    return e;
  llvm::SmallVector<char, 0> object;
  llvm::raw_svector_ostream os(object);
  llvm::legacy::PassManager codegen;
  if ((*machine)->addPassesToEmitFile(codegen, os, nullptr,
                                      llvm::CodeGenFileType::ObjectFile))
    return failure("the host target cannot emit object files");
  codegen.run(*module);
  return std::string(object.begin(), object.end());
}

llvm::Expected<std::unique_ptr<HostCode>> HostCode::load(llvm::StringRef object,
                                                         bool withGpuRuntime) {
  initializeNativeTarget();
  // No platform: the object has no initialisers but __fa_host_init, and
  // nothing of it registers with the process (no atexit, no unwinder).
  auto jit = llvm::orc::LLJITBuilder()
                 .setPlatformSetUp(llvm::orc::setUpInactivePlatform)
                 .create();
  if (!jit)
    return jit.takeError();
  llvm::orc::JITDylib &main = (*jit)->getMainJITDylib();
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      (*jit)->getDataLayout().getGlobalPrefix());
  if (!process)
    return process.takeError();
  main.addGenerator(std::move(*process));
  if (withGpuRuntime) {
    llvm::orc::MangleAndInterner interner((*jit)->getExecutionSession(),
                                          (*jit)->getDataLayout());
    if (llvm::Error e = main.define(
            llvm::orc::absoluteSymbols(cuda::runtimeSymbols(interner))))
      return e;
  }
  if (llvm::Error e = (*jit)->addObjectFile(
          llvm::MemoryBuffer::getMemBufferCopy(object, "fa-host.o")))
    return e;
  auto init = (*jit)->lookup(kInit);
  if (!init)
    return init.takeError();
  auto fini = (*jit)->lookup(kFini);
  if (!fini)
    return fini.takeError();
  std::unique_ptr<HostCode> code(new HostCode());
  code->jit = std::move(*jit);
  code->fini = fini->toPtr<void (*)()>();
  init->toPtr<void (*)()>()();
  return code;
}

HostCode::~HostCode() {
  if (fini)
    fini();
}

llvm::Expected<HostCode::Packed> HostCode::packed(llvm::StringRef name) {
  auto found = jit->lookup((kPackedPrefix + name).str());
  if (!found)
    return found.takeError();
  return found->toPtr<Packed>();
}
