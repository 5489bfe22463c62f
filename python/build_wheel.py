#!/usr/bin/env python3
"""Pack a built gauntlet binary into a binary wheel, so `pip install gauntlet-llm` puts
`gauntlet` on PATH (the way ruff and uv are shipped).

    python3 python/build_wheel.py --binary target/dist/gauntlet --out dist

Standard library only: the release workflow and the tests run it on a bare Python, and it
packs the binary that was already built (the tarball's, or the test build's) instead of
compiling again.

A wheel is a zip file:

    gauntlet_llm-VERSION.data/scripts/gauntlet       the binary; pip copies it into bin/
    <pkg>/...                                        every python/<pkg>/ with an __init__.py
    gauntlet_llm-VERSION.dist-info/METADATA          name, version, summary, the README
    gauntlet_llm-VERSION.dist-info/WHEEL             Root-Is-Purelib: false, the tags
    gauntlet_llm-VERSION.dist-info/entry_points.txt  python/entry_points.txt, when present
    gauntlet_llm-VERSION.dist-info/RECORD            every file's sha256 and size

The platform tag is read from the binary itself unless --platform names one: the
architecture from its header; for Linux, whether it is static (no interpreter, no shared
library: it runs on any Linux, so it is tagged manylinux and musllinux at once), linked
against musl (musllinux) or against glibc (manylinux_2_N, where 2.N is the newest glibc
symbol version it needs, never below 2.17, and only when it needs no library outside the
manylinux set); for macOS the minimum version in its load commands; for Windows the
machine type. A tag claims where the wheel runs, so it comes from what the binary needs.

Files are written in a fixed order with a fixed timestamp (SOURCE_DATE_EPOCH when set), so
the same inputs give the same wheel byte for byte.
"""

import argparse
import base64
import csv
import hashlib
import io
import os
import re
import struct
import sys
import time
import zipfile

NAME = "gauntlet-llm"
SUMMARY = "A QA and security gate for LLM applications and agents (the gauntlet CLI)"
HOME = "https://github.com/gauntlet-dev/gauntlet"
LICENSE = "Apache-2.0"

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Shared libraries a manylinux wheel may rely on the system for (PEP 599 / PEP 600's
# policy, the part a Rust binary can need); anything else must be inside the wheel.
MANYLINUX_LIBS = {
    "libc.so.6", "libm.so.6", "libdl.so.2", "librt.so.1", "libpthread.so.0",
    "libgcc_s.so.1", "libutil.so.1", "libresolv.so.2", "libstdc++.so.6", "libnsl.so.1",
    "libcrypt.so.1", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1",
}
# The oldest glibc a manylinux tag here claims: Rust's own floor (std needs 2.17), and the
# first one every architecture has a tag for.
MIN_GLIBC_MINOR = 17
# musl 1.2 is what Rust's musl targets link; a static binary carries its own copy.
MUSL = "1_2"

ELF_MACHINES = {62: "x86_64", 183: "aarch64"}
MACHO_CPUS = {0x01000007: "x86_64", 0x0100000C: "arm64"}
PE_MACHINES = {0x8664: "win_amd64", 0xAA64: "win_arm64", 0x14C: "win32"}


class WheelError(Exception):
    """A binary or an input the builder cannot make an honest wheel of."""


# ---------------------------------------------------------------- platform tags


def platform_tag(data):
    """The wheel platform tag (possibly a compressed `a.b.c` set) for this binary."""
    if data[:4] == b"\x7fELF":
        return linux_tag(data)
    if data[:4] in (b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe"):
        return macos_tag(data)
    if data[:2] == b"MZ":
        return windows_tag(data)
    raise WheelError("not an ELF, Mach-O or PE executable: pass --platform")


def linux_tag(data):
    elf = read_elf(data)
    arch = elf["arch"]
    interp = elf["interp"]
    needed = elf["needed"]
    if interp is None and not needed:
        # Static: no loader, no libc of the system's. It runs on glibc and musl systems.
        return "manylinux_2_%d_%s.manylinux2014_%s.musllinux_%s_%s" % (
            MIN_GLIBC_MINOR, arch, arch, MUSL, arch)
    if interp is not None and "ld-musl" in interp:
        extra = [n for n in needed if not n.startswith("libc.musl") and n != "libc.so"]
        if extra:
            raise WheelError("linked against %s, which a musllinux system need not have"
                             % ", ".join(extra))
        return "musllinux_%s_%s" % (MUSL, arch)
    extra = [n for n in needed if n not in MANYLINUX_LIBS]
    if extra:
        raise WheelError("linked against %s, outside the manylinux set: build it static "
                         "or bundle it" % ", ".join(sorted(extra)))
    if "GLIBC_PRIVATE" in elf["versions"]:
        raise WheelError("needs GLIBC_PRIVATE symbols: no manylinux tag is honest")
    minor = max([MIN_GLIBC_MINOR] + glibc_minors(elf["versions"]))
    tag = "manylinux_2_%d_%s" % (minor, arch)
    if minor == MIN_GLIBC_MINOR:
        # The legacy name, for pip before 20.3.
        tag += ".manylinux2014_%s" % arch
    return tag


def glibc_minors(versions):
    out = []
    for v in versions:
        m = re.fullmatch(r"GLIBC_2\.(\d+)(?:\.\d+)?", v)
        if m:
            out.append(int(m.group(1)))
    return out


def read_elf(data):
    """Architecture, interpreter, DT_NEEDED libraries and the symbol versions it needs
    (the verneed table, what `objdump -T` shows as GLIBC_2.N) of a 64-bit ELF."""
    if data[4] != 2 or data[5] != 1:
        raise WheelError("only 64-bit little-endian ELF binaries are tagged automatically")
    machine = struct.unpack_from("<H", data, 18)[0]
    if machine not in ELF_MACHINES:
        raise WheelError("ELF machine %d has no tag here: pass --platform" % machine)
    phoff = struct.unpack_from("<Q", data, 32)[0]
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    loads, interp, dynamic = [], None, None
    for i in range(phnum):
        p_type, _, p_offset, p_vaddr, _, p_filesz, _, _ = struct.unpack_from(
            "<IIQQQQQQ", data, phoff + i * phentsize)
        if p_type == 1:
            loads.append((p_vaddr, p_offset, p_filesz))
        elif p_type == 3:
            interp = data[p_offset:p_offset + p_filesz].rstrip(b"\0").decode("ascii", "replace")
        elif p_type == 2:
            dynamic = (p_offset, p_filesz)

    def offset(vaddr):
        for start, off, size in loads:
            if start <= vaddr < start + size:
                return off + vaddr - start
        raise WheelError("a dynamic entry points outside the file")

    tags = {}
    needed_at = []
    if dynamic is not None:
        off, size = dynamic
        for i in range(0, size - 15, 16):
            d_tag, d_val = struct.unpack_from("<qQ", data, off + i)
            if d_tag == 0:
                break
            if d_tag == 1:
                needed_at.append(d_val)
            else:
                tags[d_tag] = d_val
    versions = set()
    needed = []
    if 5 in tags:
        strtab = offset(tags[5])

        def string(at):
            end = data.index(b"\0", strtab + at)
            return data[strtab + at:end].decode("ascii", "replace")

        needed = [string(at) for at in needed_at]
        if 0x6FFFFFFE in tags:
            versions = verneed(data, offset(tags[0x6FFFFFFE]), tags.get(0x6FFFFFFF, 0), string)
    return {"arch": ELF_MACHINES[machine], "interp": interp, "needed": needed,
            "versions": versions}


def verneed(data, at, count, string):
    names = set()
    for _ in range(count):
        _, cnt, _, aux, nxt = struct.unpack_from("<HHIII", data, at)
        a = at + aux
        for _ in range(cnt):
            _, _, _, name, anext = struct.unpack_from("<IHHII", data, a)
            names.add(string(name))
            a += anext
        if nxt == 0:
            break
        at += nxt
    return names


def macos_tag(data):
    if data[:4] != b"\xcf\xfa\xed\xfe":
        raise WheelError("only 64-bit Mach-O binaries are tagged automatically")
    cpu, _, _, ncmds = struct.unpack_from("<iIII", data, 4)
    arch = MACHO_CPUS.get(cpu & 0xFFFFFFFF)
    if arch is None:
        raise WheelError("Mach-O CPU type %#x has no tag here: pass --platform" % cpu)
    at = 32
    minos = None
    for _ in range(ncmds):
        cmd, size = struct.unpack_from("<II", data, at)
        if cmd == 0x32:  # LC_BUILD_VERSION: platform, minos
            minos = struct.unpack_from("<I", data, at + 12)[0]
        elif cmd == 0x24:  # LC_VERSION_MIN_MACOSX: version
            minos = struct.unpack_from("<I", data, at + 8)[0]
        at += size
    if minos is None:
        raise WheelError("no minimum macOS version in the binary: pass --platform")
    major, minor = minos >> 16, (minos >> 8) & 0xFF
    if major >= 11:
        minor = 0  # from macOS 11 on, pip matches major versions only
    return "macosx_%d_%d_%s" % (major, minor, arch)


def windows_tag(data):
    pe = struct.unpack_from("<I", data, 0x3C)[0]
    if data[pe:pe + 4] != b"PE\0\0":
        raise WheelError("an MZ header without a PE image")
    machine = struct.unpack_from("<H", data, pe + 4)[0]
    if machine not in PE_MACHINES:
        raise WheelError("PE machine %#x has no tag here: pass --platform" % machine)
    return PE_MACHINES[machine]


# ---------------------------------------------------------------- metadata


def cargo_version():
    """The workspace version in Cargo.toml, as a PEP 440 version."""
    with open(os.path.join(ROOT, "Cargo.toml"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r'^\[workspace\.package\][^\[]*?^version\s*=\s*"([^"]+)"', text, re.M | re.S)
    if not m:
        raise WheelError("no [workspace.package] version in Cargo.toml: pass --version")
    return pep440(m.group(1))


def pep440(v):
    m = re.fullmatch(r"(\d+\.\d+\.\d+)(?:-(alpha|beta|rc)\.?(\d+))?", v)
    if not m:
        raise WheelError("version %r has no PEP 440 spelling here: pass --version" % v)
    pre = {"alpha": "a", "beta": "b", "rc": "rc"}.get(m.group(2) or "", "")
    return m.group(1) + (pre + m.group(3) if pre else "")


def absolute_links(markdown, version):
    """The README's relative links and images, pointed at the release's tag on GitHub, so
    they still lead somewhere on the package's PyPI page."""
    def fix(m):
        bang, text, target = m.group(1), m.group(2), m.group(3)
        if re.match(r"[a-z]+:|#|/", target):
            return m.group(0)
        kind = "raw" if bang else "blob"
        return "%s[%s](%s/%s/v%s/%s)" % (bang, text, HOME, kind, version, target)
    return re.sub(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)", fix, markdown)


def metadata(version, readme):
    head = [
        "Metadata-Version: 2.1",
        "Name: " + NAME,
        "Version: " + version,
        "Summary: " + SUMMARY,
        "Home-page: " + HOME,
        "License: " + LICENSE,
        "Project-URL: Source, " + HOME,
        "Project-URL: Changelog, " + HOME + "/blob/main/CHANGELOG.md",
        "Keywords: llm,evaluation,red-team,owasp,ci,agents,security",
        "Classifier: Environment :: Console",
        "Classifier: License :: OSI Approved :: Apache Software License",
        "Classifier: Programming Language :: Rust",
        "Classifier: Topic :: Software Development :: Testing",
        "Requires-Python: >=3.8",
    ]
    if readme is not None:
        head.append("Description-Content-Type: text/markdown")
        return "\n".join(head) + "\n\n" + absolute_links(readme, version)
    return "\n".join(head) + "\n"


def wheel_file(tags):
    lines = ["Wheel-Version: 1.0", "Generator: gauntlet python/build_wheel.py",
             "Root-Is-Purelib: false"]
    lines += ["Tag: py3-none-" + t for t in tags.split(".")]
    return "\n".join(lines) + "\n"


def python_files(pydir):
    """(path in the wheel, path on disk) for every package directory under `pydir`."""
    out = []
    if not os.path.isdir(pydir):
        return out
    for pkg in sorted(os.listdir(pydir)):
        top = os.path.join(pydir, pkg)
        if not os.path.isfile(os.path.join(top, "__init__.py")):
            continue
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                if name.endswith((".pyc", ".pyo")):
                    continue
                disk = os.path.join(dirpath, name)
                out.append((os.path.relpath(disk, pydir).replace(os.sep, "/"), disk))
    return out


# ---------------------------------------------------------------- the zip


def record_hash(data):
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def build(binary, out, platform=None, version=None, pydir=None, readme=None,
          compression=zipfile.ZIP_DEFLATED):
    """Writes the wheel into `out`; returns its path."""
    with open(binary, "rb") as f:
        exe = f.read()
    tags = platform or platform_tag(exe)
    if not re.fullmatch(r"[a-z0-9_]+(\.[a-z0-9_]+)*", tags):
        raise WheelError("%r is not a platform tag" % tags)
    version = version or cargo_version()
    dist = NAME.replace("-", "_")
    info = "%s-%s.dist-info" % (dist, version)
    exe_name = "gauntlet.exe" if tags.startswith("win") else "gauntlet"

    # (name in the wheel, bytes, unix mode)
    files = [("%s-%s.data/scripts/%s" % (dist, version, exe_name), exe, 0o755)]
    for name, disk in python_files(pydir or os.path.join(ROOT, "python")):
        with open(disk, "rb") as f:
            files.append((name, f.read(), 0o644))
    text = None
    if readme:
        with open(readme, encoding="utf-8") as f:
            text = f.read()
    files.append((info + "/METADATA", metadata(version, text).encode("utf-8"), 0o644))
    files.append((info + "/WHEEL", wheel_file(tags).encode("utf-8"), 0o644))
    entry_points = os.path.join(pydir or os.path.join(ROOT, "python"), "entry_points.txt")
    if os.path.isfile(entry_points):
        with open(entry_points, "rb") as f:
            files.append((info + "/entry_points.txt", f.read(), 0o644))

    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for name, data, _ in files:
        writer.writerow([name, record_hash(data), len(data)])
    writer.writerow([info + "/RECORD", "", ""])
    files.append((info + "/RECORD", record.getvalue().encode("utf-8"), 0o644))

    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "%s-%s-py3-none-%s.whl" % (dist, version, tags))
    stamp = time.gmtime(max(int(os.environ.get("SOURCE_DATE_EPOCH", "315532800")), 315532800))
    tmp = path + ".part"
    with zipfile.ZipFile(tmp, "w", compression) as z:
        for name, data, mode in files:
            zi = zipfile.ZipInfo(name, date_time=stamp[:6])
            zi.external_attr = (0o100000 | mode) << 16
            zi.compress_type = compression
            z.writestr(zi, data)
    os.replace(tmp, path)
    return path


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--binary", required=True, help="the built gauntlet executable")
    p.add_argument("--out", default="dist", help="folder for the wheel (default: dist)")
    p.add_argument("--platform", help="platform tag(s), e.g. win_amd64 (default: read "
                   "from the binary)")
    p.add_argument("--version", help="PEP 440 version (default: Cargo.toml's)")
    p.add_argument("--python-dir", help="folder of Python packages to include (default: "
                   "python/ beside this script)")
    p.add_argument("--readme", default=os.path.join(ROOT, "README.md"),
                   help="long description (default: README.md); '' for none")
    p.add_argument("--store", action="store_true",
                   help="no compression (a faster, larger wheel for local tests)")
    a = p.parse_args(argv)
    try:
        path = build(a.binary, a.out, a.platform, a.version, a.python_dir, a.readme or None,
                     zipfile.ZIP_STORED if a.store else zipfile.ZIP_DEFLATED)
    except (WheelError, OSError) as e:
        print("error: %s" % e, file=sys.stderr)
        return 2
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
