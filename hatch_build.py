"""Hatchling build hook: a wheel carries libPyMetal and everything it needs at run time.

`pip wheel .` (or `pip install .`, or a build from the sdist) runs this before
packing. It builds, into `.build/wheel/` so that a developer's `.build/release`
is left alone:

    pymetal/lib/libPyMetal.{so,dylib}   the C ABI Python loads (found by pymetal/_native.py)
    pymetal/lib/pymetal-cpu.metallib    pymetal's kernels (Linux; pymetal.metallib on a Mac with the Metal toolchain)
    pymetal/lib/shaders/                Shaders/, for kernel families compiled on first use
    pymetal/lib/msl/                    MetalCPU's MSL headers (Linux), found next to libPyMetal

On Linux the Swift runtime and FoundationEssentials (no Foundation, so no ICU
data) are linked into libPyMetal (-static-stdlib): one shared object that needs
only libc, libm and libstdc++, and loads in about half the time of the
runtime's shared libraries (a developer's .build/release keeps the shared
runtime: `swift test` links XCTest with it). On macOS the Swift runtime and Metal come with the OS. Editable installs skip
all this: they use the checkout's `.build/release` (see pymetal/_native.py).
"""

import json
import os
import shutil
import subprocess
import sys
import sysconfig

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

MACOS_DEPLOYMENT_TARGET = "14_0"  # Package.swift: platforms: [.macOS(.v14)]


def run(cmd, **kwargs):
    print("hatch_build: " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kwargs)


def swift_runtime_dir():
    """The toolchain's folder of Swift runtime libraries (where libswiftCore is)."""
    info = json.loads(subprocess.run(["swift", "-print-target-info"], check=True, capture_output=True, text=True).stdout)
    return info["paths"]["runtimeLibraryPaths"][0]


def linked_libraries(binary, env):
    """name -> resolved path of every shared library `binary` loads (ldd)."""
    out = subprocess.run(["ldd", binary], check=True, capture_output=True, text=True, env=env).stdout
    found = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == "=>":
            if parts[2] == "not":
                raise RuntimeError("%s: %s is not found" % (binary, parts[0]))
            found[parts[0]] = parts[2]
    return found


def platform_tag():
    if sys.platform == "darwin":
        arch = sysconfig.get_platform().rsplit("-", 1)[-1]
        return "macosx_%s_%s" % (MACOS_DEPLOYMENT_TARGET, arch)
    return sysconfig.get_platform().replace("-", "_").replace(".", "_")


class CustomBuildHook(BuildHookInterface):
    def initialize(self, version, build_data):
        if self.target_name != "wheel" or version == "editable":
            return
        root = self.root
        stage = os.path.join(root, ".build", "wheel-stage")
        shutil.rmtree(stage, ignore_errors=True)
        os.makedirs(stage)
        if sys.platform == "darwin":
            self.build_macos(root, stage)
        else:
            self.build_linux(root, stage)
        shutil.copytree(os.path.join(root, "Shaders"), os.path.join(stage, "shaders"))
        build_data["pure_python"] = False
        build_data["tag"] = "py3-none-" + platform_tag()
        build_data["force_include"][stage] = "pymetal/lib"

    def build_macos(self, root, stage):
        run(["swift", "build", "-c", "release", "--product", "PyMetal"], cwd=root)
        shutil.copy2(os.path.join(root, ".build", "release", "libPyMetal.dylib"), stage)
        # Without the Metal toolchain this says so and builds nothing: pymetal
        # then compiles the bundled shaders/ at start-up.
        run(["scripts/build_shaders.sh"], cwd=root, env=dict(os.environ, SHADERS_OUT=stage))

    def build_linux(self, root, stage):
        scratch = os.path.join(root, ".build", "wheel")
        flags = ["-c", "release", "--scratch-path", scratch, "-Xswiftc", "-static-stdlib",
                 "-Xswiftc", "-no-toolchain-stdlib-rpath"]
        run(["swift", "build", *flags, "--product", "PyMetal"], cwd=root)
        run(["swift", "build", *flags, "--product", "pymetal-metallib"], cwd=root)
        run(["scripts/build_shaders.sh"], cwd=root, env=dict(os.environ, SHADERS_OUT=stage,
            PYMETAL_METALLIB=os.path.join(scratch, "release", "pymetal-metallib")))
        library = os.path.join(scratch, "release", "libPyMetal.so")
        runtime = os.path.realpath(swift_runtime_dir())
        from_toolchain = [name for name, path in linked_libraries(library, dict(os.environ, LD_LIBRARY_PATH=runtime)).items()
                          if os.path.realpath(path).startswith(runtime + os.sep)]
        if from_toolchain:
            raise RuntimeError("libPyMetal still needs %s from the Swift toolchain" % ", ".join(from_toolchain))
        shutil.copy2(library, stage)
        msl = os.path.join(stage, "msl")
        shutil.copytree(os.path.join(root, "Sources", "MetalCPU", "MSL"), msl, ignore=shutil.ignore_patterns("*.md"))
        shutil.copy2(os.path.join(root, "Sources", "CMetalCPU", "include", "pm_kernel_abi.h"), msl)
