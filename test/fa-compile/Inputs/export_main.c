/* A C program against an fa-compile export of kernels_spec/causal.mlir in
 * f16 (built with the system C compiler: no MLIR on its include or link
 * line). Runs the causal forward on fresh random inputs, outputs poisoned
 * first, and compares o and lse with a float64 reference. Exit status: 0
 * when both match, 1 when they do not, 2 when the GPU cannot be used (the
 * runtime's message on stderr). With --bad-shapes, calls the forward with
 * wrong arguments instead (no GPU needed: they are refused before any
 * launch) and prints each refusal; exit status 1 if one is accepted. With
 * --valid-without-gpu (only where there is no GPU: its pointers are fake),
 * makes one valid call, which passes the checks and fails to launch. */
#include "causal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t seed = 12345;
static float uniform(void) { /* in [-1, 1) */
  seed = seed * 1664525u + 1013904223u;
  return (float)(seed >> 8) / 8388608.0f - 1.0f;
}

/* IEEE half <-> float, round to nearest even (normal range only). */
static uint16_t toHalf(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  int32_t exponent = (int32_t)((x >> 23) & 0xff) - 127 + 15;
  uint32_t mantissa = x & 0x7fffffu;
  if (exponent <= 0)
    return (uint16_t)sign;
  uint32_t h = sign | ((uint32_t)exponent << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
    ++h;
  return (uint16_t)h;
}
static double fromHalf(uint16_t h) {
  int exponent = (h >> 10) & 0x1f;
  double value = exponent ? ldexp(1.0 + (h & 0x3ff) / 1024.0, exponent - 15)
                          : ldexp((h & 0x3ff) / 1024.0, -14);
  return (h & 0x8000) ? -value : value;
}

static fa_tensor4 tensor4(void *data, int64_t b, int64_t h, int64_t s,
                          int64_t d) {
  fa_tensor4 t = {data, data, 0, {b, h, s, d}, {h * s * d, s * d, d, 1}};
  return t;
}

/* One causal forward of shape (B, Hq, Hkv, Sq, Sk, D); 0 when it matches. */
static int run(int64_t B, int64_t Hq, int64_t Hkv, int64_t Sq, int64_t Sk,
               int64_t D) {
  size_t nq = (size_t)(B * Hq * Sq * D), nk = (size_t)(B * Hkv * Sk * D);
  size_t nl = (size_t)(B * Hq * Sq);
  uint16_t *q = malloc(nq * 2), *k = malloc(nk * 2), *v = malloc(nk * 2);
  uint16_t *o = malloc(nq * 2);
  float *lse = malloc(nl * 4);
  for (size_t i = 0; i < nq; ++i)
    q[i] = toHalf(uniform());
  for (size_t i = 0; i < nk; ++i) {
    k[i] = toHalf(uniform());
    v[i] = toHalf(uniform());
  }
  void *dq = fa_export_device_alloc(nq * 2), *dk = fa_export_device_alloc(nk * 2);
  void *dv = fa_export_device_alloc(nk * 2), *dO = fa_export_device_alloc(nq * 2);
  void *dl = fa_export_device_alloc(nl * 4);
  memset(o, 0xff, nq * 2); /* NaN */
  memset(lse, 0xff, nl * 4);
  if (!dq || !dk || !dv || !dO || !dl ||
      fa_export_copy_to_device(dq, q, nq * 2) ||
      fa_export_copy_to_device(dk, k, nk * 2) ||
      fa_export_copy_to_device(dv, v, nk * 2) ||
      fa_export_copy_to_device(dO, o, nq * 2) ||
      fa_export_copy_to_device(dl, lse, nl * 4)) {
    fprintf(stderr, "export: %s\n", fa_export_last_error());
    return 2;
  }
  fa_tensor4 tq = tensor4(dq, B, Hq, Sq, D), tk = tensor4(dk, B, Hkv, Sk, D);
  fa_tensor4 tv = tensor4(dv, B, Hkv, Sk, D), to = tensor4(dO, B, Hq, Sq, D);
  fa_tensor3 tl = {dl, dl, 0, {B, Hq, Sq}, {Hq * Sq, Sq, 1}};
  if (fa_causal_forward(&tq, &tk, &tv, &to, &tl) ||
      fa_export_copy_to_host(o, dO, nq * 2) ||
      fa_export_copy_to_host(lse, dl, nl * 4)) {
    fprintf(stderr, "export: %s\n", fa_export_last_error());
    return 2;
  }

  double maxErr = 0, maxRef = 0, maxLseErr = 0;
  double *p = malloc((size_t)Sk * sizeof(double));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h)
      for (int64_t i = 0; i < Sq; ++i) {
        const uint16_t *qi = q + ((b * Hq + h) * Sq + i) * D;
        const uint16_t *kh = k + (b * Hkv + h / (Hq / Hkv)) * Sk * D;
        const uint16_t *vh = v + (b * Hkv + h / (Hq / Hkv)) * Sk * D;
        int64_t last = i + (Sk - Sq); /* bottom-right aligned */
        double m = -INFINITY, l = 0;
        for (int64_t j = 0; j <= last; ++j) {
          double s = 0;
          for (int64_t d = 0; d < D; ++d)
            s += fromHalf(qi[d]) * fromHalf(kh[j * D + d]);
          p[j] = s / sqrt((double)D);
          m = fmax(m, p[j]);
        }
        for (int64_t j = 0; j <= last; ++j)
          l += (p[j] = exp(p[j] - m));
        for (int64_t d = 0; d < D; ++d) {
          double ref = 0;
          for (int64_t j = 0; j <= last; ++j)
            ref += p[j] * fromHalf(vh[j * D + d]);
          ref /= l;
          double got = fromHalf(o[((b * Hq + h) * Sq + i) * D + d]);
          double err = fabs(got - ref);
          maxErr = isnan(got) || err > maxErr ? (isnan(got) ? INFINITY : err)
                                              : maxErr;
          maxRef = fmax(maxRef, fabs(ref));
        }
        double lseErr = fabs(lse[(b * Hq + h) * Sq + i] - (m + log(l)));
        maxLseErr = isnan(lseErr) || lseErr > maxLseErr
                        ? (isnan(lseErr) ? INFINITY : lseErr)
                        : maxLseErr;
      }
  double rel = maxErr / maxRef;
  int ok = rel < 5e-3 && maxLseErr < 1e-3;
  printf("export causal forward f16 shape=%lld,%lld,%lld,%lld,%lld,%lld "
         "o=%.2e lse=%.2e %s\n",
         (long long)B, (long long)Hq, (long long)Hkv, (long long)Sq,
         (long long)Sk, (long long)D, rel, maxLseErr, ok ? "ok" : "FAIL");
  fa_export_device_free(dq);
  fa_export_device_free(dk);
  fa_export_device_free(dv);
  fa_export_device_free(dO);
  fa_export_device_free(dl);
  free(q), free(k), free(v), free(o), free(lse), free(p);
  return ok ? 0 : 1;
}

/* Each case breaks one thing about a valid (2, 4, 2, 4, 6, 64) call; case
 * -1 is that call. */
static int badShapes(int valid) {
  static char dummy[16]; /* never read: the checks refuse the call first */
  for (int c = valid ? -1 : 0; c < (valid ? 0 : 9); ++c) {
    fa_tensor4 tq = tensor4(dummy, 2, 4, 4, 64), tk = tensor4(dummy, 2, 2, 6, 64);
    fa_tensor4 tv = tensor4(dummy, 2, 2, 6, 64), to = tensor4(dummy, 2, 4, 4, 64);
    fa_tensor3 tl = {dummy, dummy, 0, {2, 4, 4}, {16, 4, 1}};
    fa_tensor4 *o = &to;
    switch (c) {
    case 0: tk.sizes[0] = 3; break;        /* batch */
    case 1: tv.sizes[3] = 32; break;       /* head dim */
    case 2: tq.sizes[1] = to.sizes[1] = tl.sizes[1] = 3; break; /* Hq % Hkv */
    case 3: o = NULL; break;
    case 4: tq.strides[3] = 2; break;
    case 5: tq.sizes[2] = 0; break;
    case 6: tl.sizes[2] = 5; break;        /* lse rows */
    case 7: tk.data = NULL; break;
    case 8: tv.sizes[2] = 7; break;        /* k and v lengths */
    }
    if (c == -1) {
      int status = fa_causal_forward(&tq, &tk, &tv, o, &tl);
      printf("valid call: %d %s\n", status, fa_export_last_error());
      return 0;
    }
    if (fa_causal_forward(&tq, &tk, &tv, o, &tl) == 0) {
      printf("case %d accepted\n", c);
      return 1;
    }
    printf("refused: %s\n", fa_export_last_error());
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--bad-shapes") == 0)
    return badShapes(0);
  if (argc > 1 && strcmp(argv[1], "--valid-without-gpu") == 0)
    return badShapes(1);
  int status = run(1, 2, 2, 200, 200, 64); /* the tensor-core kernel */
  if (status == 2)
    return 2;
  status |= run(2, 4, 2, 77, 130, 32); /* GQA, Sq < Sk, scalar path */
  return status;
}
