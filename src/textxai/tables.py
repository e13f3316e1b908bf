"""Reading the user's data files: csv / tsv / jsonl / json / parquet or a Hub dataset id, with one clear
error per broken file (which file, which line or row, what is wrong). Used by the CLI, the runners and the
work estimates (so none of them imports the CLI).
"""
from __future__ import annotations

from pathlib import Path

from textxai.loading import first_line
from textxai.validation import check_positive_int, one_line, short_repr


TABLE_SUFFIXES = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".json": "json", ".parquet": "parquet"}


def _file_error(path: Path, problem: str, line: int | None = None) -> ValueError:
    where = f" line {line}" if line is not None else ""
    return ValueError(f"--data {str(path)!r}{where}: {problem}")


def _decoded(path: Path) -> str:
    """The text of a csv/tsv/jsonl/json file: non-empty, no NUL byte, valid UTF-8 (else one clear error)."""
    raw = path.read_bytes()
    if not raw.strip():
        raise _file_error(path, "the file is empty; expected a header line and at least one row")
    nul = raw.find(b"\x00")
    if nul >= 0:
        raise _file_error(path, "contains a NUL byte (a binary or UTF-16 file?); expected a UTF-8 text file",
                          raw[:nul].count(b"\n") + 1)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise _file_error(path, f"byte 0x{raw[error.start]:02x} is not valid UTF-8; re-save the file as UTF-8",
                          raw[:error.start].count(b"\n") + 1) from None


def _read_delimited(path: Path, delimiter: str) -> list[dict]:
    import csv
    import io

    reader = csv.reader(io.StringIO(_decoded(path), newline=""), delimiter=delimiter, strict=True)
    try:
        header = next(reader)
        rows = []
        for row in reader:
            if not row:
                continue
            if len(row) != len(header):
                raise _file_error(path, f"{len(row)} fields but the header has {len(header)}", reader.line_num)
            rows.append(dict(zip(header, row)))
    except csv.Error as error:
        raise _file_error(path, f"malformed {'tsv' if delimiter == chr(9) else 'csv'} ({error}; an unterminated quote?)",
                          reader.line_num) from None
    if not rows:
        raise _file_error(path, "has a header but no data rows")
    return rows


def _read_json(path: Path, lines: bool) -> list[dict]:
    import json

    text = _decoded(path)
    if not lines and text.lstrip().startswith("["):
        try:
            rows = json.loads(text)
        except json.JSONDecodeError as error:
            raise _file_error(path, f"invalid JSON ({error.msg})", error.lineno) from None
        numbered = [(None, row) for row in rows]
    else:
        numbered = []
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    numbered.append((number, json.loads(line)))
                except json.JSONDecodeError as error:
                    raise _file_error(path, f"invalid JSON ({error.msg}); expected one JSON object per line",
                                      number) from None
    for i, (number, row) in enumerate(numbered):
        if not isinstance(row, dict):
            raise _file_error(path, f"row {i + 1} is {type(row).__name__}; expected a JSON object per row", number)
    if not numbered:
        raise _file_error(path, "has no rows")
    return [row for _, row in numbered]


def _read_parquet(path: Path) -> list[dict]:
    import pyarrow.parquet as pq

    try:
        rows = pq.read_table(path).to_pylist()
    except Exception as error:  # noqa: BLE001 - pyarrow raises several types for broken files
        raise _file_error(path, f"not a readable parquet file ({type(error).__name__}: "
                                f"{one_line(str(error), 160)})") from None
    if not rows:
        raise _file_error(path, "has no rows")
    return rows


def read_rows(path: Path) -> list[dict]:
    """The rows of a local csv / tsv / jsonl / json / parquet file as dicts; one clear error for a broken file."""
    kind = TABLE_SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise ValueError(f"--data {str(path)!r}: unsupported file type {path.suffix!r}; expected one of {sorted(TABLE_SUFFIXES)}")
    if not path.is_file():
        raise ValueError(f"--data {str(path)!r}: not a file")
    if kind in ("csv", "tsv"):
        return _read_delimited(path, "\t" if kind == "tsv" else ",")
    if kind == "parquet":
        return _read_parquet(path)
    return _read_json(path, lines=kind == "jsonl")


def _text_cells(rows: list[dict], column: str, data: str) -> list[str]:
    out = []
    for i, row in enumerate(rows):
        value = row.get(column)
        if not isinstance(value, str):
            raise ValueError(f"--data {data!r} row {i + 1}: column {column!r} holds {short_repr(value, 40)} "
                             f"({type(value).__name__}); expected a text")
        out.append(value)
    return out


def _label_cells(rows: list[dict], column: str) -> list:
    values = [row.get(column) for row in rows]
    if all(isinstance(v, str) for v in values):
        try:  # csv cells are strings: whole numbers become class indices, as a typed file would give them
            return [int(v) for v in values]
        except ValueError:
            pass
    return [None if isinstance(v, str) and not v.strip() else v for v in values]


def load_table(data: str, text_column: str, pair_column: str | None, label_column: str | None, split: str,
               limit: int | None):
    """Texts, pairs and labels from a local csv / jsonl / json / parquet / tsv file or a Hub dataset id.

    A broken file (empty, header only, not UTF-8, a NUL byte, an unterminated quote, a non-text cell in a
    text column, a missing column) is one ``ValueError`` naming the file, the line or row, and the problem.
    """
    if limit is not None:
        check_positive_int(limit, "--limit")
    path = Path(data)
    if path.exists():
        rows = read_rows(path)
        columns = list(rows[0])
    else:
        if path.suffix.lower() in TABLE_SUFFIXES or data.startswith((".", "/", "~")):
            raise ValueError(f"--data {data!r}: no such file")
        import datasets

        try:
            table = datasets.load_dataset(data, split=split)
        except Exception as error:  # noqa: BLE001 - any loading failure becomes one clear message
            raise ValueError(f"--data {data!r}: no such file, and it could not be loaded as a Hub dataset "
                             f"(split {split!r}): {one_line(first_line(error), 200)}") from None
        columns = table.column_names
        rows = None
    for flag, column in (("--text-column", text_column), ("--pair-column", pair_column), ("--label-column", label_column)):
        if column is not None and column not in columns:
            raise ValueError(f"{flag} {column!r}: no such column in {data!r}; columns: {columns}")
    if rows is None:
        if limit is not None:
            table = table.select(range(min(limit, len(table))))
        rows = table.to_list()
    elif limit is not None:
        rows = rows[:limit]
    texts = _text_cells(rows, text_column, data)
    pairs = None if pair_column is None else _text_cells(rows, pair_column, data)
    labels = None if label_column is None else _label_cells(rows, label_column)
    return texts, pairs, labels
