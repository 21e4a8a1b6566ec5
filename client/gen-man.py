#!/usr/bin/env python3
"""libsamsa's API reference as man pages, written from samsa.h's comments.

    gen-man.py SAMSA_H README_MD OUTDIR PAGE...

samsa.h is cut at its section lines (`/* ---...--- producer */`): the text
before the first one (the header's opening comment: threads, lifetimes,
errors, ownership) becomes samsa(3), with the list of the other pages; each
section becomes one page of its functions, types and macros, each shown as
declared with the comment written above it (or beside it). The configuration
page also carries client/README.md's "Configuration keys" table. PAGE... are
the file names meson expects (client/meson.build): the run fails when the
header's sections no longer give exactly those, so a new section is not
left out of the installed reference.
"""
import os
import re
import sys

SECTION = re.compile(r"^/\* -{3,} ([^*]+?) \*/$")
# the page of each section of samsa.h, and what it says in NAME
PAGES = {
    "errors": ("samsa_errors", "error codes and their names"),
    "configuration": ("samsa_conf", "configuration objects, keys and callbacks"),
    "records": ("samsa_records", "records, delivery reports, callbacks"),
    "producer": ("samsa_producer", "the asynchronous producer"),
    "consumer": ("samsa_consumer", "the consumer: assignment, groups, offsets"),
    "admin": ("samsa_admin", "topics, partitions, configs, records, metadata"),
    "admin: groups": ("samsa_admin_groups", "consumer groups and their offsets"),
    "partitioner": ("samsa_partitioner", "the default partitioner's hash"),
}
DECLARED = [
    re.compile(r"\b(samsa_\w+)\s*\("),             # a function
    re.compile(r"^typedef\s+struct\s+\w+\s+(\w+);"),  # an opaque handle
    re.compile(r"^(?:typedef\s+)?(struct\s+samsa_\w+|enum\s+samsa_\w+)\s*\{"),
    re.compile(r"^typedef\s+\w+\s+(samsa_\w+)\("),  # a callback type
    re.compile(r"^#define\s+(SAMSA_\w+)"),
]
# the header's guards and C++ wrapping ("}" alone closes extern "C"): not the API
STOP = ("#ifdef __cplusplus", "#endif", "#ifndef SAMSA_SAMSA_H", "#define SAMSA_SAMSA_H",
        'extern "C"')


def roff(line):
    """One line of text for groff: backslashes and a leading dot or quote escaped."""
    line = line.replace("\\", "\\e")
    if line.startswith((".", "'")):
        line = "\\&" + line
    return line


def comment_text(lines):
    """The text of a block comment, its `/*`, `*/` and leading ` * ` taken off."""
    out = []
    for ln in lines:
        s = ln.strip()
        s = re.sub(r"^/\*+ ?", "", s)
        s = re.sub(r" ?\*+/$", "", s)
        s = re.sub(r"^\* ?", "", s)
        out.append(s)
    while out and not out[0].strip():
        out.pop(0)
    while out and not out[-1].strip():
        out.pop()
    return out


def blocks(lines):
    """Items of a section: (comment lines, code lines), split at blank lines;
    a comment is the block comment above the code."""
    items, cur = [], []
    for ln in lines + [""]:
        if ln.strip() == "":
            if cur:
                items.append(cur)
            cur = []
        else:
            cur.append(ln)
    out = []
    for item in items:
        comment, code, in_comment = [], [], False
        for ln in item:
            s = ln.strip()
            if not code and (in_comment or s.startswith("/*")):
                comment.append(ln)
                in_comment = not s.endswith("*/")
            else:
                code.append(ln)
        code = [c for c in code if c.strip() != "}" and not c.strip().startswith(STOP)]
        if code or comment:
            out.append((comment_text(comment), code))
    return out


def names(code):
    found = []
    for ln in code:
        ln = re.sub(r"/\*.*?(\*/|$)", "", ln).strip()  # a comment names, not declares
        for pat in DECLARED:
            for m in pat.finditer(ln):
                if m.group(1) not in found:
                    found.append(m.group(1))
    return found


def page_head(name, what, out):
    out.append('.TH %s 3 "" "libsamsa %s" "libsamsa"' % (name.upper(), VERSION))
    out.append(".SH NAME")
    out.append("%s \\- %s" % (name.replace("_", "\\_"), what))
    out.append(".SH SYNOPSIS")
    out.append(".nf")
    out.append(".B #include <samsa/samsa.h>")
    out.append(".PP")
    out.append(".B cc ... $(pkg-config --cflags --libs samsa)")
    out.append(".fi")


def verbatim(lines, out):
    out.append(".nf")
    out.extend(roff(ln) for ln in lines)
    out.append(".fi")


def config_keys(readme):
    """client/README.md's "Configuration keys": its prose and its table."""
    text = open(readme, encoding="utf-8").read()
    m = re.search(r"^## Configuration keys\n(.*?)(?=^## )", text, re.S | re.M)
    if m is None:
        return []
    out = [".SH CONFIGURATION KEYS"]
    for ln in m.group(1).strip().splitlines():
        ln = ln.replace("`", "")
        if ln.startswith("|"):
            cells = [c.strip() for c in ln.strip("|").split("|")]
            if len(cells) < 2 or set(cells[0]) <= set("-") or cells[0] == "key (aliases)":
                continue
            out += [".TP", roff(cells[0]), roff(cells[1])]
        elif ln.strip():
            out.append(roff(ln))
        else:
            out.append(".PP")
    return out


def main(argv):
    global VERSION
    if len(argv) < 5:
        print(__doc__, file=sys.stderr)
        return 2
    header, readme, outdir, expected = argv[1], argv[2], argv[3], sorted(argv[4:])
    lines = open(header, encoding="utf-8").read().splitlines()
    m = re.search(r'#define SAMSA_VERSION_STR "([^"]+)"', "\n".join(lines))
    VERSION = m.group(1) if m else "?"
    sections, title = {"": []}, ""
    order = [""]
    for ln in lines:
        m = SECTION.match(ln.strip())
        if m:
            title = m.group(1).strip()
            if title not in PAGES:
                print("gen-man.py: section '%s' of %s has no page: add it to PAGES"
                      % (title, header), file=sys.stderr)
                return 1
            sections[title] = []
            order.append(title)
        else:
            sections[title].append(ln)
    made = sorted(["samsa.3"] + [PAGES[t][0] + ".3" for t in order[1:]])
    if made != expected:
        print("gen-man.py: the header gives %s, meson expects %s: update client/meson.build"
              % (made, expected), file=sys.stderr)
        return 1

    pages = {}
    # samsa(3): the opening comment, the prelude's declarations, the pages
    intro = blocks(sections[""])
    out = []
    page_head("samsa", "libsamsa, the C client library of Samsa (Kafka protocol)", out)
    out.append(".SH DESCRIPTION")
    for comment, code in intro:
        opening = bool(comment) and comment[0].startswith("libsamsa:")
        if not opening and not any(n.lower().startswith("samsa_version") for n in names(code)):
            continue  # the includes, SAMSA_MUST_CHECK's definition
        for ln in comment:
            out.append(roff(ln) if ln.strip() else ".PP")
        if code:
            out.append(".PP")
            verbatim(code, out)
        out.append(".PP")
    out.append(".SH SEE ALSO")
    out.append(",\n".join(".BR %s (3)" % PAGES[t][0] for t in order[1:]))
    pages["samsa.3"] = out

    for t in order[1:]:
        name, what = PAGES[t]
        out = []
        page_head(name, what, out)
        out.append(".SH DESCRIPTION")
        for comment, code in blocks(sections[t]):
            declared = names(code)
            if declared:
                out.append(".SS %s" % roff(", ".join(declared)))
            if code:
                verbatim(code, out)
            if comment:
                out.append(".PP")
                verbatim(comment, out)
            out.append(".PP")
        if t == "configuration":
            out += config_keys(readme)
        out.append(".SH SEE ALSO")
        out.append(".BR samsa (3)")
        pages[name + ".3"] = out

    for fname, body in pages.items():
        with open(os.path.join(outdir, fname), "w", encoding="utf-8") as f:
            f.write("\n".join(body) + "\n")
    return 0


VERSION = "?"
if __name__ == "__main__":
    sys.exit(main(sys.argv))
