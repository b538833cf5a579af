"""Regenerate names.jsonl: what Python's `re` says of candidate split names
under the two rules a published split name must pass, which the Go rule in
bakeapi/spec.go (CheckSplitName) is tested against. Run from this directory
with python3 gen.py (any CPython 3; 3.11 made the committed file).

- datasets: `_split_re = r"^\\w+(\\.\\w+)*$"` (src/datasets/naming.py of
  huggingface/datasets), which NamedSplit.__init__ (splits.py) and
  MetadataConfigs._raise_if_data_files_field_not_valid (utils/metadata.py)
  apply with re.match. `\\w` of a str pattern is Unicode-aware.
- whestbench: `_SPLIT_NAME_RE = r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$"`
  (src/whestbench/dataset_io.py _validate_split_name, v0.16), which
  validate_metadata applies to every split name before whestbench loads.

Each output line is a JSON array [name, datasets_accepts, whestbench_accepts].
"""
import json
import random
import re

DATASETS = re.compile(r"^\w+(\.\w+)*$")
WHESTBENCH = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")

hand = [
    "public", "holdout", "mini", "full", "a", "z9", "split2026", "all", "ALL", "default",
    "mini-a", "mini_a", "minia", "my-custom-split", "train.clean", "train..clean", ".a", "a.",
    "Public", "PUBLIC", "mini-A", "2024", "9lives", "_a", "a_", "__", "a b", "a/b", "a\\b",
    "a+b", "a[1]", "a:b", "", "-a", "a-", "a--b", "public\n", "public\r", "\npublic", " public",
    "public ", "caf\u00e9", "\u00e9t\u00e9", "\u540d\u524d", "\u0663", "a\u0663", "\u00df",
    "\u0130", "\u01c5", "\u2160", "\u00b2", "a\u00b2", "\ud835\udfd8", "a\u200c", "\ufb01",
    "\u212a", "k\u0307", "a\u0301", "tab\there", "null", "true", "no", "on", "1e3", "0x1f",
    "x" * 128, "x" * 129,
]
alphabet = list("az09-_.A ") + ["\u00e9", "\u0663", "\u00df", "\u0130", "\n", "/", "\u01c5", "\u2160"]
rng = random.Random(26)
fuzz = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6))) for _ in range(400)]
# Names near the accepted set: lowercase letters, digits and a hyphen.
fuzz += ["".join(rng.choice("ab09-") for _ in range(rng.randint(1, 6))) for _ in range(150)]

seen = set()
with open("names.jsonl", "w") as f:
    for name in hand + fuzz:
        if name in seen:
            continue
        seen.add(name)
        row = [name, DATASETS.match(name) is not None, WHESTBENCH.match(name) is not None]
        f.write(json.dumps(row) + "\n")
