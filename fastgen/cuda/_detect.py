"""Recognising CUDA device arrays without importing any CUDA library.

``is_device_array`` looks only at the object in hand: the CUDA Array Interface
(``__cuda_array_interface__``: CuPy, PyTorch CUDA tensors, numba device arrays), the
DLPack device (``__dlpack_device__()`` naming a CUDA device: JAX and others), or the
device array of numba's CUDA simulator.  Nothing here imports numba.cuda, CuPy or
PyTorch: a library whose array is passed in is already imported by the caller.

``as_numba`` and ``like_caller`` convert at the boundary, without copying: the input
becomes a numba device array for the kernels, and a device result goes back to the
caller as an array of the caller's kind (CuPy array, PyTorch tensor, or the numba
device array itself).
"""

from __future__ import annotations

import sys

import numpy as np

__all__ = ["is_device_array", "as_numba", "like_caller", "DLPACK_CUDA_DEVICES"]

#: DLPack device types of CUDA memory: kDLCUDA (2), kDLCUDAHost (3, pinned host memory,
#: not a device array: excluded) and kDLCUDAManaged (13).
DLPACK_CUDA_DEVICES = (2, 13)


def _is_simulator_array(x) -> bool:
    t = type(x)
    return t.__name__ == "FakeCUDAArray" and t.__module__.startswith("numba")


def is_device_array(x) -> bool:
    """True when ``x`` lives in CUDA device memory.

    Host arrays (numpy, lists, scipy sparse, pandas, CPU tensors) give False at the cost
    of an attribute lookup or two; nothing CUDA-related is imported.
    """
    if x is None or isinstance(x, (np.ndarray, list, tuple)):
        return False
    if _is_simulator_array(x):
        return True
    try:
        # a PyTorch CPU tensor raises AttributeError here (so hasattr is False)
        if hasattr(x, "__cuda_array_interface__"):
            return True
    except Exception:  # noqa: BLE001 - a property that fails means "not a CUDA array"
        return False
    dev = getattr(type(x), "__dlpack_device__", None)
    if dev is None:
        return False
    try:
        kind = int(x.__dlpack_device__()[0])
    except Exception:  # noqa: BLE001
        return False
    return kind in DLPACK_CUDA_DEVICES


def _top_module(x) -> str:
    return type(x).__module__.split(".")[0]


def as_numba(x, name: str = "X"):
    """A numba device array over the memory of device array ``x`` (no copy)."""
    from numba import cuda

    if type(x).__module__.startswith("numba"):  # numba's own (or simulated) array
        return x
    if _top_module(x) == "torch" and getattr(x, "requires_grad", False):
        x = x.detach()  # the interface refuses tensors that require grad
    if hasattr(x, "__cuda_array_interface__"):
        return cuda.as_cuda_array(x)
    # DLPack only: let CuPy (if installed) import it, then take its interface
    try:
        import cupy
    except ImportError:
        raise ValueError(
            f"{name} is a CUDA array that offers DLPack but not __cuda_array_interface__; "
            f"install CuPy (fastgen then converts it without a copy) or pass a CuPy array "
            f"or PyTorch tensor"
        ) from None
    return cuda.as_cuda_array(cupy.from_dlpack(x))


def like_caller(result, x):
    """``result`` (a numba device array) as an array of the kind of ``x``, no copy."""
    mod = _top_module(x)
    if mod == "cupy":
        return sys.modules["cupy"].asarray(result)
    if mod == "torch":
        torch = sys.modules["torch"]
        return torch.as_tensor(result, device=x.device)
    return result
