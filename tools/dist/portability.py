#!/usr/bin/env python3
"""Checks every native library in the dist artifacts and prints one line each.

For each library (the wheels' extension module, the C archives' libcursus.so,
the jar's libcursus_jni.so for every platform) it reads, with binutils
(`objdump -T` for the glibc symbol versions it needs, `objdump -p` for what it
links and its SONAME, `readelf -h` for its machine and `readelf -S` for
leftover symbol or debug sections):

  - the newest GLIBC_x.y it needs: at most 2.17 (DIST_GLIBC);
  - what it links: glibc's libraries and libgcc_s only;
  - its machine: the one its artifact names;
  - stripped (no .symtab, no .debug_*), libcursus with SONAME libcursus.so.<abi>;
  - its size: at most 8 MB (8,000,000 bytes).

The wheels also go through `auditwheel show`, which must find them consistent
with manylinux_2_17_<arch>. Exits 1 after the table if any check failed.

usage: portability.py DIST_DIR VERSION ABI AUDITWHEEL
"""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

GLIBC_MAX = (2, 17)
SIZE_MAX = 8_000_000
# glibc's own libraries, the dynamic loaders, and libgcc's unwinder.
ALLOWED_NEEDED = re.compile(
    r"(libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|"
    r"ld-linux-x86-64\.so\.2|ld-linux-aarch64\.so\.1|libgcc_s\.so\.1)"
)
# readelf -h's name of each architecture (the host's objdump may know only its own).
MACHINES = {"x86_64": "Advanced Micro Devices X86-64", "aarch64": "AArch64"}


@dataclass
class Library:
    """One native library inside an artifact, and what was found wrong with it."""

    artifact: str
    member: str
    arch: str
    path: Path
    soname: str | None = None
    problems: list[str] = field(default_factory=list)


def run(*cmd: str) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def glibc_versions(path: Path) -> list[tuple[int, ...]]:
    """The GLIBC_x.y versions of the symbols the library imports (objdump -T, *UND*)."""
    found = set()
    for line in run("objdump", "-T", str(path)).splitlines():
        if "*UND*" in line:
            m = re.search(r"GLIBC_(\d+(?:\.\d+)+)", line)
            if m:
                found.add(tuple(int(p) for p in m.group(1).split(".")))
    return sorted(found)


def check(lib: Library) -> str:
    """Checks one library; returns its table line."""
    versions = glibc_versions(lib.path)
    newest = versions[-1] if versions else None
    if newest and newest > GLIBC_MAX:
        lib.problems.append(f"needs GLIBC_{'.'.join(map(str, newest))}")
    private = run("objdump", "-p", str(lib.path))
    needed = re.findall(r"^\s*NEEDED\s+(\S+)", private, re.M)
    for n in needed:
        if not ALLOWED_NEEDED.fullmatch(n):
            lib.problems.append(f"links {n}")
    soname = re.search(r"^\s*SONAME\s+(\S+)", private, re.M)
    if lib.soname and (not soname or soname.group(1) != lib.soname):
        lib.problems.append(f"SONAME {soname.group(1) if soname else 'none'}, expected {lib.soname}")
    if re.search(r"^\s*(RPATH|RUNPATH)\s", private, re.M):
        lib.problems.append("has an rpath")
    machine = re.search(r"^\s*Machine:\s+(.+?)\s*$", run("readelf", "-h", str(lib.path)), re.M)
    if not machine or machine.group(1) != MACHINES[lib.arch]:
        lib.problems.append(f"machine {machine.group(1) if machine else '?'}, expected {lib.arch}")
    sections = run("readelf", "-S", "-W", str(lib.path))
    if re.search(r"\s\.(symtab|debug_\w+)\s", sections):
        lib.problems.append("not stripped")
    size = lib.path.stat().st_size
    if size > SIZE_MAX:
        lib.problems.append(f"{size} bytes, over {SIZE_MAX}")
    glibc = f"GLIBC_{'.'.join(map(str, newest))}" if newest else "-"
    status = "ok" if not lib.problems else "FAIL: " + "; ".join(lib.problems)
    return (f"{lib.artifact:<72} {lib.member:<38} {lib.arch:<8} {size / 1e6:>6.2f} MB  {glibc:<11} "
            f"{' '.join(needed):<60} {status}")


def auditwheel(tool: str, wheel: Path, arch: str) -> str | None:
    """None if auditwheel finds the wheel consistent with manylinux_2_17_<arch>, else why not."""
    out = subprocess.run([tool, "show", str(wheel)], capture_output=True, text=True)
    tag = re.search(r'platform tag:\s*"([^"]+)"', out.stdout)
    expected = f"manylinux_2_17_{arch}"
    if out.returncode != 0 or not tag or tag.group(1) != expected:
        return f"auditwheel show: {tag.group(1) if tag else out.stdout + out.stderr!r}, expected {expected}"
    print(f"auditwheel show {wheel.name}: consistent with {tag.group(1)}")
    return None


def libraries(dist: Path, version: str, abi: str, tool: str, tmp: Path) -> tuple[list[Library], list[str]]:
    """Every native library of the artifacts, unpacked under tmp; and the auditwheel failures."""
    libs: list[Library] = []
    failures: list[str] = []
    for wheel in sorted(dist.glob(f"cursus-{version}-*.whl")):
        arch = re.search(r"manylinux_2_17_(\w+)\.whl$", wheel.name)
        if not arch:
            failures.append(f"{wheel.name}: not tagged manylinux_2_17")
            continue
        problem = auditwheel(tool, wheel, arch.group(1))
        if problem:
            failures.append(f"{wheel.name}: {problem}")
        with zipfile.ZipFile(wheel) as z:
            for member in z.namelist():
                if member.endswith(".so"):
                    out = tmp / wheel.name / member
                    out.parent.mkdir(parents=True, exist_ok=True)
                    out.write_bytes(z.read(member))
                    libs.append(Library(wheel.name, member, arch.group(1), out))
    for archive in sorted(dist.glob(f"cursus-{version}-linux-*.tar.gz")):
        arch = re.search(r"-linux-(\w+)\.tar\.gz$", archive.name).group(1)
        member = f"cursus-{version}-linux-{arch}/lib/libcursus.so.{version}"
        with tarfile.open(archive) as t:
            t.extract(member, tmp / archive.name, filter="data")
        libs.append(Library(archive.name, f"lib/libcursus.so.{version}", arch, tmp / archive.name / member,
                            soname=f"libcursus.so.{abi}"))
    jar = dist / f"cursus-{version}.jar"
    with zipfile.ZipFile(jar) as z:
        platforms = z.read("native/platforms.txt").decode().split()
        for platform in platforms:
            member = f"native/{platform}/libcursus_jni.so"
            out = tmp / jar.name / member
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(z.read(member))
            libs.append(Library(jar.name, member, platform.split("-", 1)[1], out))
    return libs, failures


def main() -> None:
    dist, version, abi, tool = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    with tempfile.TemporaryDirectory() as tmp:
        libs, failures = libraries(dist, version, abi, tool, Path(tmp))
        print(f"\n{'artifact':<72} {'library':<38} {'arch':<8} {'size':>9}  {'newest':<11} {'links':<60} check")
        for lib in libs:
            print(check(lib))
            failures += [f"{lib.artifact} {lib.member}: {p}" for p in lib.problems]
    # A wheel, an archive and the jar per architecture.
    per_arch = {arch: sum(lib.arch == arch for lib in libs) for arch in MACHINES}
    if any(n != 3 for n in per_arch.values()) or len(libs) != 3 * len(MACHINES):
        failures.append(f"expected three libraries per architecture, found {per_arch}")
    if failures:
        print("\nportability: FAILED\n  " + "\n  ".join(failures), file=sys.stderr)
        sys.exit(1)
    print(f"\nportability: ok ({len(libs)} libraries: glibc <= 2.17, glibc and libgcc only, stripped, "
          f"<= {SIZE_MAX / 1e6:.0f} MB)")


if __name__ == "__main__":
    main()
