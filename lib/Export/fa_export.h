/* fa_export.h - what every export of fa-compile shares: strided tensor
 * descriptors and the runtime's status and device-memory helpers. The
 * per-spec header fa-compile writes includes it.
 */
#ifndef FA_EXPORT_H
#define FA_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A strided tensor as the exported entry points take it (MLIR's memref
 * descriptor): sizes and strides count elements; data is device memory. */
#define FA_EXPORT_TENSOR(rank)                                                 \
  typedef struct {                                                             \
    void *allocated;                                                           \
    void *data;                                                                \
    int64_t offset;                                                            \
    int64_t sizes[rank];                                                       \
    int64_t strides[rank];                                                     \
  } fa_tensor##rank
FA_EXPORT_TENSOR(1);
FA_EXPORT_TENSOR(3);
FA_EXPORT_TENSOR(4);
#undef FA_EXPORT_TENSOR

/* One argument of an exported entry point, as its wrapper checks it. */
typedef struct {
  const char *name;      /* its name in the spec: "q" */
  const void *tensor;    /* its descriptor (NULL is refused) */
  const void *data;
  int rank;
  const int64_t *sizes;
  const int64_t *strides;
  const char *dims;      /* its dimensions' names: "B Hq Sq D" */
  const int64_t *fixed;  /* the sizes the spec fixes, -1 where it does not */
} fa_export_arg;

/* 0 when `args` fit `entry`'s spec: descriptors and data present, sizes
 * >= 1, unit stride on the last dimension, the sizes the spec fixes, one
 * size for each dimension name, and Hq a multiple of Hkv. Else -1, and
 * fa_export_last_error() names the argument and dimension at fault. */
int fa_export_check_args(const char *entry, const fa_export_arg *args,
                         int count);

/* 0 when every driver call since the last call succeeded; else -1 and
 * fa_export_last_error() says which call failed and why. */
int fa_export_status(void);
const char *fa_export_last_error(void);

/* Device memory through the same driver (NULL / -1 on failure). */
void *fa_export_device_alloc(size_t bytes);
void fa_export_device_free(void *pointer);
int fa_export_copy_to_device(void *device, const void *host, size_t bytes);
int fa_export_copy_to_host(void *host, const void *device, size_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* FA_EXPORT_H */
