# The repro without torch: device memory through ctypes, fa's Program directly.
import ctypes, gc, os, sys
sys.modules["torch"] = None
import numpy as np
from fa import _fa
from fa.spec import attention_spec
D = int(os.environ.get("REPRO_D", "32"))
text = attention_spec("attention", "f32", True, D, causal=True, window=16)
prog = _fa.Program.compile(text, "<repro>", dtype="f32", target="gpu")
cuda = ctypes.CDLL("libcuda.so.1")
rng = np.random.default_rng(0)
def dev(shape, fill=True):
    a = rng.standard_normal(shape).astype(np.float32) if fill else np.full(shape, np.nan, np.float32)
    p = ctypes.c_uint64()
    assert cuda.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(a.nbytes)) == 0
    assert cuda.cuMemcpyHtoD_v2(p, a.ctypes.data_as(ctypes.c_void_p), ctypes.c_size_t(a.nbytes)) == 0
    strides = [int(s // 4) for s in a.strides]
    return (p.value, "f32", list(shape), strides)
q, k, v = dev((2, 8, 45, D)), dev((2, 2, 45, D)), dev((2, 2, 45, D))
s = dev((8,)); o = dev((2, 8, 45, D), False); lse = dev((2, 8, 45), False)
prog.run("attention", "forward", [q, k, v, s, o, lse])
assert cuda.cuCtxSynchronize() == 0
print("ran", flush=True)
del prog; gc.collect()
print("destroyed", flush=True)
try:
    _fa.Program.compile("fa.kernel @k { garbage }", "<garbage>", target="gpu")
except Exception as e:
    print("compile error (expected):", str(e)[:80])
print("repro survived")
