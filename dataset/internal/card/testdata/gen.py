"""Regenerate PyYAML's rendering of card scalars, which the Go front-matter
writer is tested against. Run from this directory with /usr/bin/python3 gen.py
(PyYAML 6.0, as whestbench's generate_readme calls it). Each output line is a
JSON array [input, yaml.dump({"k": input}, ...)].
"""
import json

import yaml

samples = [
    "public", "my-custom-split", "n<1K", "1K<n<10K", "100K<n<1M", "data/public-*.parquet",
    "https://github.com/AIcrowd/whestbench", "cc-by-4.0",
    "WhestBench 2026: ARC White-Box Estimation Challenge", "it's", "a'b: c",
    "yes", "No", "true", "FALSE", "on", "null", "~", "123", "-7", "1.5", "1e3", "0x1F", ".5",
    "2026-11-22", "12:30", "-leading", "- dash", "#hash", "a #b", "a#b", "key:", "ends space ",
    " lead", "", "\u00fcn\u00efc\u00f6d\u00e9", "@at", "%pct", "`tick", "[x]", "{y}", "a, b", "x: y",
    "?q", "!bang", "&amp", "*star", "|pipe", ">gt", "'sq", "\"dq", "=", "<<", "tab\there",
]
with open("scalars.jsonl", "w") as f:
    for s in samples:
        out = yaml.dump({"k": s}, default_flow_style=False, allow_unicode=True)
        f.write(json.dumps([s, out]) + "\n")
