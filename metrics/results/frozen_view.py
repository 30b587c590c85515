"""`@frozen`: a frozen, slotted, typed value class, made without compiling code for each class.

The results contract declares ~60 views; `@dataclass(frozen=True, slots=True)` writes the source of
about seven methods per class and compiles it (`exec`), ~0.8 ms a class, and the end of every
`goodput run` and `goodput report` defines ~35 of them. `@frozen` gives the same class from generic methods instead: each
class gets closures over its field names (no new code object), ~a tenth of the cost.

What a class gets, as `@dataclass(frozen=True, slots=True)` would give it:
- `__init__(*args, **kwargs)`: the fields in order, positional or by keyword; a default, or
  `field(default_factory=...)` (a fresh value per instance); TypeError for a missing, unknown or
  duplicate argument, in Python's own words;
- `__eq__` (an instance of the same class with equal fields), `__hash__` (of the fields' tuple), `__repr__`
  (`Name(a=1, b=None)`), `__match_args__`, `__slots__`; setting or deleting an attribute raises
  `dataclasses.FrozenInstanceError`; instances pickle and copy (`__reduce__`).
- Class methods, static methods, properties and the docstring are kept as written.

What it refuses (TypeError when the class is made): a field option other than `default` and
`default_factory`, a field without a default after one with, a base class that is itself `@frozen`
(views do not inherit), a class that declares its own `__slots__`.

A view is not a dataclass: `dataclasses.fields`, `replace` and `asdict` do not apply. `replace` and
`field_names` below are this module's: `replace(view, role="probe")` is the view with those fields changed.
"""

from __future__ import annotations

import dataclasses
import reprlib
from collections.abc import Callable
from dataclasses import FrozenInstanceError, field
from operator import attrgetter
from typing import TYPE_CHECKING, Any, TypeVar, cast, dataclass_transform

T = TypeVar("T")

_FIELDS = "__frozen_fields__"  # the class attribute that names a view's fields, in order
_NO_DEFAULT = object()  # a required field
_SLOT_NAMES = ("__dict__", "__weakref__")


class _Factory:
    """A field's `default_factory`: called once per instance that is not given the field."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], object]) -> None:
        self.make = make


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def frozen(cls: type[T]) -> type[T]:
    """The class as a frozen, slotted value class (the module's docstring says what it gets)."""
    own = cls.__dict__
    if "__slots__" in own:
        raise TypeError(f"{cls.__qualname__}: @frozen makes __slots__ itself")
    if any(hasattr(base, _FIELDS) for base in cls.__mro__[1:]):
        raise TypeError(f"{cls.__qualname__}: a @frozen class cannot derive from another")
    names = tuple(name for name, hint in own.get("__annotations__", {}).items() if not _is_class_var(hint))
    defaults = tuple(_default(cls, name, own.get(name, _NO_DEFAULT)) for name in names)
    namespace = {key: value for key, value in own.items() if key not in names and key not in _SLOT_NAMES}
    values = _getter(names)
    init, bind = _init_for(f"{cls.__qualname__}.__init__", names, defaults)
    namespace.update(__slots__=names, __init__=init, __setattr__=_refuse_set,
                     __delattr__=_refuse_delete, __reduce__=_reduce_for(values), **{_FIELDS: names})
    namespace.setdefault("__repr__", _repr)
    namespace.setdefault("__eq__", _eq_for(values))
    # A frozen dataclass's rule: hashed by its fields unless the class wrote its own __hash__ (a __hash__ of
    # None beside the class's own __eq__ is Python's doing, not the class's).
    if "__hash__" not in own or (own["__hash__"] is None and "__eq__" in own):
        namespace["__hash__"] = _hash_for(values)
    namespace.setdefault("__match_args__", names)
    metaclass: type = type(cls)
    made = cast("type[T]", metaclass(cls.__name__, cls.__bases__, namespace))  # the class, slotted
    made.__qualname__ = cls.__qualname__
    bind(made)
    return made


def field_names(cls: type) -> tuple[str, ...]:
    """A @frozen class's field names, in order (TypeError for another class)."""
    names = getattr(cls, _FIELDS, None)
    if not isinstance(names, tuple):
        raise TypeError(f"{cls.__qualname__} is not a @frozen class")
    return names


if TYPE_CHECKING:  # mypy checks a call's field names and types as it does dataclasses.replace's
    from dataclasses import replace as replace
else:

    def replace(view, /, **changes):
        """`view` with the fields named in `changes` set to those values (TypeError for a name that is not
        one of its fields, or for an object that is not a @frozen view)."""
        cls = type(view)
        values = {name: getattr(view, name) for name in field_names(cls) if name not in changes}
        return cls(**values, **changes)


def _is_class_var(hint: object) -> bool:
    text = hint if isinstance(hint, str) else repr(hint)
    return text.startswith(("ClassVar", "typing.ClassVar"))


def _default(cls: type, name: str, value: object) -> object:
    """What the field's default is: _NO_DEFAULT, a value, or a _Factory."""
    if isinstance(value, dataclasses.Field):
        if not (value.init and value.repr and value.compare and value.hash is None
                and value.kw_only is dataclasses.MISSING):
            raise TypeError(f"{cls.__qualname__}.{name}: @frozen takes only field(default=...) or "
                            "field(default_factory=...)")
        if value.default_factory is not dataclasses.MISSING:
            return _Factory(value.default_factory)
        value = _NO_DEFAULT if value.default is dataclasses.MISSING else value.default
    if value is not _NO_DEFAULT and type(value).__hash__ is None:
        raise ValueError(f"{cls.__qualname__}.{name}: mutable default {type(value).__name__} is not allowed: "
                         "use field(default_factory=...)")
    return value


def _getter(names: tuple[str, ...]) -> Callable[[object], tuple[Any, ...]]:
    """The function that reads an instance's fields as a tuple (attrgetter answers a bare value for one)."""
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


def _init_for(qualname: str, names: tuple[str, ...], defaults: tuple[object, ...],
              ) -> tuple[Callable[..., None], Callable[[type], None]]:
    """The class's __init__, and the function that gives it the class's slots once the class is made."""
    count = len(names)
    required = sum(1 for d in defaults if d is _NO_DEFAULT)
    if defaults[:required].count(_NO_DEFAULT) != required:
        raise TypeError(f"{qualname.rsplit('.', 1)[0]}: a field without a default follows one with a default")
    setters: tuple[Callable[[object, object], None], ...] = ()
    index = {name: i for i, name in enumerate(names)}
    unset = tuple(i for i, d in enumerate(defaults) if d is _NO_DEFAULT or isinstance(d, _Factory))

    def __init__(self: object, *args: object, **kwargs: object) -> None:
        given = len(args)
        if given == count and not kwargs:  # the common call: every field, in order
            for put, value in zip(setters, args, strict=True):
                put(self, value)
            return
        if given > count:
            takes = f"{count + 1}" if required == count else f"from {required + 1} to {count + 1}"
            raise TypeError(f"{qualname}() takes {takes} positional argument{'s' * (count > 0)} "
                            f"but {given + 1} were given")
        values = [*args, *defaults[given:]]
        for name, value in kwargs.items():
            at = index.get(name, -1)
            if at < given:  # not a field (-1), or one given by position too
                problem = "multiple values for argument" if at >= 0 else "an unexpected keyword argument"
                raise TypeError(f"{qualname}() got {problem} {name!r}")
            values[at] = value
        missing: list[str] = []
        for at in unset:  # the fields whose default is not a value (required, or made per instance)
            value = values[at]  # still the marker when the call did not give the field
            if value is _NO_DEFAULT:
                missing.append(names[at])
            elif isinstance(value, _Factory):
                values[at] = value.make()
        if missing:
            raise TypeError(f"{qualname}() missing {len(missing)} required positional argument"
                            f"{'s' * (len(missing) > 1)}: {_listed(missing)}")
        for put, value in zip(setters, values, strict=True):
            put(self, value)

    def bind(cls: type) -> None:
        nonlocal setters
        setters = tuple(cls.__dict__[name].__set__ for name in names)

    __init__.__qualname__ = qualname
    return __init__, bind


def _listed(names: list[str]) -> str:
    """'a', 'a' and 'b', 'a', 'b', and 'c': as Python lists missing arguments."""
    quoted = [repr(name) for name in names]
    if len(quoted) < 3:
        return " and ".join(quoted)
    return ", ".join(quoted[:-1]) + ", and " + quoted[-1]


@reprlib.recursive_repr()
def _repr(self: object) -> str:
    cls = type(self)
    inside = ", ".join(f"{name}={getattr(self, name)!r}" for name in getattr(cls, _FIELDS))
    return f"{cls.__qualname__}({inside})"


def _eq_for(values: Callable[[object], tuple[Any, ...]]) -> Callable[[object, object], bool]:
    def __eq__(self: object, other: object) -> bool:
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented

    return __eq__


def _hash_for(values: Callable[[object], tuple[Any, ...]]) -> Callable[[object], int]:
    def __hash__(self: object) -> int:
        return hash(values(self))

    return __hash__


def _reduce_for(values: Callable[[object], tuple[Any, ...]],
                ) -> Callable[[object], tuple[type, tuple[Any, ...]]]:
    def __reduce__(self: object) -> tuple[type, tuple[Any, ...]]:
        return type(self), values(self)

    return __reduce__


def _refuse_set(self: object, name: str, value: object) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _refuse_delete(self: object, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")
