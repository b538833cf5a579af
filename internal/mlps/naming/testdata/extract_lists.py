#!/usr/bin/env python3
"""One-off extraction of faker's en_US first/last name lists into naming/data/*.tsv.

Faker is data here, not a dependency: the lists are read from the faker source at tag
v37.12.0 (parsed with `ast`, never imported) and written as `name<TAB>weight` lines with
the weight text exactly as it appears in the source. The output is checked against the
SHA-256 checksums below (FIRST_SHA256, LAST_SHA256: computed from faker 37.12.0's
own lists, apart from this script) before anything is written.

Usage (from the repository root):
    git --git-dir=/work/.mirror/joke2k+faker/repo \
        show v37.12.0:faker/providers/person/en_US/__init__.py > /tmp/faker_en_US.py
    python3 naming/testdata/extract_lists.py /tmp/faker_en_US.py naming/data
"""

import ast
import hashlib
import os
import sys

FIRST_SHA256 = "ac34a1bc71e570f7cee2b92ff0ea38a6009f35460aeccede24b71f3048f75161"
LAST_SHA256 = "161c4b10c4556e4cae18a2928c8a3e90b66582561dbb690950760b5e17a05187"


def ordered_dict_entries(source, tree, attr):
    """Return [(name, weight_text)] of `attr = OrderedDict((("Name", w), ...))` in the class body."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target = node.targets[0]
        if not (isinstance(target, ast.Name) and target.id == attr):
            continue
        call = node.value
        if not (isinstance(call, ast.Call) and getattr(call.func, "id", "") == "OrderedDict"):
            raise SystemExit(f"{attr}: expected an OrderedDict(...) literal")
        entries = []
        for pair in call.args[0].elts:
            name = ast.literal_eval(pair.elts[0])
            weight_text = ast.get_source_segment(source, pair.elts[1])
            float(weight_text)  # fail loudly on anything that is not a plain float literal
            entries.append((name, weight_text))
        return entries
    raise SystemExit(f"{attr}: assignment not found in the faker source")


def merged(base, update):
    """Python dict.copy() + update(): existing keys keep their position but take the new value."""
    out = dict(base)
    out.update(update)
    return list(out.items())


def checksum(entries):
    text = "".join(f"{name}\t{float(w)!r}\n" for name, w in entries)
    return hashlib.sha256(text.encode()).hexdigest()


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    src_path, out_dir = sys.argv[1], sys.argv[2]
    with open(src_path, encoding="utf-8") as f:
        source = f.read()
    tree = ast.parse(source)
    male = ordered_dict_entries(source, tree, "first_names_male")
    female = ordered_dict_entries(source, tree, "first_names_female")
    first = merged(male, female)
    last = ordered_dict_entries(source, tree, "last_names")
    for label, entries, want in (("first", first, FIRST_SHA256), ("last", last, LAST_SHA256)):
        got = checksum(entries)
        if got != want:
            raise SystemExit(f"{label} names: checksum {got} != reference {want}")
    for fname, entries in (("first_names.tsv", first), ("last_names.tsv", last)):
        with open(os.path.join(out_dir, fname), "w", encoding="ascii", newline="\n") as f:
            f.writelines(f"{name}\t{w}\n" for name, w in entries)
    print(f"male {len(male)}, female {len(female)}, first {len(first)}, last {len(last)}")


if __name__ == "__main__":
    main()
