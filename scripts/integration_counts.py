#!/usr/bin/env python3
"""Count and null_count of every leaf column of Arrow integration JSON files.

The Arrow integration corpus (arrow-testing's data/arrow-ipc-stream/
integration/*/) holds, beside each X.arrow_file and X.stream, X.json.gz: the
same batches in Arrow's integration JSON, every column's VALIDITY, and a
union's TYPE_ID (and OFFSET, dense) arrays. This prints, per file given, the
rows of testdata/conformance/expectations.tsv for its leaf columns as
arrowagg names them (struct fields dotted, the k-th repeat of a name N as
N_k), from the JSON alone:

  - a struct's nulls fold into its fields (a field is null where the
    struct is);
  - a union has no validity: element i is null where the child value it
    selects is (sparse: the child's element i; dense: its element
    OFFSET[i]), the child's own nulls recursively (a null child always; a
    struct child by its VALIDITY; a union child by its children);
  - a column without VALIDITY is all valid, but a null-typed one, all null;
  - min, max and sum of the integer leaves, min and max of the utf8 leaves
    (by their bytes), null where there is nothing to order or sum (a
    union, no value), - for other types (not checked).

Usage: python3 scripts/integration_counts.py CORPUS_ROOT FILE.json.gz...
(FILE relative to CORPUS_ROOT, the folder holding arrow-testing); the
.arrow_file and .stream beside each get one row per column each.
"""

import gzip
import json
import sys


def is_null_elem(field, col, i):
    """Whether element i of column col (of schema field field) is null."""
    t = field["type"]["name"]
    if t == "null":
        return True
    if t == "union":
        codes = field["type"]["typeIds"]
        code = col["TYPE_ID"][i]
        k = codes.index(code)
        j = col["OFFSET"][i] if field["type"]["mode"] == "DENSE" else i
        return is_null_elem(field["children"][k], col["children"][k], j)
    validity = col.get("VALIDITY")
    return validity is not None and validity[i] == 0


def leaves(fields, cols, prefix, parent_null, out):
    """Appends (name, type, values) for each leaf: values holds None for a
    null element, else the element's DATA value (or True where it has none)."""
    for f, c in zip(fields, cols):
        name = prefix + f["name"]
        n = c["count"]
        nulls = [parent_null[i] or is_null_elem(f, c, i) for i in range(n)]
        if f["type"]["name"] == "struct":
            leaves(f["children"], c["children"], name + ".", nulls, out)
            continue
        data = c.get("DATA")
        vals = [None if nulls[i] else (data[i] if data is not None else True) for i in range(n)]
        out.append((name, f["type"], vals))


def rename(names):
    """arrowagg's names for leaves whose names repeat: the k-th repeat of N
    is N_k, k raised past every other leaf's name."""
    used = set(names)
    seen, nxt, out = {}, {}, []
    for n in names:
        if n not in seen:
            seen[n], nxt[n] = 1, 1
            out.append(n)
            continue
        seen[n] += 1
        k = nxt[n]
        while f"{n}_{k}" in used:
            k += 1
        nxt[n] = k + 1
        used.add(f"{n}_{k}")
        out.append(f"{n}_{k}")
    return out


def main():
    root, files = sys.argv[1], sys.argv[2:]
    for rel in files:
        with gzip.open(f"{root}/{rel}", "rt") as fh:
            doc = json.load(fh)
        fields = doc["schema"]["fields"]
        names, types, values = [], [], []
        for b in doc["batches"]:
            out = []
            leaves(fields, b["columns"], "", [False] * b["count"], out)
            if not names:
                names, types, values = [n for n, _, _ in out], [t for _, t, _ in out], [[] for _ in out]
            for k, (_, _, vals) in enumerate(out):
                values[k].extend(vals)
        base = rel[: -len(".json.gz")]
        twin = base.rsplit("/", 1)[-1] + ".json.gz"
        for ext in (".arrow_file", ".stream"):
            for name, typ, vals in zip(rename(names), types, values):
                count = sum(v is not None for v in vals)
                lo = hi = total = "-"
                present = [v for v in vals if v is not None]
                if typ["name"] in ("union", "null") or (typ["name"] in ("int", "utf8") and count == 0):
                    lo = hi = total = "null"  # nothing to order or sum
                elif typ["name"] == "int":
                    ints = [int(v) for v in present]
                    lo, hi, total = str(min(ints)), str(max(ints)), str(sum(ints))
                elif typ["name"] == "utf8":  # ordered by their UTF-8 bytes
                    key = lambda v: v.encode("utf-8")
                    lo, hi, total = min(present, key=key), max(present, key=key), "null"
                print("\t".join([base + ext, name, str(count), str(len(vals) - count), lo, hi, total,
                                 f"{twin} (the integration JSON twin: VALIDITY, TYPE_ID, OFFSET; scripts/integration_counts.py)"]))


if __name__ == "__main__":
    main()
