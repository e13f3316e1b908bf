"""Reading the user's data files: csv / tsv / jsonl / json / parquet or a Hub dataset id, with one clear
error per broken file (which flag, which file, which line or row, what is wrong). The one table reader of the
CLI, the runners, the work estimates and the Spaces' uploads (so none of them imports the CLI).

Rules: UTF-8 (a byte-order mark is dropped; a UTF-16/32 file with its mark is decoded), no NUL character, no
limit on the length of a cell (Python's csv module stops at 131,072 characters by default), a header whose
names are distinct (a duplicated name is refused, never one of the two columns silently taken), as many
fields per row as header names.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "d.csv"
>>> _ = path.write_text("text,text\\na,b\\n")
>>> read_rows(path)
Traceback (most recent call last):
...
ValueError: --data '...d.csv' line 1: column 'text' appears 2 times in the header (fields 1, 2); expected distinct column names — rename one of them
"""
from __future__ import annotations

import math
import re
from pathlib import Path

from textxai.loading import first_line
from textxai.validation import check_positive_int, one_line, short_repr


TABLE_SUFFIXES = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".json": "json", ".parquet": "parquet"}
_BOMS = ((b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))


def _file_error(path: Path, problem: str, line: int | None = None, name: str = "--data") -> ValueError:
    where = f" line {line}" if line is not None else ""
    return ValueError(f"{name} {str(path)!r}{where}: {problem}")


def check_size(path: Path, max_bytes: int | None, name: str = "--data") -> int:
    """The size of ``path`` in bytes, refused (before reading a byte of it) above ``max_bytes``."""
    size = path.stat().st_size
    if max_bytes is not None and size > max_bytes:
        raise _file_error(path, f"{size:,} bytes; at most {max_bytes:,} are accepted here — use a smaller file", None, name)
    return size


def read_text(path: Path, name: str = "--data", max_bytes: int | None = None) -> str:
    """The text of a csv/tsv/jsonl/json file: non-empty, no NUL, valid UTF-8 (or UTF-16/32 with its byte-order mark)."""
    check_size(path, max_bytes, name)
    raw = path.read_bytes()
    if not raw.strip():
        raise _file_error(path, "the file is empty; expected a header line and at least one row", None, name)
    encoding = next((enc for bom, enc in _BOMS if raw.startswith(bom)), "utf-8-sig")
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as error:
        raise _file_error(path, f"byte 0x{raw[error.start]:02x} is not valid {encoding.upper().replace('-SIG', '')}; "
                                "re-save the file as UTF-8", raw[:error.start].count(b"\n") + 1, name) from None
    nul = text.find("\x00")
    if nul >= 0:
        raise _file_error(path, "contains a NUL character (a binary or UTF-16 file without its byte-order mark?); "
                                "expected a UTF-8 text file", text[:nul].count("\n") + 1, name)
    if not text.strip():
        raise _file_error(path, "the file is empty; expected a header line and at least one row", None, name)
    return text


def _check_header(path: Path, header: list[str], name: str) -> None:
    seen: dict[str, list[int]] = {}
    for i, column in enumerate(header):
        seen.setdefault(column, []).append(i + 1)
    for column, where in seen.items():
        if len(where) > 1:
            raise _file_error(path, f"column {column!r} appears {len(where)} times in the header (fields "
                                    f"{', '.join(map(str, where))}); expected distinct column names — rename one of them",
                              1, name)


def _read_delimited(path: Path, delimiter: str, name: str = "--data", max_bytes: int | None = None,
                    max_rows: int | None = None) -> list[dict]:
    import csv
    import io

    text = read_text(path, name, max_bytes)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    kind = "tsv" if delimiter == "\t" else "csv"
    limit = csv.field_size_limit()
    csv.field_size_limit(max(limit, len(text) + 1))  # no cell can be longer than the file: no length limit
    try:
        header = next(reader)
        _check_header(path, header, name)
        rows = []
        for row in reader:
            if not row:
                continue
            if len(row) != len(header):
                raise _file_error(path, f"{len(row)} fields but the header has {len(header)}", reader.line_num, name)
            rows.append(dict(zip(header, row)))
            if max_rows is not None and len(rows) > max_rows:
                raise _file_error(path, f"more than {max_rows:,} rows; at most {max_rows:,} are accepted here", None, name)
    except csv.Error as error:
        raise _file_error(path, f"malformed {kind} ({error}; an unterminated quote?)", reader.line_num, name) from None
    finally:
        csv.field_size_limit(limit)
    if not rows:
        raise _file_error(path, "has a header but no data rows", None, name)
    return rows


def _unique_keys(pairs):
    keys = [k for k, _ in pairs]
    for key in keys:
        if keys.count(key) > 1:
            raise ValueError(f"key {key!r} appears {keys.count(key)} times in one object; expected distinct keys")
    return dict(pairs)


def _json_value(text: str, path: Path, name: str, number: int | None, hint: str = ""):
    import json

    try:
        return json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as error:
        raise _file_error(path, f"invalid JSON ({error.msg}){hint}", error.lineno if number is None else number,
                          name) from None
    except ValueError as error:  # a duplicated key
        raise _file_error(path, str(error), number, name) from None


def read_json_rows(path: Path, lines: bool, name: str = "--data", objects: bool = True) -> list:
    """The rows of a .json (a list) or .jsonl (one value per line) file; ``objects``: each row must be an object."""
    text = read_text(path, name)
    if not lines and text.lstrip().startswith("["):
        rows = _json_value(text, path, name, None)
        numbered = [(None, row) for row in rows]
    else:
        numbered = [(number, _json_value(line, path, name, number, "; expected one JSON object per line"))
                    for number, line in enumerate(text.splitlines(), 1) if line.strip()]
    for i, (number, row) in enumerate(numbered):
        if objects and not isinstance(row, dict):
            raise _file_error(path, f"row {i + 1} is {type(row).__name__}; expected a JSON object per row", number, name)
    if not numbered:
        raise _file_error(path, "has no rows", None, name)
    return [row for _, row in numbered]


def _read_parquet(path: Path, name: str = "--data") -> list[dict]:
    import pyarrow.parquet as pq

    def broken(error):
        return _file_error(path, f"not a readable parquet file ({type(error).__name__}: {one_line(str(error), 160)})",
                           None, name)

    try:
        source = pq.ParquetFile(path)
        names = list(source.schema_arrow.names)
    except Exception as error:  # noqa: BLE001 - pyarrow raises several types for broken files
        raise broken(error) from None
    _check_header(path, names, name)
    try:
        rows = source.read().to_pylist()
    except Exception as error:  # noqa: BLE001
        raise broken(error) from None
    if not rows:
        raise _file_error(path, "has no rows", None, name)
    return rows


def read_rows(path: Path, name: str = "--data", max_bytes: int | None = None, max_rows: int | None = None) -> list[dict]:
    """The rows of a local csv / tsv / jsonl / json / parquet file as dicts; one clear error for a broken file.

    ``name`` is the flag or input the file came from (in every message); ``max_bytes`` refuses a bigger file
    before reading it, ``max_rows`` a csv/tsv with more data rows while reading it (the Spaces' caps).
    """
    path = Path(path)
    kind = TABLE_SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise ValueError(f"{name} {str(path)!r}: unsupported file type {path.suffix!r}; expected one of {sorted(TABLE_SUFFIXES)}")
    if not path.is_file():
        raise ValueError(f"{name} {str(path)!r}: not a file")
    if kind in ("csv", "tsv"):
        return _read_delimited(path, "\t" if kind == "tsv" else ",", name, max_bytes, max_rows)
    check_size(path, max_bytes, name)
    rows = _read_parquet(path, name) if kind == "parquet" else read_json_rows(path, kind == "jsonl", name)
    if max_rows is not None and len(rows) > max_rows:
        raise _file_error(path, f"{len(rows):,} rows; at most {max_rows:,} are accepted here", None, name)
    return rows


def _text_cells(rows: list[dict], column: str, data: str, flag: str = "--text-column", data_flag: str = "--data") -> list[str]:
    out = []
    for i, row in enumerate(rows):
        value = row.get(column)
        if not isinstance(value, str):
            raise ValueError(f"{flag} {column!r}: {data_flag} {data!r} row {i + 1}: column {column!r} holds "
                             f"{short_repr(value, 40)} ({type(value).__name__}); expected a text")
        out.append(value)
    return out


_NUMBER_CELL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def _label_cells(rows: list[dict], column: str, flag: str = "--label-column", where: str = "") -> list:
    """A label column's values: class indices where the cells are numbers (csv strings "1" or "1.0", as pandas
    writes an integer column with a missing value; typed floats 1.0), None for an empty cell, else as given
    (class names). A number that is not whole is an error naming the flag, the column, ``where`` (the file), the
    row and the value.

    >>> _label_cells([{"y": "1.0"}, {"y": "0"}, {"y": ""}], "y")
    [1, 0, None]
    >>> _label_cells([{"y": "positive"}, {"y": "negative"}], "y")
    ['positive', 'negative']
    >>> _label_cells([{"y": "1.0"}, {"y": "0.5"}], "y")
    Traceback (most recent call last):
    ...
    ValueError: --label-column 'y': row 2 holds '0.5': expected a whole number (a class index) or a class name
    """
    values = [None if isinstance(v, str) and not v.strip() else v for v in (row.get(column) for row in rows)]
    present = [v for v in values if v is not None]
    numeric = all(isinstance(v, str) and _NUMBER_CELL.fullmatch(v.strip()) for v in present) \
        or all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present)
    if not present or not numeric:
        return values
    return [_class_index(v, f"{flag} {column!r}: {where}row {row}") for row, v in enumerate(values, start=1)]


def _class_index(value, cell: str):
    """One numeric label cell as a class index (None when missing); a number that is not whole is an error."""
    if value is None or isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"[+-]?\d+", value.strip()):
        return int(value)
    number = float(value)
    if math.isnan(number):
        return None  # a typed file's missing value
    if not number.is_integer():
        raise ValueError(f"{cell} holds {short_repr(value, 40)}: expected a whole number "
                         "(a class index) or a class name")
    return int(number)


def _missing_column(flag: str, column: str, data: str, columns: list) -> ValueError:
    import difflib

    near = [c for c in columns if isinstance(c, str) and c.strip().lower() == str(column).strip().lower()]
    near = near or difflib.get_close_matches(str(column), [str(c) for c in columns], n=1)
    hint = f"; did you mean {near[0]!r}?" if near else ""
    return ValueError(f"{flag} {column!r}: no such column in {data!r}; columns: {columns}{hint}")


def _rows_and_columns(data: str, split: str, limit: int | None, data_flag: str):
    """(rows or None, a Hub dataset or None, column names) of a local file or a Hub dataset id."""
    path = Path(data)
    if path.exists():
        rows = read_rows(path, data_flag)
        return rows, None, list(rows[0])
    if path.suffix.lower() in TABLE_SUFFIXES or data.startswith((".", "/", "~")):
        raise ValueError(f"{data_flag} {data!r}: no such file")
    import datasets

    try:
        table = datasets.load_dataset(data, split=split)
    except Exception as error:  # noqa: BLE001 - any loading failure becomes one clear message
        raise ValueError(f"{data_flag} {data!r}: no such file, and it could not be loaded as a Hub dataset "
                         f"(split {split!r}): {one_line(first_line(error), 200)}") from None
    return None, table, table.column_names


def load_columns(data: str, columns: dict, split: str = "test", limit: int | None = None, data_flag: str = "--data") -> dict:
    """``{flag: values}`` of the named columns ``{flag: (column, kind)}`` (kind ``"text"``, ``"label"`` or
    ``"any"``) of a local file or a Hub dataset id; every message names the flag the user passed.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "d.csv"
    >>> _ = path.write_text("text,cf\\ngood,bad\\n")
    >>> load_columns(str(path), {"--counterfactual-column": ("nope", "text")})
    Traceback (most recent call last):
    ...
    ValueError: --counterfactual-column 'nope': no such column in '...d.csv'; columns: ['text', 'cf']
    """
    if limit is not None:
        check_positive_int(limit, "--limit")
    rows, table, names = _rows_and_columns(data, split, limit, data_flag)
    for flag, (column, _) in columns.items():
        if column is not None and column not in names:
            raise _missing_column(flag, column, data, names)
    if rows is None:
        if limit is not None:
            table = table.select(range(min(limit, len(table))))
        rows = table.to_list()
    elif limit is not None:
        rows = rows[:limit]
    out = {}
    for flag, (column, kind) in columns.items():
        if column is None:
            out[flag] = None
        elif kind == "text":
            out[flag] = _text_cells(rows, column, data, flag, data_flag)
        elif kind == "label":
            out[flag] = _label_cells(rows, column, flag, f"{data_flag} {data!r} ")
        else:
            out[flag] = [row.get(column) for row in rows]
    return out


def load_table(data: str, text_column: str, pair_column: str | None, label_column: str | None, split: str,
               limit: int | None, data_flag: str = "--data"):
    """Texts, pairs and labels from a local csv / jsonl / json / parquet / tsv file or a Hub dataset id.

    A broken file (empty, header only, not UTF-8, a NUL byte, an unterminated quote, a duplicated header, a
    non-text cell in a text column, a missing column) is one ``ValueError`` naming the flag, the file, the line
    or row, and the problem. ``data_flag``: the flag the file was given with (``--data``, ``--train-data``).
    """
    got = load_columns(data, {"--text-column": (text_column, "text"), "--pair-column": (pair_column, "text"),
                              "--label-column": (label_column, "label")}, split, limit, data_flag)
    return got["--text-column"], got["--pair-column"], got["--label-column"]


def load_column(data: str, column: str, flag: str, split: str = "test", limit: int | None = None, kind: str = "text",
                data_flag: str = "--data") -> list:
    """The values of one column (``flag`` names it in every message); see :func:`load_columns`."""
    return load_columns(data, {flag: (column, kind)}, split, limit, data_flag)[flag]
