#!/usr/bin/env python3
"""Stand-ins for CUDA's libraries, so that PyPI's torch imports on a CPU.

PyPI's Linux torch is one build for CPU and CUDA: libtorch_cuda.so and
libtorch_python.so name CUDA's libraries (cudart, cuBLAS, cuDNN, NCCL, ...)
as DT_NEEDED, which its nvidia-* dependencies ship, about 1.8 GB of wheels.
A run on the CPU calls none of them, so this writes, for every such library
that torch's own folder lacks, a small one of the same soname that defines
every symbol torch takes from it, at the symbol versions torch asks for
(readelf's .gnu.version_r), and preloads them from a .pth file of the venv:
the dynamic loader then finds each soname already loaded. The CPU kernels
are torch's own, untouched. Every stand-in function aborts with its name,
so a call that should never happen cannot return a wrong answer; only the
fat-binary registration that CUDA code runs when a library loads
(__cudaRegisterFatBinary and its kin) returns, doing nothing.

Usage: python cuda_stubs.py OUTDIR (with the venv's python, after torch is
installed; needs readelf and cc). make pyjudge-torch runs it.
"""
import collections
import glob
import importlib.util
import os
import re
import subprocess
import sys
import sysconfig

# Libraries of the CUDA toolkit and its companions, by soname prefix.
CUDA_SONAME = re.compile(r"lib(cu|nv|nccl)")
# Which library an unversioned symbol comes from, by its prefix: NCCL,
# cuSPARSELt, cuFile, cuRAND and NVSHMEM version none of theirs, and the
# driver API's functions are cuXxx.
UNVERSIONED_OWNER = [
    (r"nccl", "libnccl.so.2"),
    (r"cusparseLt", "libcusparseLt.so.0"),
    (r"cuFile", "libcufile.so.0"),
    (r"curand", "libcurand.so.10"),
    (r"nvshmem", "libnvshmem_host.so.3"),
    (r"cu[A-Z]", "libcuda.so.1"),
]


def readelf(flag, path):
    return subprocess.run(["readelf", flag, "-W", path], check=True,
                          capture_output=True, text=True).stdout


def torch_libraries():
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        sys.exit(f"cuda_stubs: {sys.executable} has no torch installed")
    root = spec.submodule_search_locations[0]
    return glob.glob(os.path.join(root, "lib", "*.so*")) + glob.glob(os.path.join(root, "_C*.so"))


def scan(libs):
    """What torch's libraries need from outside their folder: sonames, the
    version names asked of each, and the symbols asked at each version."""
    needed, versions = set(), collections.defaultdict(set)
    versioned, plain, defined = collections.defaultdict(set), set(), set()
    for lib in libs:
        needed |= set(re.findall(r"Shared library: \[(.*?)\]", readelf("-d", lib)))
        owner = None
        for line in readelf("-V", lib).splitlines():
            if m := re.search(r"File: (\S+)", line):
                owner = m.group(1)
            elif (m := re.search(r"Name: (\S+)", line)) and owner:
                versions[owner].add(m.group(1))
        for line in readelf("--dyn-syms", lib).splitlines():
            f = line.split()
            if len(f) < 8 or not f[0].endswith(":"):
                continue
            name, _, version = f[7].partition("@")
            if f[6] != "UND":
                defined.add(name)
            elif version:
                versioned[version.lstrip("@")].add(name)
            else:
                plain.add(name)
    present = {os.path.basename(p) for p in libs}
    missing = sorted(n for n in needed - present if CUDA_SONAME.match(n))
    symbols = collections.defaultdict(set)
    for so in missing:
        for version in versions[so]:
            symbols[so] |= versioned[version]
    for name in plain - defined:
        for pattern, so in UNVERSIONED_OWNER:
            if re.match(pattern, name):
                symbols[so].add(name)
                break
    return missing, versions, versioned, symbols


def build(outdir, so, versions, versioned, symbols):
    src, script = os.path.join(outdir, so + ".c"), os.path.join(outdir, so + ".map")
    with open(src, "w") as f:
        f.write("extern int dprintf(int, const char *, ...);\nextern void abort(void);\n")
        for name in sorted(symbols):
            if name.startswith("__cuda"):
                f.write(f"void *{name}(void) {{ return 0; }}\n")
            else:
                f.write(f'void {name}(void) {{ dprintf(2, "{so}: {name} called, '
                        f'but this torch has only stand-ins for CUDA (make pyjudge-torch)\\n"); abort(); }}\n')
    args = ["cc", "-shared", "-fPIC", "-w", "-o", os.path.join(outdir, so), src, "-Wl,-soname," + so]
    if versions:
        with open(script, "w") as f:
            for version in sorted(versions):
                names = " ".join(n + ";" for n in sorted(versioned[version]))
                f.write(f"{version} {{ global: {names} }};\n" if names else f"{version} {{ }};\n")
        args.append("-Wl,--version-script=" + script)
    subprocess.run(args, check=True)
    for path in (src, script):
        if os.path.exists(path):
            os.remove(path)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    outdir = os.path.abspath(sys.argv[1])
    os.makedirs(outdir, exist_ok=True)
    missing, versions, versioned, symbols = scan(torch_libraries())
    for so in missing:
        build(outdir, so, versions[so], versioned, symbols[so])
    # A .pth line that starts with "import" runs as the interpreter starts.
    site = sysconfig.get_paths()["purelib"]
    with open(os.path.join(site, "whestbake_cuda_stubs.py"), "w") as f:
        f.write('"""Loads the stand-ins for CUDA\'s libraries that internal/bench/cuda_stubs.py '
                'wrote, before torch can ask for them."""\n'
                "import ctypes\nimport glob\n\n"
                f"for _path in sorted(glob.glob({os.path.join(outdir, 'lib*')!r})):\n"
                "    ctypes.CDLL(_path, ctypes.RTLD_GLOBAL)\n")
    with open(os.path.join(site, "whestbake_cuda_stubs.pth"), "w") as f:
        f.write("import whestbake_cuda_stubs\n")
    print(f"cuda_stubs: {len(missing)} stand-ins in {outdir}: {' '.join(missing)}")


if __name__ == "__main__":
    main()
