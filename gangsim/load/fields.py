"""Typed, located access to raw document fields, and the apimachinery name/label rules.

``Obj`` wraps one raw mapping with its field path (``spec.containers[0]``) and the best known
line. Every accessor checks a type or a rule and raises ``InputError(FieldError, line=…)`` naming
the field; the caller adds file and object (``InputError.located``). Each check is one call, so a
later ``validate`` can run the decoders document by document and collect one problem per object.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Iterator, Mapping

import orjson

from gangsim.api.quantity import MAX_INT64
from gangsim.errors import FieldError, InputError, cut, invalid, required, unsupported

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
_LABEL_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_QUALIFIED_NAME_RE = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE_RE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")

SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
    "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
_QUALIFIED_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
    "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


class Shown:
    """A structured value rendered as compact JSON in a message (``{"all":{}}``)."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value

    def __str__(self) -> str:
        return cut(orjson.dumps(self.value, default=str).decode())


def shown(value: object) -> object:
    return Shown(value) if isinstance(value, (dict, list, tuple)) else value


def known_names(name: str, known: Collection[str], label: str = "known") -> str:
    """``did you mean "x"?`` when ``name`` is a near miss (a typo) of one of ``known`` (difflib's ratio
    ≥ 0.8: "NodeResourceFit" → "NodeResourcesFit", but not "Coscheduling" → "GangScheduling"), else
    ``<label>: a, b, c`` (in the given order): the tail of an "unknown name" message."""
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.8)
    return f'did you mean "{close[0]}"?' if close else f"{label}: {', '.join(known)}"


def not_supported(field: str, value: object, supported: Collection[str]) -> FieldError:
    """apimachinery ``field.NotSupported``: ``Unsupported value: "x": supported values: "a", "b"``."""
    listed = ", ".join(f'"{s}"' for s in supported)
    return FieldError(field, f"supported values: {listed}", "Unsupported value", shown(value), True)


def duplicate(field: str, value: object, detail: str = "must be unique") -> FieldError:
    return FieldError(field, detail, "Duplicate value", shown(value), True)


def too_many(field: str, actual: int, maximum: int) -> FieldError:
    return FieldError(field, f"must have at most {maximum} {'item' if maximum == 1 else 'items'}", "Too many", actual, True)


def immutable(field: str, value: object) -> FieldError:
    return invalid(field, shown(value), "field is immutable")


def fail(error: FieldError | str, line: int | None) -> InputError:
    return InputError(error, line=line)


def line_of(container: object, key: str | int, default: int | None) -> int | None:
    lines = getattr(container, "lines", None)
    if lines:
        try:
            found = lines[key] if isinstance(key, int) else lines.get(key)
        except IndexError:
            found = None
        if found:
            return found
    return getattr(container, "line", None) or default


def dig(raw: object, path: str) -> object:
    """The value at a dotted field ``path`` (``spec.template.spec``) of raw data; None when a step is missing or no mapping."""
    node: object = raw
    for part in path.split("."):
        if not isinstance(node, Mapping):
            return None
        node = node.get(part)
    return node


class Obj:
    """A raw mapping at a field path, with typed accessors that raise located field errors."""

    __slots__ = ("d", "path", "line")

    def __init__(self, d: Mapping, path: str = "", line: int | None = None) -> None:
        self.d = d
        self.path = path
        self.line = getattr(d, "line", None) or line

    def fp(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def ln(self, key: str) -> int | None:
        return line_of(self.d, key, self.line)

    def error(self, key: str, error: FieldError) -> InputError:
        return fail(error, self.ln(key))

    def __contains__(self, key: str) -> bool:
        return self.d.get(key) is not None

    def raw(self, key: str, default: object = None) -> object:
        value = self.d.get(key)
        return default if value is None else value

    def check_keys(self, known: Collection[str], unmodelled: Mapping[str, str] | None = None) -> None:
        """Unknown keys are errors (typo protection); ``unmodelled`` keys are errors when set."""
        for key, value in self.d.items():
            if key in known:
                continue
            if unmodelled is not None and key in unmodelled:
                if _is_set(value):
                    raise self.error(key, unsupported(self.fp(key), unmodelled[key]))
                continue
            hint = difflib.get_close_matches(key, list(known), n=1, cutoff=0.75)
            detail = f'unknown field "{cut(key)}"' + (f'; did you mean "{hint[0]}"?' if hint else "")
            raise self.error(key, unsupported(self.fp(key), detail))

    def str(self, key: str, default: str = "", *, req: bool = False) -> str:
        value = self.d.get(key)
        if value is None or value == "":
            if req:
                raise self.error(key, required(self.fp(key)))
            return default
        if not isinstance(value, str):
            raise self.error(key, invalid(self.fp(key), shown(value), "must be a string"))
        return value

    def int(self, key: str, default: int | None = None, *, lo: int | None = None, hi: int | None = None) -> int | None:
        value = self.d.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):  # 3.0 too, as ``limits.check_count``
            raise self.error(key, invalid(self.fp(key), shown(value), "must be an integer"))
        lo = -MAX_INT64 - 1 if lo is None else lo  # every integer field fits int64 (issue 17)
        hi = MAX_INT64 if hi is None else hi
        if value < lo:
            raise self.error(key, invalid(self.fp(key), value, f"must be greater than or equal to {lo}"))
        if value > hi:
            raise self.error(key, invalid(self.fp(key), value, f"must be less than or equal to {hi}"))
        return value

    def bool(self, key: str, default: bool = False) -> bool:
        value = self.d.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.error(key, invalid(self.fp(key), shown(value), "must be a boolean"))
        return value

    def enum(self, key: str, allowed: Collection[str], default: str = "") -> str:
        value = self.str(key)
        if not value:
            return default
        if value not in allowed:
            raise self.error(key, not_supported(self.fp(key), value, allowed))
        return value

    def obj(self, key: str, *, req: bool = False) -> Obj | None:
        value = self.d.get(key)
        if value is None:
            if req:
                raise self.error(key, required(self.fp(key)))
            return None
        if not isinstance(value, dict):
            raise self.error(key, invalid(self.fp(key), shown(value), "must be an object"))
        return Obj(value, self.fp(key), self.ln(key))

    def items(self, key: str) -> Iterator[tuple[object, str, int | None]]:
        """Items of a list field: (value, path, line)."""
        value = self.d.get(key)
        if value is None:
            return
        if not isinstance(value, list):
            raise self.error(key, invalid(self.fp(key), shown(value), "must be a list"))
        base = self.fp(key)
        line = self.ln(key)
        for i, item in enumerate(value):
            yield item, f"{base}[{i}]", line_of(value, i, line)

    def objs(self, key: str) -> Iterator[Obj]:
        for item, path, line in self.items(key):
            if not isinstance(item, dict):
                raise fail(invalid(path, shown(item), "must be an object"), line)
            yield Obj(item, path, line)

    def length(self, key: str) -> int:
        value = self.d.get(key)
        return len(value) if isinstance(value, list) else 0

    def strings(self, key: str) -> tuple[str, ...]:
        out = []
        for item, path, line in self.items(key):
            if not isinstance(item, str):
                raise fail(invalid(path, shown(item), "must be a string"), line)
            out.append(item)
        return tuple(out)

    def mapping(self, key: str) -> dict[str, object]:
        value = self.d.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.error(key, invalid(self.fp(key), shown(value), "must be an object"))
        return value

    def labels(self, key: str) -> dict[str, str]:
        """A label map (``metadata.labels``, ``nodeSelector``): qualified keys, string values."""
        value = self.mapping(key)
        sub = Obj(value, self.fp(key), self.ln(key))
        out: dict[str, str] = {}
        for k, v in value.items():
            path = f"{sub.path}[{k}]"
            for msg in qualified_name_errors(k):
                raise sub.error(k, invalid(path, k, msg))
            if not isinstance(v, str):
                raise sub.error(k, invalid(path, shown(v), "label values must be strings (quote it in YAML)"))
            if len(v) > DNS1123_LABEL_MAX:
                raise sub.error(k, invalid(path, v, f"must be no more than {DNS1123_LABEL_MAX} characters"))
            if not _LABEL_VALUE_RE.match(v):
                raise sub.error(k, invalid(path, v, _LABEL_VALUE_MSG))
            out[k] = v
        return out


def _is_set(value: object) -> bool:
    """Whether an optional field carries something (``false``, ``""``, ``[]`` and ``{}`` do not)."""
    if isinstance(value, (list, dict, str)):
        return bool(value)
    return value is not None and value is not False


def subdomain_errors(value: str, max_len: int = DNS1123_SUBDOMAIN_MAX) -> list[str]:
    errs = []
    if len(value) > max_len:
        errs.append(f"must be no more than {max_len} characters")
    if not _SUBDOMAIN_RE.match(value):
        errs.append(SUBDOMAIN_MSG)
    return errs


def label_errors(value: str) -> list[str]:
    errs = []
    if len(value) > DNS1123_LABEL_MAX:
        errs.append(f"must be no more than {DNS1123_LABEL_MAX} characters")
    if not _LABEL_RE.match(value):
        errs.append(LABEL_MSG)
    return errs


def qualified_name_errors(value: str) -> list[str]:
    """``IsQualifiedName``: an optional DNS subdomain prefix, '/', and a name of ≤63 characters."""
    if not isinstance(value, str) or not value:
        return ["name part must be non-empty"]
    prefix, slash, name = value.rpartition("/")
    errs = []
    if slash:
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend(f"prefix part {e}" for e in subdomain_errors(prefix))
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > DNS1123_LABEL_MAX:
        errs.append(f"name part must be no more than {DNS1123_LABEL_MAX} characters")
    elif not _QUALIFIED_NAME_RE.match(name):
        errs.append(_QUALIFIED_MSG)
    return errs


def check_name(o: Obj, key: str, rule: str, *, req: bool = True, max_len: int | None = None) -> str:
    """A name field that must be a DNS subdomain (``rule="subdomain"``) or label (``"label"``)."""
    value = o.str(key, req=req)
    if not value:
        return value
    errs = label_errors(value) if rule == "label" else subdomain_errors(value, max_len or DNS1123_SUBDOMAIN_MAX)
    if rule != "label" and max_len and len(value) > max_len and not errs:
        errs = [f"must be no more than {max_len} characters"]
    if errs:
        raise o.error(key, invalid(o.fp(key), value, errs[0]))
    return value


def check_qualified(o: Obj, key: str, *, req: bool = True) -> str:
    value = o.str(key, req=req)
    if value:
        for msg in qualified_name_errors(value):
            raise o.error(key, invalid(o.fp(key), value, msg))
    return value
