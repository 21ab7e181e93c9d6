"""Whether this machine can run a GPU test for an architecture."""

import os
import subprocess


def unusable(tfm_run, arch):
    """None when tfm-run sees a device that runs ARCH's cubins and the CUDA
    toolkit is there to compile with; otherwise why not."""
    info = subprocess.run([tfm_run, "--gpu-info"], capture_output=True,
                          text=True)
    if info.returncode != 0:
        return f"no usable GPU ({info.stderr.strip()})"
    libdevice = "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc"
    if not os.path.exists(libdevice):
        return f"no CUDA toolkit ({libdevice}) to compile with"
    device = info.stdout.strip()
    device_arch = int(device.rsplit("sm_", 1)[1])
    wanted = int(arch.split("_")[1])
    # A cubin runs on its own major architecture only (sm_80 on sm_86, not on
    # sm_90, where the driver would JIT the PTX instead).
    if wanted > device_arch or wanted // 10 != device_arch // 10:
        return f"{device} does not run {arch} cubins"
    return None
