"""Checks a wheel the way an installer and a registry read it, with code of its own (not
python/build_wheel.py's): the file name, every RECORD row against the file's sha256 and
size, no file missing from RECORD, WHEEL's tags against the file name, METADATA's name and
version, the binary under .data/scripts/ marked executable.

    python3 wheel_check.py WHEEL

Prints one JSON object (name, version, tags, files, the long description's length and the
relative links in it) and exits 0, or says what is wrong and
exits 1.
"""

import base64
import csv
import hashlib
import io
import json
import re
import sys
import zipfile


def fail(msg):
    print("wheel check: " + msg, file=sys.stderr)
    sys.exit(1)


def main(path):
    fname = path.replace("\\", "/").rsplit("/", 1)[-1]
    m = re.fullmatch(r"([A-Za-z0-9_.]+)-([^-]+)-(py3)-(none)-([a-z0-9_.]+)\.whl", fname)
    if not m:
        fail("%s is not NAME-VERSION-py3-none-PLATFORM.whl" % fname)
    dist, version, _, _, plat = m.groups()
    info = "%s-%s.dist-info/" % (dist, version)
    z = zipfile.ZipFile(path)
    names = z.namelist()
    if len(names) != len(set(names)):
        fail("duplicate entries")
    record = z.read(info + "RECORD").decode("utf-8")
    rows = list(csv.reader(io.StringIO(record)))
    listed = set()
    for row in rows:
        if len(row) != 3:
            fail("RECORD row %r has %d fields" % (row, len(row)))
        name, digest, size = row
        listed.add(name)
        if name == info + "RECORD":
            if digest or size:
                fail("RECORD lists a digest of itself")
            continue
        data = z.read(name)
        want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(
            b"=").decode()
        if digest != want:
            fail("%s: RECORD says %s, the file is %s" % (name, digest, want))
        if int(size) != len(data):
            fail("%s: RECORD says %s bytes, the file has %d" % (name, size, len(data)))
    if set(names) != listed:
        fail("in the zip but not in RECORD: %s; in RECORD but not in the zip: %s"
             % (sorted(set(names) - listed), sorted(listed - set(names))))

    wheel = z.read(info + "WHEEL").decode("utf-8")
    if "Wheel-Version: 1.0" not in wheel.splitlines():
        fail("WHEEL has no Wheel-Version: 1.0")
    if "Root-Is-Purelib: false" not in wheel.splitlines():
        fail("a wheel with a binary is not purelib")
    tags = [l[len("Tag: "):] for l in wheel.splitlines() if l.startswith("Tag: ")]
    want_tags = ["py3-none-" + p for p in plat.split(".")]
    if tags != want_tags:
        fail("WHEEL tags %s, file name says %s" % (tags, want_tags))

    meta = z.read(info + "METADATA").decode("utf-8")
    head = meta.split("\n\n", 1)[0].splitlines()
    fields = dict(l.split(": ", 1) for l in head if ": " in l)
    if fields.get("Name", "").replace("-", "_") != dist or fields.get("Version") != version:
        fail("METADATA names %s %s" % (fields.get("Name"), fields.get("Version")))

    scripts = [n for n in names if n.startswith("%s-%s.data/scripts/" % (dist, version))]
    if len(scripts) != 1:
        fail("want one binary under .data/scripts/, found %s" % scripts)
    mode = z.getinfo(scripts[0]).external_attr >> 16
    if not mode & 0o111:
        fail("%s is not executable (mode %o)" % (scripts[0], mode))
    body = meta.split("\n\n", 1)[1] if "\n\n" in meta else ""
    # Links a PyPI page cannot follow: relative to a repository it does not have.
    relative = re.findall(r"\]\((?![a-z]+:|#)([^)\s]+)\)", body)
    print(json.dumps({"name": fields["Name"], "version": version,
                      "tags": plat.split("."), "files": names,
                      "description_chars": len(body), "relative_links": relative}))


if __name__ == "__main__":
    main(sys.argv[1])
