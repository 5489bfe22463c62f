"""The platform tags python/build_wheel.py reads from a binary, on small executables made
here byte by byte: ELF files static, linked against musl, against glibc needing old or new
symbol versions, against a library no manylinux system promises, or against GLIBC_PRIVATE;
Mach-O files for Intel and Apple silicon; PE files. A tag says where pip may install the
wheel, so a wrong one is a broken install somewhere; each case would catch one.

    python3 wheel_tags.py PATH/TO/python/build_wheel.py

Prints `N tag checks passed` and exits 0, or names the first wrong one and exits 1.
"""

import importlib.util
import struct
import sys

X86_64, AARCH64 = 62, 183


def elf(machine=X86_64, interp=None, needed=(), versions=()):
    """A 64-bit little-endian ELF executable with these program headers and dynamic
    entries, its verneed table asking libc.so.6 for `versions`."""
    strtab = b"\0"
    offsets = {}
    for s in list(needed) + list(versions) + (["libc.so.6"] if versions else []):
        if s not in offsets:
            offsets[s] = len(strtab)
            strtab += s.encode() + b"\0"
    phnum = 1 + (interp is not None) + bool(needed or versions)
    body_at = 64 + 56 * phnum
    body = b""
    interp_at = body_at + len(body)
    if interp is not None:
        body += interp.encode() + b"\0"
    strtab_at = body_at + len(body)
    body += strtab
    verneed_at = body_at + len(body)
    if versions:
        body += struct.pack("<HHIII", 1, len(versions), offsets["libc.so.6"], 16, 0)
        for i, v in enumerate(versions):
            nxt = 0 if i == len(versions) - 1 else 16
            body += struct.pack("<IHHII", 0, 0, 2 + i, offsets[v], nxt)
    dyn_at = body_at + len(body)
    dyn = b"".join(struct.pack("<qQ", 1, offsets[n]) for n in needed)
    dyn += struct.pack("<qQ", 5, strtab_at) + struct.pack("<qQ", 10, len(strtab))
    if versions:
        dyn += struct.pack("<qQ", 0x6FFFFFFE, verneed_at) + struct.pack("<qQ", 0x6FFFFFFF, 1)
    dyn += struct.pack("<qQ", 0, 0)
    if needed or versions:
        body += dyn
    size = body_at + len(body)
    # One PT_LOAD maps the whole file at address 0, so an address is its offset.
    ph = struct.pack("<IIQQQQQQ", 1, 5, 0, 0, 0, size, size, 0x1000)
    if interp is not None:
        ph += struct.pack("<IIQQQQQQ", 3, 4, interp_at, interp_at, interp_at,
                          len(interp) + 1, len(interp) + 1, 1)
    if needed or versions:
        ph += struct.pack("<IIQQQQQQ", 2, 6, dyn_at, dyn_at, dyn_at, len(dyn), len(dyn), 8)
    head = struct.pack("<4sBBBB8xHHIQQQIHHHHHH", b"\x7fELF", 2, 1, 1, 0, 2, machine, 1,
                       0, 64, 0, 0, 64, 56, phnum, 64, 0, 0)
    return head + ph + body


def macho(cpu, major, minor, legacy=False):
    if legacy:  # LC_VERSION_MIN_MACOSX
        cmd = struct.pack("<IIII", 0x24, 16, (major << 16) | (minor << 8), 0)
    else:  # LC_BUILD_VERSION, platform macOS, no tools
        cmd = struct.pack("<IIIIII", 0x32, 24, 1, (major << 16) | (minor << 8), 0, 0)
    return struct.pack("<IiiIIIII", 0xFEEDFACF, cpu, 3, 2, 1, len(cmd), 0, 0) + cmd


def pe(machine):
    data = bytearray(0x100)
    data[0:2] = b"MZ"
    struct.pack_into("<I", data, 0x3C, 0x80)
    data[0x80:0x84] = b"PE\0\0"
    struct.pack_into("<H", data, 0x84, machine)
    return bytes(data)


GLIBC = "/lib64/ld-linux-x86-64.so.2"
RUST_LIBS = ("libgcc_s.so.1", "libm.so.6", "libc.so.6")

CASES = [
    ("static x86_64", elf(),
     "manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_2_x86_64"),
    ("static aarch64", elf(AARCH64),
     "manylinux_2_17_aarch64.manylinux2014_aarch64.musllinux_1_2_aarch64"),
    ("musl, dynamic", elf(interp="/lib/ld-musl-x86_64.so.1", needed=("libc.musl-x86_64.so.1",)),
     "musllinux_1_2_x86_64"),
    ("glibc, old symbols only", elf(interp=GLIBC, needed=RUST_LIBS,
                                    versions=("GLIBC_2.2.5", "GLIBC_2.14")),
     "manylinux_2_17_x86_64.manylinux2014_x86_64"),
    ("glibc, a 2.34 symbol", elf(interp=GLIBC, needed=RUST_LIBS,
                                 versions=("GLIBC_2.2.5", "GLIBC_2.34", "GLIBC_2.28")),
     "manylinux_2_34_x86_64"),
    ("glibc on aarch64", elf(AARCH64, "/lib/ld-linux-aarch64.so.1", RUST_LIBS,
                             ("GLIBC_2.17", "GLIBC_2.18")),
     "manylinux_2_18_aarch64"),
    ("a library outside the manylinux set", elf(interp=GLIBC, needed=RUST_LIBS + ("libssl.so.3",),
                                                versions=("GLIBC_2.17",)),
     "error"),
    ("GLIBC_PRIVATE", elf(interp=GLIBC, needed=RUST_LIBS, versions=("GLIBC_PRIVATE",)),
     "error"),
    ("musl, with a library beside libc", elf(interp="/lib/ld-musl-x86_64.so.1",
                                             needed=("libc.musl-x86_64.so.1", "libz.so.1")),
     "error"),
    ("32-bit ELF", b"\x7fELF\x01\x01\x01" + bytes(60), "error"),
    ("an ELF for another machine", elf(machine=40), "error"),
    ("macOS x86_64 10.12", macho(0x01000007, 10, 12), "macosx_10_12_x86_64"),
    ("macOS arm64 11.0", macho(0x0100000C, 11, 0), "macosx_11_0_arm64"),
    ("macOS arm64 14.5: major only", macho(0x0100000C, 14, 5), "macosx_14_0_arm64"),
    ("macOS x86_64, legacy load command", macho(0x01000007, 10, 9, legacy=True),
     "macosx_10_9_x86_64"),
    ("Windows x86_64", pe(0x8664), "win_amd64"),
    ("Windows arm64", pe(0xAA64), "win_arm64"),
    ("not an executable", b"#!/bin/sh\necho hi\n", "error"),
]


def main(builder):
    spec = importlib.util.spec_from_file_location("build_wheel", builder)
    bw = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bw)
    for name, data, want in CASES:
        try:
            got = bw.platform_tag(data)
        except bw.WheelError as e:
            got = "error"
            why = str(e)
        if got != want:
            print("%s: want %s, got %s" % (name, want, got), file=sys.stderr)
            sys.exit(1)
        if got == "error" and not why:
            print("%s: refused without saying why" % name, file=sys.stderr)
            sys.exit(1)
    print("%d tag checks passed" % len(CASES))


if __name__ == "__main__":
    main(sys.argv[1])
