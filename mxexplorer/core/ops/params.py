"""Operator attributes read as MXNet 1.9.1's parameter parser reads them.

Owns :func:`parse`: a node's attribute strings (as any front end wrote them: ``'None'``,
``'0'``/``'1'``, ``'true'``/``'True'``, ``(3, 3)``, ``[3,3]``, ``(3,)``, ``3``, ``(3L, 3L)``)
turned into typed values with MXNet's defaults filled in, or a :class:`ParamError` that
names the attribute and says what would fit.  The fields of every op (name, type,
default) come from the op table ``tools/gen_op_table.py`` writes from MXNet itself, so
an op's parameters are never typed in by hand.  Must not import MXNet or Qt.

Type texts and what they become:

- ``boolean``: ``True``/``False`` (``true``, ``1``, ``0``, any case, nothing around them);
- ``int``, ``long`` (optionally ``(non-negative)``): ``int``; ``float``, ``double``: ``float``;
- ``Shape(tuple)``, ``tuple of <int|long|float|double>``: a tuple (``None`` for MXNet's
  unknown shape, written ``None``);
- ``X or None``: ``None`` or the value; ``{None, 'a', 'b'}``: the chosen name or None;
- ``string``: the text as written.
"""
from __future__ import annotations

import functools
import math
import re
import sys
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from mxexplorer.core.graph import fused, opinfo


class ParamError(ValueError):
    """An attribute MXNet's parser refuses: ``attr`` names it, the text says why."""

    def __init__(self, message: str, attr: str | None = None) -> None:
        super().__init__(message)
        self.attr = attr


_INT = re.compile(r"\s*[+-]?\d+\s*\Z")
#: the limits of C++ int and int64_t, past which istream fails
_INT32 = 2**31
_INT64 = 2**63


def parse_int(text: str, wide: bool = False) -> int:
    """``std::istringstream >> int`` with dmlc's check for trailing characters."""
    if not _INT.match(text):
        raise ValueError(text)
    value = int(text)
    limit = _INT64 if wide else _INT32
    if not -limit <= value < limit:
        raise ValueError(text)
    return value


def parse_float(text: str) -> float:
    """dmlc's ``stof``/``stod`` (its own ``ParseFloat``), which MXNet's parser uses:
    leading blanks, a sign, ``inf``/``infinity``/``nan`` in any case, digits, a point,
    digits, an exponent (its digits may be missing), an ``f``; nothing may follow, and
    something must have been read (a lone ``.``, ``e`` or ``-`` reads as 0)."""
    n = len(text)
    i = 0
    while i < n and text[i] in " \t\r\n\f":
        i += 1
    start = i
    negative = False
    if i < n and text[i] in "+-":
        negative = text[i] == "-"
        i += 1
    low = text[i:i + 8].lower()
    if low.startswith("infinity") or (low.startswith("inf") and not low.startswith("infin")):
        i += 8 if low.startswith("infinity") else 3
        if i != n:
            raise ValueError(text)
        return -math.inf if negative else math.inf
    if low.startswith("nan"):
        i += 3
        if i < n and text[i] == "(":
            close = text.find(")", i)
            if close < 0 or not re.fullmatch(r"\w*", text[i + 1:close]):
                raise ValueError(text)
            i = close + 1
        if i != n:
            raise ValueError(text)
        return math.nan
    digits_start = i
    while i < n and text[i].isdigit() and text[i].isascii():
        i += 1
    mantissa = text[digits_start:i]
    fraction = ""
    if i < n and text[i] == ".":
        i += 1
        frac_start = i
        while i < n and text[i].isdigit() and text[i].isascii():
            i += 1
        fraction = text[frac_start:i]
    exponent = ""
    if i < n and text[i] in "eE":
        i += 1
        exp_start = i
        if i < n and text[i] in "+-":
            i += 1
        while i < n and text[i].isdigit() and text[i].isascii():
            i += 1
        exponent = text[exp_start:i]
    if i < n and text[i] in "fF":
        i += 1
    if i == start or i != n:
        raise ValueError(text)
    value = float(f"{mantissa or 0}.{fraction or 0}")
    digits = exponent.lstrip("+-")
    if digits:
        power = min(int(digits), 308)
        value = value / 10**power if exponent.startswith("-") else value * 10.0**power
    return -value if negative else value


#: a boolean as dmlc's parser reads it (``true``/``false`` in any case, 1, 0)
parse_bool = fused.read_bool


def _stream_float(single: bool) -> Callable[[str], float]:
    """An item of ``Tuple<float>`` (``single``) or ``Tuple<double>`` as ``istream >>``
    reads it: a finite number within the type's range (digits only: no inf or nan)."""
    most = 3.4028234663852886e38 if single else sys.float_info.max

    def item(text: str) -> float:
        value = float(text)
        if not abs(value) <= most:
            raise ValueError(text)
        return value
    return item


def parse_tuple(text: str, item: Callable[[str], Any] = int,
                integral: bool = True, none_items: bool = False) -> tuple[Any, ...] | None:
    """``mxnet::Tuple``'s ``operator>>``: ``(a, b)``, ``[a,b]``, ``(a,)``, ``()``, a lone
    ``a`` (one element), ``None`` (unknown: returns None), ``3L`` for integers;
    nothing but spaces after the closing bracket."""
    n = len(text)
    i = 0
    number = re.compile(r"[+-]?\d+" if integral else
                        r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")

    def rest_blank(k: int) -> None:
        if text[k:].strip():
            raise ValueError(text)

    while True:
        if i >= n:
            raise ValueError(text)
        ch = text[i]
        if ch.isdigit() or ch == "-":
            m = number.match(text, i)
            if m is None:
                raise ValueError(text)
            rest_blank(m.end())
            return (item(m.group()),)
        i += 1
        if ch in "([":
            break
        if not ch.isspace():
            if ch == "N" and text[i:i + 3] == "one":
                rest_blank(i + 3)
                return None
            raise ValueError(text)
    while i < n and text[i].isspace():
        i += 1
    if i < n and text[i] in ")]":
        rest_blank(i + 1)
        return ()
    values: list[Any] = []
    while True:
        while i < n and text[i].isspace():   # istream >> skips leading blanks
            i += 1
        if none_items and text.startswith("None", i):
            values.append(None)              # Tuple<optional<int>> (slice's begin ...)
            i += 4
        else:
            m = number.match(text, i)
            if m is None:
                raise ValueError(text)
            values.append(item(m.group()))
            i = m.end()
        while i < n and text[i].isspace():
            i += 1
        if integral and i < n and text[i] == "L":
            i += 1
        if i >= n:
            raise ValueError(text)
        ch = text[i]
        i += 1
        if ch == ",":
            while i < n and text[i].isspace():
                i += 1
            if i < n and text[i] in ")]":
                rest_blank(i + 1)
                return tuple(values)
            continue
        if ch in ")]":
            rest_blank(i)
            return tuple(values)
        raise ValueError(text)


@dataclass(frozen=True)
class Field:
    """One declared parameter of an op."""

    name: str
    kind: str                       # what MXNet calls the type ("Shape(tuple)" ...)
    parse: Callable[[str], Any]
    required: bool
    default: Any
    choices: tuple[str, ...] = ()   # enum names ("None" when optional)
    least: float | None = None      # the parser's bounds on a number (MXNet checks them)
    most: float | None = None

    def example(self) -> str:
        if self.choices:
            return ", ".join(c for c in self.choices)
        return _EXAMPLES.get(self.kind.split(" or ")[0], self.kind)


_EXAMPLES = {
    "Shape(tuple)": "a tuple of whole numbers such as (3, 3)",
    "boolean": "True or False",
    "int": "a whole number", "long": "a whole number",
    "int (non-negative)": "a whole number, 0 or more",
    "long (non-negative)": "a whole number, 0 or more",
    "float": "a number such as 0.5", "double": "a number such as 0.5", "real_t": "a number",
}


def _kind_parser(kind: str) -> tuple[Callable[[str], Any], tuple[str, ...]]:
    """The parser for one of MXNet's type texts and, for an enum, its names."""
    kind = kind.strip()
    if kind.startswith("{"):
        names = tuple(n.strip().strip("'") for n in kind.strip("{}").split(","))

        def enum(text: str) -> Any:
            if text == "None" and "None" in names:
                return None
            if text in names and text != "None":
                return text
            raise ValueError(text)
        return enum, names
    optional = kind.endswith(" or None")
    base = kind[:-len(" or None")] if optional else kind
    parser: Callable[[str], Any]
    if base == "boolean":
        parser = parse_bool
    elif base in ("int", "long", "int (non-negative)", "long (non-negative)"):
        wide = base.startswith("long")
        non_negative = base.endswith("(non-negative)")

        def parser(text: str, wide: bool = wide, non_negative: bool = non_negative) -> int:
            value = parse_int(text, wide)
            if non_negative and value < 0:
                raise ValueError(text)
            return value
    elif base in ("float", "double", "real_t"):
        parser = parse_float
    elif base in ("Shape(tuple)", "Shape", "tuple of <int>", "tuple of <long>"):
        parser = parse_tuple
    elif base in ("tuple of <float>", "tuple of <double>"):
        parser = functools.partial(parse_tuple, item=_stream_float(base == "tuple of <float>"),
                                   integral=False)
    else:                           # string, and the rare kinds no rule reads
        parser = str
    if not optional:
        return parser, ()

    def maybe(text: str, parser: Callable[[str], Any] = parser) -> Any:
        return None if text == "None" else parser(text)
    return maybe, ()


def _field(name: str, type_text: str, bounds: dict[str, Any] | None = None) -> Field:
    # "Shape(tuple), optional, default=[]" / "{None, 'a'},optional, default='None'"
    if type_text.startswith("{"):
        close = type_text.index("}")
        kind, rest = type_text[:close + 1], type_text[close + 1:]
    else:
        kind, _, rest = type_text.partition(",")
    parser, choices = _kind_parser(kind)
    if bounds and bounds.get("none_items"):
        parser = functools.partial(parse_tuple, none_items=True)
    rest = rest.strip().lstrip(",").strip()
    required = rest.startswith("required")
    default: Any = None
    if not required and "default=" in rest:
        raw = rest.split("default=", 1)[1].strip()
        if len(raw) >= 2 and raw[0] == raw[-1] == "'":
            raw = raw[1:-1]
        try:
            default = None if raw == "None" and not kind.strip() else parser(raw)
        except (ValueError, TypeError):
            default = raw if kind.strip() == "string" else None
    bounds = bounds or {}
    return Field(name, kind.strip(), parser, required, default, choices, bounds.get("min"),
                 bounds.get("max"))


@dataclass(frozen=True)
class OpParams:
    """The declared parameters of one op, by name, and whether it refuses others."""

    op: str
    fields: dict[str, Field]
    strict: bool


@functools.lru_cache(maxsize=None)
def declared(op: str) -> OpParams | None:
    """The parameters MXNet declares for ``op`` (any alias), or None for an op the table
    does not know (a plug-in or a fork's op)."""
    raw = opinfo.raw_entry(op)
    if raw is None:
        return None
    fields = {entry[0]: _field(entry[0], entry[1], entry[2] if len(entry) > 2 else None)
              for entry in raw.get("params", [])}
    return OpParams(raw.get("canonical", op), fields, bool(raw.get("strict", False)))


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def is_hidden(key: str) -> bool:
    """``__shape__``, ``__lr_mult__`` ...: attributes MXNet keeps for itself (and the
    plain ``lr_mult``, ``mirror_stage`` ... its symbol API turns into those)."""
    return (len(key) > 4 and key.startswith("__") and key.endswith("__")) or \
        key in opinfo.HIDDEN_KEYS


def parse(op: str, attrs: Mapping[str, str], extra: Mapping[str, Field] | None = None
          ) -> dict[str, Any]:
    """Typed parameters of one node: every declared field, from ``attrs`` or its default
    (a required field that is absent is missing from the result only when ``extra``
    declares it optional).

    Raises
    ------
    ParamError : a value MXNet's parser refuses, a required field that is absent, or an
        attribute the op does not declare (for ops that refuse those, as MXNet does).
    """
    spec = declared(op)
    fields = dict(spec.fields) if spec is not None else {}
    if extra:
        fields.update(extra)
    out: dict[str, Any] = {}
    for name, field in fields.items():
        text = attrs.get(name)
        if text is None:
            if field.required:
                raise ParamError(f"attribute {name} is required ({field.example()})", name)
            out[name] = field.default
            continue
        try:
            value = field.parse(str(text))
        except (ValueError, TypeError):
            raise ParamError(f"attribute {name}={text!r} is not {field.example()}",
                             name) from None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if field.least is not None and value < field.least:
                raise ParamError(f"attribute {name}={text!r} is below its least value "
                                 f"{_number(field.least)}", name)
            if field.most is not None and value > field.most:
                raise ParamError(f"attribute {name}={text!r} is above its largest value "
                                 f"{_number(field.most)}", name)
        out[name] = value
    if spec is not None and spec.strict:
        for key in attrs:
            if key not in fields and not is_hidden(key):
                known = ", ".join(fields) or "none"
                raise ParamError(f"{spec.op} has no attribute {key!r} (its attributes: "
                                 f"{known})", key)
    return out
