/* fa_export_runtime.c - the runtime of kernels exported by fa-compile.
 *
 * The host object fa-compile writes beside this file launches its GPU
 * kernels through the mgpu* functions below, implemented here on the CUDA
 * Driver API alone. libcuda.so.1 is opened with dlopen at first use, so a
 * program links without the CUDA toolkit and says clearly why when no GPU
 * is there. Build: cc -c fa_export_runtime.c (link the program with -ldl).
 */
#include "fa_export.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The few Driver API types and constants used (ABI-stable since CUDA 4). */
typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef unsigned long long CUdeviceptr;
enum {
  FA_CU_SUCCESS = 0,
  FA_CU_JIT_ERROR_LOG_BUFFER = 5,
  FA_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  FA_CU_LIMIT_STACK_SIZE = 0,
  FA_CU_STREAM_NON_BLOCKING = 1,
  FA_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
  FA_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16
};

static struct {
  int tried, ok;
  CUcontext context;
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  int multiprocessors;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSetLimit)(int, size_t);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *,
                                 void **);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, unsigned, CUstream,
                             void **, void **);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
  /* Optional (CUDA 12.3 drivers on): names a kernel in a launch error. */
  CUresult (*cuFuncGetName)(const char **, CUfunction);
  /* Optional (CUDA 12 drivers on): only the Hopper kernels need it. */
  CUresult (*cuTensorMapEncodeTiled)(void *, int, unsigned, void *,
                                     const uint64_t *, const uint64_t *,
                                     const uint32_t *, const uint32_t *, int,
                                     int, int, int);
} driver;

static char lastError[4096];
static int failed;

/* Keeps the first failure until fa_export_status() reads it. */
static void fail(const char *what, const char *detail) {
  if (failed)
    return;
  failed = 1;
  snprintf(lastError, sizeof lastError, "%s%s%s", what, detail ? ": " : "",
           detail ? detail : "");
}

static int check(CUresult result, const char *call, const char *context) {
  char detail[1024];
  const char *text = NULL;
  if (result == FA_CU_SUCCESS)
    return 1;
  if (driver.cuGetErrorString)
    driver.cuGetErrorString(result, &text);
  snprintf(detail, sizeof detail, "%s failed%s%s: %d (%s)", call,
           context && *context ? " for " : "", context ? context : "",
           result, text ? text : "unknown error");
  fail(detail, NULL);
  return 0;
}

#define FA_RESOLVE(handle, name, symbol)                                       \
  do {                                                                         \
    *(void **)(&driver.name) = dlsym(handle, symbol);                          \
    if (!driver.name) {                                                        \
      fail("the CUDA driver lacks " symbol, NULL);                             \
      return 0;                                                                \
    }                                                                          \
  } while (0)

/* Opens the driver, once, and makes device 0's primary context current. */
static int openDriver(void) {
  void *handle;
  CUdevice device;
  if (driver.tried)
    return driver.ok;
  driver.tried = 1;
  handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!handle) {
    fail("cannot load the CUDA driver (libcuda.so.1)", dlerror());
    return 0;
  }
  FA_RESOLVE(handle, cuInit, "cuInit");
  FA_RESOLVE(handle, cuDeviceGet, "cuDeviceGet");
  FA_RESOLVE(handle, cuDeviceGetAttribute, "cuDeviceGetAttribute");
  FA_RESOLVE(handle, cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  FA_RESOLVE(handle, cuCtxSetCurrent, "cuCtxSetCurrent");
  FA_RESOLVE(handle, cuCtxSetLimit, "cuCtxSetLimit");
  FA_RESOLVE(handle, cuGetErrorString, "cuGetErrorString");
  FA_RESOLVE(handle, cuModuleLoadDataEx, "cuModuleLoadDataEx");
  FA_RESOLVE(handle, cuModuleUnload, "cuModuleUnload");
  FA_RESOLVE(handle, cuModuleGetFunction, "cuModuleGetFunction");
  FA_RESOLVE(handle, cuFuncSetAttribute, "cuFuncSetAttribute");
  FA_RESOLVE(handle, cuLaunchKernel, "cuLaunchKernel");
  FA_RESOLVE(handle, cuStreamCreate, "cuStreamCreate");
  FA_RESOLVE(handle, cuStreamDestroy, "cuStreamDestroy_v2");
  FA_RESOLVE(handle, cuStreamSynchronize, "cuStreamSynchronize");
  FA_RESOLVE(handle, cuMemAlloc, "cuMemAlloc_v2");
  FA_RESOLVE(handle, cuMemFree, "cuMemFree_v2");
  FA_RESOLVE(handle, cuMemcpyHtoD, "cuMemcpyHtoD_v2");
  FA_RESOLVE(handle, cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  *(void **)(&driver.cuFuncGetName) = dlsym(handle, "cuFuncGetName");
  *(void **)(&driver.cuTensorMapEncodeTiled) =
      dlsym(handle, "cuTensorMapEncodeTiled");
  if (!check(driver.cuInit(0), "cuInit", "") ||
      !check(driver.cuDeviceGet(&device, 0), "cuDeviceGet", "device 0") ||
      !check(driver.cuDevicePrimaryCtxRetain(&driver.context, device),
             "cuDevicePrimaryCtxRetain", "device 0") ||
      !check(driver.cuCtxSetCurrent(driver.context), "cuCtxSetCurrent", "") ||
      /* the scalar fallback kernels keep tile scratch on the stack */
      !check(driver.cuCtxSetLimit(FA_CU_LIMIT_STACK_SIZE, 8192),
             "cuCtxSetLimit", "the stack size"))
    return 0;
  /* 0 where the driver does not say: the split-KV forward then splits
     nothing. */
  if (driver.cuDeviceGetAttribute(&driver.multiprocessors,
                                  FA_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                  device) != 0)
    driver.multiprocessors = 0;
  driver.ok = 1;
  return 1;
}

/* openDriver, then the context made current on this thread too: it is
   current per thread, and entries may be called from any. */
static int ensureDriver(void) {
  static _Thread_local int current;
  if (!openDriver())
    return 0;
  if (!current) {
    if (!check(driver.cuCtxSetCurrent(driver.context), "cuCtxSetCurrent", ""))
      return 0;
    current = 1;
  }
  return 1;
}

/* The mgpu* functions the host object calls (MLIR's GPU-to-LLVM ABI). */

void *mgpuModuleLoadJIT(void *ptx, int optLevel) {
  char log[8192] = {0};
  int options[] = {FA_CU_JIT_ERROR_LOG_BUFFER,
                   FA_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log, (void *)(uintptr_t)sizeof log};
  CUmodule module = NULL;
  (void)optLevel;
  if (!ensureDriver())
    return NULL;
  if (!check(driver.cuModuleLoadDataEx(&module, ptx, 2, options, values),
             "cuModuleLoadDataEx", log[0] ? log : "the exported PTX"))
    return NULL;
  return module;
}

void *mgpuModuleLoad(void *data, size_t size) {
  (void)size;
  return mgpuModuleLoadJIT(data, 4);
}

void mgpuModuleUnload(void *module) {
  if (module && driver.ok)
    driver.cuModuleUnload((CUmodule)module);
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  CUfunction function = NULL;
  if (!module)
    return NULL; /* the load said why */
  check(driver.cuModuleGetFunction(&function, (CUmodule)module, name),
        "cuModuleGetFunction", name);
  return function;
}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t paramsCount) {
  (void)paramsCount;
  if (!function)
    return;
  /* CUDA's grid limits (x below 2^31, y and z at most 65535): a launch past
     them is refused here, by name, rather than truncated to unsigned. */
  if (gridX < 1 || gridX > 2147483647 || gridY < 1 || gridY > 65535 ||
      gridZ < 1 || gridZ > 65535) {
    char detail[256];
    snprintf(detail, sizeof detail,
             "a grid of (%lld, %lld, %lld) blocks is past CUDA's limits "
             "(x at most 2147483647, y and z at most 65535)",
             (long long)gridX, (long long)gridY, (long long)gridZ);
    fail("cannot launch a kernel", detail);
    return;
  }
  if (smem > 48 * 1024 &&
      !check(driver.cuFuncSetAttribute(
                 (CUfunction)function,
                 FA_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem),
             "cuFuncSetAttribute", "dynamic shared memory"))
    return;
  CUresult launched = driver.cuLaunchKernel(
      (CUfunction)function, (unsigned)gridX, (unsigned)gridY, (unsigned)gridZ,
      (unsigned)blockX, (unsigned)blockY, (unsigned)blockZ, (unsigned)smem,
      (CUstream)stream, params, extra);
  if (launched != FA_CU_SUCCESS) {
    const char *name = NULL;
    char context[512];
    if (driver.cuFuncGetName)
      driver.cuFuncGetName(&name, (CUfunction)function);
    snprintf(context, sizeof context, "kernel %s", name ? name : "(unnamed)");
    check(launched, "cuLaunchKernel", context);
  }
}

/* The device's SMs, which the split-KV forward's host code sizes its grid
   by (the entries open the driver before any host code runs). */
int32_t faMultiprocessorCount(void) { return driver.multiprocessors; }

/* The tensor map of a [batch, heads, rows, columns] operand for the Hopper
   kernels (as fa's runtime makes it): returns 0, with the error kept, when
   the driver refuses it, and the host object then launches nothing. */
int32_t faTensorMapEncode(void *map, uint64_t address, int64_t operand,
                          int64_t elementBytes, int64_t swizzleBytes,
                          int64_t boxColumns, int64_t boxRows,
                          int64_t columns, int64_t rows, int64_t heads,
                          int64_t batch, int64_t rowStride,
                          int64_t headStride, int64_t batchStride) {
  /* CU_TENSOR_MAP_DATA_TYPE_UINT8/UINT16/FLOAT32 are 0/1/7 (four-byte
     elements are the f32 dQ accumulator, which TMA adds into); the swizzles
     32/64/128 bytes are 1/2/3; no interleave, 256-byte L2 promotion (3),
     zero fill (0). */
  static const char *const names[] = {"q", "k", "v", "do", "dq accumulator"};
  char context[256];
  uint64_t dims[4], strides[3];
  uint32_t box[4], unit[4] = {1, 1, 1, 1};
  int type = elementBytes == 2 ? 1 : elementBytes == 4 ? 7 : 0;
  int swizzle = swizzleBytes == 128 ? 3 : swizzleBytes == 64 ? 2 : 1;
  const char *name = operand >= 0 && operand < 5 ? names[operand] : "operand";
  if (!driver.cuTensorMapEncodeTiled) {
    snprintf(context, sizeof context,
             "the CUDA driver lacks cuTensorMapEncodeTiled, which the Hopper "
             "kernels need for %s (a CUDA 12 driver or newer has it)",
             name);
    fail(context, NULL);
    return 0;
  }
  dims[0] = (uint64_t)columns;
  dims[1] = (uint64_t)rows;
  dims[2] = (uint64_t)heads;
  dims[3] = (uint64_t)batch;
  strides[0] = (uint64_t)rowStride;
  strides[1] = (uint64_t)headStride;
  strides[2] = (uint64_t)batchStride;
  box[0] = (uint32_t)boxColumns;
  box[1] = (uint32_t)boxRows;
  box[2] = box[3] = 1;
  snprintf(context, sizeof context,
           "%s of shape [%lld, %lld, %lld, %lld], byte strides [%lld, %lld, "
           "%lld, %lld]",
           name, (long long)batch, (long long)heads, (long long)rows,
           (long long)columns, (long long)batchStride, (long long)headStride,
           (long long)rowStride, (long long)elementBytes);
  return check(driver.cuTensorMapEncodeTiled(map, type, 4, (void *)address,
                                             dims, strides, box, unit, 0,
                                             swizzle, 3, 0),
               "cuTensorMapEncodeTiled", context);
}

void *mgpuStreamCreate(void) {
  CUstream stream = NULL;
  if (ensureDriver())
    check(driver.cuStreamCreate(&stream, FA_CU_STREAM_NON_BLOCKING),
          "cuStreamCreate", "");
  return stream;
}

void mgpuStreamDestroy(void *stream) {
  if (stream)
    driver.cuStreamDestroy((CUstream)stream);
}

void mgpuStreamSynchronize(void *stream) {
  if (stream)
    check(driver.cuStreamSynchronize((CUstream)stream),
          "cuStreamSynchronize", "the launched kernels");
}

void *mgpuMemAlloc(uint64_t bytes, void *stream, int hostShared) {
  CUdeviceptr pointer = 0;
  (void)stream;
  (void)hostShared;
  if (bytes == 0 || !ensureDriver())
    return NULL;
  check(driver.cuMemAlloc(&pointer, bytes), "cuMemAlloc", "a workspace");
  return (void *)(uintptr_t)pointer;
}

void mgpuMemFree(void *pointer, void *stream) {
  (void)stream;
  if (pointer)
    check(driver.cuMemFree((CUdeviceptr)(uintptr_t)pointer), "cuMemFree",
          "a workspace");
}

/* The public helpers of fa_export.h. */

/* A dimension name's size, as the first argument that has it gave it. */
typedef struct {
  char name[16];
  int64_t size;
  const char *owner;
} NamedSize;

/* Reports a bad argument (not a driver failure: the pending status stays
 * as it is) and returns -1. */
static int refuse(const char *entry, const char *format, ...) {
  char detail[1024];
  va_list list;
  va_start(list, format);
  vsnprintf(detail, sizeof detail, format, list);
  va_end(list);
  snprintf(lastError, sizeof lastError, "%s: %s", entry, detail);
  return -1;
}

int fa_export_check_args(const char *entry, const fa_export_arg *args,
                         int count) {
  NamedSize known[32];
  int numKnown = 0;
  for (int i = 0; i < count; ++i) {
    const fa_export_arg *arg = &args[i];
    if (!arg->tensor || !arg->sizes || !arg->strides)
      return refuse(entry, "'%s' is NULL", arg->name);
    if (!arg->data)
      return refuse(entry, "'%s' has no data (NULL device pointer)",
                    arg->name);
    if (arg->strides[arg->rank - 1] != 1)
      return refuse(entry,
                    "'%s' has stride %lld in its last dimension; fa's "
                    "exports take unit stride there",
                    arg->name, (long long)arg->strides[arg->rank - 1]);
    const char *dims = arg->dims;
    for (int d = 0; d < arg->rank; ++d) {
      char name[16];
      int length = 0;
      while (*dims == ' ')
        ++dims;
      while (*dims && *dims != ' ' && length < 15)
        name[length++] = *dims++;
      name[length] = '\0';
      int64_t size = arg->sizes[d];
      if (size < 1)
        return refuse(entry, "'%s' has %s = %lld (dimension %d); fa needs "
                      "non-empty tensors", arg->name, name, (long long)size, d);
      if (arg->fixed[d] >= 0 && size != arg->fixed[d])
        return refuse(entry, "'%s' has %s = %lld (dimension %d); the spec "
                      "fixes it to %lld", arg->name, name, (long long)size, d,
                      (long long)arg->fixed[d]);
      int k = 0;
      while (k < numKnown && strcmp(known[k].name, name) != 0)
        ++k;
      if (k == numKnown) {
        if (numKnown == (int)(sizeof known / sizeof known[0]))
          return refuse(entry, "too many dimension names");
        memcpy(known[k].name, name, (size_t)length + 1);
        known[k].size = size;
        known[k].owner = arg->name;
        ++numKnown;
      } else if (known[k].size != size) {
        return refuse(entry, "'%s' has %s = %lld (dimension %d), but '%s' "
                      "has %s = %lld", arg->name, name, (long long)size, d,
                      known[k].owner, name, (long long)known[k].size);
      }
    }
  }
  const NamedSize *hq = NULL, *hkv = NULL;
  for (int k = 0; k < numKnown; ++k) {
    if (!strcmp(known[k].name, "Hq"))
      hq = &known[k];
    else if (!strcmp(known[k].name, "Hkv"))
      hkv = &known[k];
  }
  if (hq && hkv && hq->size % hkv->size != 0)
    return refuse(entry, "query heads (Hq = %lld) must be a multiple of "
                  "key/value heads (Hkv = %lld)", (long long)hq->size,
                  (long long)hkv->size);
  return 0;
}

int fa_export_status(void) {
  int status = failed ? -1 : 0;
  failed = 0;
  return status;
}

const char *fa_export_last_error(void) { return lastError; }

void *fa_export_device_alloc(size_t bytes) {
  CUdeviceptr pointer = 0;
  if (!ensureDriver() ||
      !check(driver.cuMemAlloc(&pointer, bytes ? bytes : 1), "cuMemAlloc",
             "fa_export_device_alloc"))
    return NULL;
  return (void *)(uintptr_t)pointer;
}

void fa_export_device_free(void *pointer) {
  if (pointer && driver.ok)
    driver.cuMemFree((CUdeviceptr)(uintptr_t)pointer);
}

int fa_export_copy_to_device(void *device, const void *host, size_t bytes) {
  return ensureDriver() &&
                 check(driver.cuMemcpyHtoD((CUdeviceptr)(uintptr_t)device,
                                           host, bytes),
                       "cuMemcpyHtoD", "fa_export_copy_to_device")
             ? 0
             : -1;
}

int fa_export_copy_to_host(void *host, const void *device, size_t bytes) {
  return ensureDriver() &&
                 check(driver.cuMemcpyDtoH(
                           host, (CUdeviceptr)(uintptr_t)device, bytes),
                       "cuMemcpyDtoH", "fa_export_copy_to_host")
             ? 0
             : -1;
}
