#!/usr/bin/env python3
"""Writes SHA256SUMS and manifest.json for the artifacts in a dist folder.

manifest.json lists every artifact with its version, platform and size:
  {"version": "0.1.0", "artifacts": [{"file": ..., "kind": ..., "platform": ...,
   "size": ..., "sha256": ...}, ...]}
A file whose platform cannot be told from its name stops the script: every
artifact `make dist` writes has a known form.

usage: manifest.py DIST_DIR VERSION
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

SUMS = "SHA256SUMS"
MANIFEST = "manifest.json"


def describe(name: str, version: str) -> tuple[str, str]:
    """(kind, platform) of an artifact, from its file name."""
    v = re.escape(version)
    forms = [
        (rf"cursus-{v}-cp39-abi3-manylinux2014_(\w+?)\.manylinux_2_17_\1\.whl", "python-wheel",
         lambda m: f"linux-{m.group(1)} (manylinux2014, glibc 2.17), CPython >= 3.9"),
        (rf"cursus-{v}\.tar\.gz", "python-sdist", lambda m: "source (builds with Rust)"),
        (rf"cursus-{v}-linux-(\w+)\.tar\.gz", "c-archive",
         lambda m: f"linux-{m.group(1)} (glibc 2.17)"),
        (rf"cursus-{v}\.jar", "java-jar", None),
        (rf"cursus-{v}-sources\.jar", "java-sources", lambda m: "any"),
        (rf"cursus-{v}-javadoc\.jar", "java-javadoc", lambda m: "any"),
        (rf"cursus-{v}\.pom", "java-pom", lambda m: "any"),
    ]
    for pattern, kind, platform in forms:
        m = re.fullmatch(pattern, name)
        if m:
            return kind, platform(m) if platform else ""
    raise SystemExit(f"manifest: {name} is no artifact this script knows (version {version})")


def jar_platforms(dist: Path, name: str) -> str:
    """The jar's native platforms, from its native/platforms.txt."""
    import zipfile

    with zipfile.ZipFile(dist / name) as jar:
        listed = jar.read("native/platforms.txt").decode().split()
    return ", ".join(f"{p} (glibc 2.17)" for p in listed) + ", Java >= 17"


def main() -> None:
    dist, version = Path(sys.argv[1]), sys.argv[2]
    artifacts = []
    for path in sorted(dist.iterdir()):
        if path.name in (SUMS, MANIFEST):
            continue
        kind, platform = describe(path.name, version)
        if kind == "java-jar":
            platform = jar_platforms(dist, path.name)
        data = path.read_bytes()
        artifacts.append({
            "file": path.name,
            "kind": kind,
            "version": version,
            "platform": platform,
            "size": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
        })
    (dist / SUMS).write_text("".join(f"{a['sha256']}  {a['file']}\n" for a in artifacts))
    (dist / MANIFEST).write_text(json.dumps({"version": version, "artifacts": artifacts}, indent=2) + "\n")
    for a in artifacts:
        print(f"{a['file']:<75} {a['size']:>10}  {a['platform']}")


if __name__ == "__main__":
    main()
