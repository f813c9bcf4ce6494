#!/usr/bin/env python3
"""pyarrow's count and null_count of every column of some files, as JSON.

Usage: scripts/pyarrow_counts.py FILE...

FILE is a Parquet file, an Arrow IPC file or an Arrow IPC stream (told
apart by their first bytes). The files are one dataset, as arrowagg reads
them: columns are matched by name, and a column a file lacks is null in
each of its rows. Columns are named as arrowagg names them: the fields of a
struct are columns of their own, "struct.field", null where the field or
any enclosing struct is (Table.flatten); the k-th repeat of a name N is
N_k, k raised until no other column has that name (integration_counts.py's
rename, arrowagg's column.Leaves).

count is pyarrow.compute.count(column, mode="only_valid") and null_count
the same with mode="only_null", over the column decoded first where
pyarrow's count would see physical nulls only: run-end encoded columns
(expanded), dictionaries (a valid index to a null value is a null) and
extension types (their storage); a union's nulls are its logical nulls, an
element null where the child value it selects is (a union has no validity
of its own): pyarrow's own count, null_count and is_null count no union
element as null, so they are computed here from pyarrow's decoding of the
type codes, offsets and children.

It prints {"rows": N, "files": K, "columns": [{"name", "type", "count",
"null_count"}, ...]}, the shape of `arrowagg --format json -a
count,null_count`. Needs pyarrow only; scripts/check-pyarrow-counts.sh
compares the two.
"""

import json
import sys

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc
import pyarrow.parquet as pq

from integration_counts import rename


def read(path):
    with open(path, "rb") as f:
        head = f.read(8)
    if head[:4] == b"PAR1":
        return pq.read_table(path)
    if head[:6] == b"ARROW1":
        return pa.ipc.open_file(path).read_all()
    return pa.ipc.open_stream(path).read_all()


def flatten(table):
    while any(pa.types.is_struct(f.type) for f in table.schema):
        table = table.flatten()
    return table


def logical(chunk):
    """The chunk with its logical nulls as physical ones."""
    t = chunk.type
    if isinstance(t, pa.BaseExtensionType):
        return logical(chunk.storage)
    if pa.types.is_run_end_encoded(t):
        return logical(pc.run_end_decode(chunk))
    if pa.types.is_dictionary(t):
        return logical(chunk.dictionary_decode())
    return chunk


def union_nulls(chunk):
    """Whether each element of a union chunk is null: the child value it
    selects is (recursively for nested unions)."""
    t = chunk.type
    if len(chunk) == 0:
        return []
    # The type codes and offsets from the buffers (UnionArray.type_codes
    # crashes pyarrow 25 on an empty union, whose buffers are absent).
    bufs, lo, hi = chunk.buffers(), chunk.offset, chunk.offset + len(chunk)
    codes = np.frombuffer(bufs[1], dtype=np.int8)[lo:hi].tolist()
    child_of = {code: i for i, code in enumerate(t.type_codes)}
    dense = t.mode == "dense"
    offsets = np.frombuffer(bufs[2], dtype=np.int32)[lo:hi].tolist() if dense else None
    children = {}
    out = []
    for i, code in enumerate(codes):
        k = child_of[code]
        if k not in children:
            c = logical(chunk.field(k))
            children[k] = union_nulls(c) if pa.types.is_union(c.type) else c.is_null().to_pylist()
        out.append(children[k][offsets[i] if dense else i])
    return out


def counts(column):
    valid = nulls = 0
    for chunk in column.chunks:
        chunk = logical(chunk)
        if pa.types.is_union(chunk.type):
            n = sum(union_nulls(chunk))
            valid += len(chunk) - n
            nulls += n
            continue
        valid += pc.count(chunk, mode="only_valid").as_py()
        nulls += pc.count(chunk, mode="only_null").as_py()
    return valid, nulls


def main(paths):
    if not paths:
        sys.exit(__doc__)
    order, cols, rows = [], {}, 0
    for path in paths:
        table = flatten(read(path))
        seen = set()
        for name, column in zip(rename(table.column_names), table.columns):
            seen.add(name)
            if name not in cols:
                # null in the rows of the files before this one
                cols[name] = {"name": name, "type": str(column.type), "count": 0, "null_count": rows}
                order.append(name)
            valid, nulls = counts(column)
            cols[name]["count"] += valid
            cols[name]["null_count"] += nulls
        for name in order:
            if name not in seen:
                cols[name]["null_count"] += table.num_rows
        rows += table.num_rows
    json.dump({"rows": rows, "files": len(paths), "columns": [cols[n] for n in order]}, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main(sys.argv[1:])
