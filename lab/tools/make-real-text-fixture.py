#!/usr/bin/env python3
"""Builds tests/Server.Tests/Fixtures/debian-copyright.ndjson.gz: real text of very uneven sizes.

The measure command's tests need documents nobody shaped for the indexer: these are the
copyright files of the Debian packages installed on the build machine (/usr/share/doc/*/copyright,
from about 200 bytes to 2 MB) and the license texts in /usr/share/common-licenses, as NDJSON in
the bulk format. Each copyright file becomes a document of collection "copyright" with its text, its
paragraphs, and the Files/License/Copyright fields of machine-readable ones (nested arrays of
strings, numbers): the default definition (every string field as text) has to find them itself.
The license texts form a second, smaller collection, "licenses". Identical files are kept once.

The output is committed, so tests do not depend on what a machine has installed. Run again only to
refresh it:  python3 lab/tools/make-real-text-fixture.py
A bigger file of the same kind, for trying `measure` (every distinct copyright file, uncompressed):
  python3 lab/tools/make-real-text-fixture.py --target-bytes 0 --out texts.ndjson
Scaled up by repeating the collection (ids copyright/0001/<package>, ... so each copy is read in key
order like the original), e.g. about 2 GiB for the controller's read-bound figures:
  python3 lab/tools/make-real-text-fixture.py --target-bytes 0 --copies 200 --out texts.ndjson
"""
import argparse, glob, gzip, hashlib, io, json, os, re

parser = argparse.ArgumentParser(description="Real text of very uneven sizes as bulk NDJSON.")
parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "..", "tests", "Server.Tests", "Fixtures", "debian-copyright.ndjson.gz"),
                    help="output file; gzip-compressed when it ends in .gz")
parser.add_argument("--target-bytes", type=int, default=3_500_000,
                    help="text of copyright files to take, the largest included (0: every distinct file)")
parser.add_argument("--copies", type=int, default=1,
                    help="write the copyright collection this many times, ids copyright/0001/<package>... (1: ids copyright/<package>)")
ARGS = parser.parse_args()
OUT = ARGS.out
TARGET_BYTES = ARGS.target_bytes or 1 << 62


def paragraphs(text):
    return [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]


def fields(paragraph):
    found = {}
    key = None
    for line in paragraph.splitlines():
        m = re.match(r"^([A-Za-z-]+):\s?(.*)$", line)
        if m:
            key = m.group(1)
            found.setdefault(key, []).append(m.group(2))
        elif key and line.startswith((" ", "\t")):
            found[key][-1] += "\n" + line.strip()
    return found


def copyright_document(package, text):
    doc = {"package": package, "bytes": len(text.encode()), "lines": text.count("\n") + 1}
    paras = paragraphs(text)
    if text.startswith("Format:"):
        header = fields(paras[0])
        doc["format"] = header.get("Format", [""])[0]
        if "Upstream-Name" in header:
            doc["upstream"] = {"name": header["Upstream-Name"][0], "contact": header.get("Upstream-Contact", [])}
        doc["stanzas"] = []
        for p in paras[1:]:
            f = fields(p)
            if "Files" in f or "License" in f:
                doc["stanzas"].append({
                    "files": f.get("Files", [""])[0].split(),
                    "copyright": f.get("Copyright", []),
                    "license": {"name": f.get("License", [""])[0].split("\n")[0], "text": "\n".join(f.get("License", [""])[0].split("\n")[1:])},
                })
    doc["paragraphs"] = paras
    return doc


def main():
    seen = set()
    files = sorted(glob.glob("/usr/share/doc/*/copyright"))
    chosen, total = [], 0
    # The largest distinct file (the giant), and every other file in name order up to the target.
    distinct = []
    for path in files:
        try:
            data = open(path, "rb").read()
            text = data.decode("utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        digest = hashlib.sha256(data).hexdigest()
        if digest in seen:
            continue
        seen.add(digest)
        distinct.append((path.split("/")[-2], text))
    giant = max(range(len(distinct)), key=lambda i: len(distinct[i][1]))
    room = TARGET_BYTES - len(distinct[giant][1])
    for i, (package, text) in enumerate(distinct):
        if i == giant or ((i % 2 == 0 or ARGS.target_bytes == 0) and total + len(text) <= room):
            chosen.append((package, text))
            if i != giant:
                total += len(text)
    os.makedirs(os.path.dirname(os.path.abspath(OUT)), exist_ok=True)
    opener = (lambda: io.TextIOWrapper(gzip.GzipFile(OUT, "wb", compresslevel=9, mtime=0), encoding="utf-8")) if OUT.endswith(".gz") else (lambda: open(OUT, "w", encoding="utf-8"))
    if ARGS.copies < 1:
        parser.error(f"--copies is {ARGS.copies}; it must be at least 1")
    with opener() as out:
        lines = [(package, json.dumps(copyright_document(package, text), ensure_ascii=False)) for package, text in chosen]
        for copy in range(1, ARGS.copies + 1):
            for package, doc in lines:
                key = package if ARGS.copies == 1 else f"{copy:04d}/{package}"
                out.write(json.dumps({"id": f"copyright/{key}"}, ensure_ascii=False)[:-1] + ', "doc": ' + doc + "}\n")
        for path in sorted(glob.glob("/usr/share/common-licenses/*")):
            if os.path.isfile(path) and not os.path.islink(path):
                text = open(path, encoding="utf-8", errors="replace").read()
                out.write(json.dumps({"id": f"licenses/{os.path.basename(path)}", "doc": {"name": os.path.basename(path), "text": text}}, ensure_ascii=False) + "\n")
    print(f"{len(chosen)} copyright documents x {ARGS.copies}, {(total + len(distinct[giant][1])) * ARGS.copies:,} bytes of text -> {OUT}")


main()
