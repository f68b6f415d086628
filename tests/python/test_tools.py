"""The Swift command-line tools: pymetal-info is linked against libPyMetal (ldd lists it) and
calls only its C ABI; libPyMetal itself loads no Foundation/ICU on Linux."""

import os
import shutil
import struct
import subprocess
import sys

import pytest

import pymetal as pm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RELEASE = os.path.join(ROOT, ".build", "release")
INFO = os.path.join(RELEASE, "pymetal-info")
LINUX = sys.platform.startswith("linux")
# The variable the dynamic loader searches before a binary's RUNPATH / @rpath.
LOADER_PATH = "LD_LIBRARY_PATH" if LINUX else "DYLD_LIBRARY_PATH"


def elf_needed(path):
    """The DT_NEEDED entries of a 64-bit little-endian ELF file (what ldd starts from), read from
    its dynamic segment: no readelf/ldd needed, and no library is loaded."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, "%s: not a 64-bit little-endian ELF file" % path
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    loads, dynamic = [], None
    for i in range(phnum):
        kind, _, offset, vaddr, _, filesz, _, _ = struct.unpack_from("<IIQQQQQQ", data, phoff + i * phentsize)
        if kind == 1:  # PT_LOAD: where a virtual address is in the file
            loads.append((vaddr, offset, filesz))
        elif kind == 2:  # PT_DYNAMIC
            dynamic = (offset, filesz)
    assert dynamic is not None, "%s has no dynamic segment" % path
    entries = [struct.unpack_from("<qQ", data, dynamic[0] + i) for i in range(0, dynamic[1], 16)]
    strtab = next(value for tag, value in entries if tag == 5)  # DT_STRTAB (a virtual address)
    base = next(offset + strtab - vaddr for vaddr, offset, size in loads if vaddr <= strtab < vaddr + size)
    names = []
    for tag, value in entries:
        if tag == 1:  # DT_NEEDED: an offset into the string table
            start = base + value
            names.append(data[start:data.index(b"\0", start)].decode())
    return names


def linked_libraries(path):
    """The shared libraries `path` names for the dynamic loader (ELF NEEDED, or otool -L on macOS)."""
    if LINUX:
        return elf_needed(path)
    out = subprocess.run(["otool", "-L", path], capture_output=True, text=True, check=True).stdout
    return [os.path.basename(line.split()[0]) for line in out.splitlines()[1:] if line.strip()]


@pytest.fixture(scope="module")
def info(dev):
    if not os.path.isfile(INFO):
        if os.environ.get("PYMETAL_REQUIRE_LIBRARY"):
            pytest.fail("%s is not built (make build: swift build -c release --package-path Sources/Tools --scratch-path .build)" % INFO)
        pytest.skip("pymetal-info is not built")
    return INFO


def run(program, **env):
    return subprocess.run([program], capture_output=True, text=True, timeout=300, env=dict(os.environ, **env))


def test_info_self_check_through_the_release_library(info):
    out = run(info)
    assert out.returncode == 0, out.stderr
    fields = dict(line.split(":", 1) for line in out.stdout.splitlines() if ":" in line)
    assert fields["self-check axpy"].strip().startswith("ok")
    assert fields["backend"].strip() == pm.device().backend
    assert int(fields["shader library"].split()[0]) > 100
    # The library next to the tool: the one `swift build -c release` made, which Python loads too.
    assert os.path.samefile(fields["library"].strip(), pm.library_path())


def test_info_is_linked_against_libpymetal(info):
    # What `ldd .build/release/pymetal-info` shows: libPyMetal is a dependency of the tool.
    library = os.path.basename(pm.library_path())
    assert library in linked_libraries(info)


def test_info_binary_has_no_pymetal_code(info):
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("no nm")
    symbols = subprocess.run([nm, info], capture_output=True, text=True, check=True).stdout
    defined = [line for line in symbols.splitlines() if line.split()[-1].startswith("pm_") and " U " not in line]
    assert defined == [], defined
    assert any(line.split()[-1] == "pm_dispatch" for line in symbols.splitlines()), "pm_dispatch is not imported"


def test_info_runs_on_the_library_the_loader_finds(info, tmp_path):
    # A copy of libPyMetal elsewhere, put first by the loader's search path, is the one that runs.
    copy = tmp_path / os.path.basename(pm.library_path())
    shutil.copy2(pm.library_path(), copy)
    out = run(info, **{LOADER_PATH: str(tmp_path)})
    assert out.returncode == 0, out.stderr
    assert "library:           %s\n" % copy in out.stdout
    # Without a libPyMetal beside it (its rpath), the tool does not start.
    alone = tmp_path / "bin" / "pymetal-info"
    alone.parent.mkdir()
    shutil.copy2(info, alone)
    missing = run(str(alone), **{LOADER_PATH: ""})
    assert missing.returncode != 0
    assert copy.name in missing.stderr


@pytest.mark.skipif(not LINUX, reason="Foundation and ICU are Linux's question: macOS has them in the OS")
def test_libpymetal_needs_no_foundation_or_icu(dev):
    needed = elf_needed(pm.library_path())
    assert "libc.so.6" in needed, needed  # the entries are read
    heavy = [n for n in needed if n.startswith(("libFoundation.", "libFoundationInternationalization", "lib_FoundationICU", "libicu"))]
    assert heavy == [], needed


@pytest.mark.skipif(not LINUX, reason="/proc/self/maps is Linux's")
def test_device_loads_no_foundation_or_icu():
    # The whole load path: what a process has mapped after pymetal.device().
    code = ("import pymetal; pymetal.device()\n"
            "print('\\n'.join(sorted({l.split()[-1] for l in open('/proc/self/maps') if '/' in l})))")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    mapped = [os.path.basename(path) for path in out.stdout.split()]
    assert any(name.startswith("libPyMetal") for name in mapped), mapped
    heavy = [n for n in mapped if n.startswith(("libFoundation.", "libFoundationInternationalization", "lib_FoundationICU", "libicu"))]
    assert heavy == [], heavy
