"""`@frozen` (metrics.results.frozen_view): the views' value classes behave as
`@dataclass(frozen=True, slots=True)` would, each behaviour checked against a real dataclass twin, and no
class gets code of its own (what makes them cheap to define)."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pytest

import metrics.results as results
from metrics.results import STAT_KEYS, PointRow, Stats, SummaryView, frozen, replace
from metrics.results.frozen_view import field_names


@frozen
class Point:
    """A made-up view."""

    x: int
    y: int | None = None
    tags: list[str] = field(default_factory=list)
    unit: ClassVar[str] = "px"  # not a field

    @property
    def total(self) -> int:
        return self.x + (self.y or 0)

    @classmethod
    def origin(cls) -> Point:
        return cls(0, 0)

    @staticmethod
    def axis() -> str:
        return "xy"


@dataclass(frozen=True, slots=True)
class PointTwin:
    x: int
    y: int | None = None
    tags: list[str] = field(default_factory=list)


@frozen
class Pair:
    a: object
    b: object


@frozen
class Three:
    a: int
    b: int
    c: int


@dataclass(frozen=True, slots=True)
class ThreeTwin:
    a: int
    b: int
    c: int


def _message(call: Any, *args: Any, **kwargs: Any) -> str:
    with pytest.raises(TypeError) as caught:
        call(*args, **kwargs)
    return str(caught.value)


def test_arguments_by_position_by_keyword_and_by_default() -> None:
    p = Point(1, y=2, tags=["a"])
    assert (p.x, p.y, p.tags) == (1, 2, ["a"])
    assert (Point(3).x, Point(3).y, Point(3).tags) == (3, None, [])
    assert Point(y=5, x=4).total == 9


def test_a_default_factory_makes_a_fresh_value_per_instance() -> None:
    first, second = Point(1), Point(1)
    assert first.tags == [] and first.tags is not second.tags


def test_a_default_factory_runs_only_for_a_field_the_call_does_not_give() -> None:
    made: list[int] = []

    def fresh() -> list[int]:
        made.append(1)
        return []

    @frozen
    class Counted:
        a: int
        b: list[int] = field(default_factory=fresh)

    assert Counted(1, [2]).b == [2] and Counted(a=1, b=[3]).b == [3] and made == []
    assert Counted(1).b == [] and made == [1]


@pytest.mark.parametrize(("args", "kwargs"), [
    ((), {}),  # one missing
    ((1,), {"x": 2}),  # the same argument twice
    ((1,), {"z": 2}),  # not a field
    ((1, 2, [], 4), {}),  # too many
])
def test_a_wrong_call_says_what_a_dataclass_would(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    ours = _message(Point, *args, **kwargs)
    assert ours == _message(PointTwin, *args, **kwargs).replace("PointTwin", "Point")
    assert ours.startswith("Point.__init__() ")


@pytest.mark.parametrize("given", [(), (1,), (1, 2, 3, 4)])
def test_missing_and_surplus_arguments_are_counted_and_listed(given: tuple[int, ...]) -> None:
    ours = _message(Three, *given)
    assert ours == _message(ThreeTwin, *given).replace("ThreeTwin", "Three")


def test_equal_fields_of_the_same_class_are_equal() -> None:
    assert Point(1, 2) == Point(1, 2)
    assert Point(1, 2) != Point(1, 3)
    assert Point(1, 2, ["a"]) != Point(1, 2, ["b"])
    assert Pair(1, 2) != Point(1, 2)  # another class
    assert Point(1, 2) != PointTwin(1, 2)  # the dataclass with the same fields
    assert Point(1).__eq__(PointTwin(1)) is NotImplemented


def test_the_hash_is_the_hash_of_the_fields_and_an_unhashable_field_refuses_it() -> None:
    assert hash(Pair(1, "a")) == hash((1, "a"))
    assert hash(Pair(1, "a")) != hash(Pair(2, "a"))
    assert len({Pair(1, "a"), Pair(1, "a"), Pair(2, "a")}) == 2
    with pytest.raises(TypeError):
        hash(Point(1))  # its tags is a list


def test_a_class_that_writes_eq_is_still_hashed_by_its_fields_as_the_dataclass_is() -> None:
    """Python sets __hash__ to None in a class body that defines __eq__; a frozen dataclass hashes such a class
    by its fields all the same, and one that writes its own __hash__ keeps it."""

    def same_x(self: Any, other: object) -> bool:
        return bool(getattr(other, "x", None) == self.x)

    @frozen
    class ByX:
        x: int
        y: int = 0
        __eq__ = same_x  # a class body's own __eq__ (assigned, so that no `def` needs an override marker)
        __hash__ = None  # type: ignore[assignment]  # what Python writes beside a `def __eq__`

    @dataclass(frozen=True)
    class ByXTwin:
        x: int
        y: int = 0
        __eq__ = same_x
        __hash__ = None  # type: ignore[assignment]

    assert hash(ByX(1, 2)) == hash((1, 2)) and hash(ByXTwin(1, 2)) == hash((1, 2))
    assert ByX(1, 2) == ByX(1, 3)  # its own __eq__ is kept

    @frozen
    class OwnHash:
        x: int

        def __hash__(self) -> int:
            return 7

    assert hash(OwnHash(1)) == 7


def test_the_repr_is_the_dataclass_repr() -> None:
    p = Point(1, None, ["a'b"])
    assert repr(p) == "Point(x=1, y=None, tags=[\"a'b\"])"
    assert repr(p) == repr(PointTwin(1, None, ["a'b"])).replace("PointTwin", "Point")
    assert repr(Pair(Pair(1, "s"), None)) == "Pair(a=Pair(a=1, b='s'), b=None)"


def test_match_args_and_slots_name_the_fields_in_order() -> None:
    assert Point.__match_args__ == ("x", "y", "tags")
    assert Point.__slots__ == ("x", "y", "tags")
    assert field_names(Point) == ("x", "y", "tags")
    assert not hasattr(Point(1), "__dict__")
    match Point(7, 8):
        case Point(x, y):
            assert (x, y) == (7, 8)
        case _:
            pytest.fail("the class pattern did not match")


def test_assignment_and_deletion_raise_frozen_instance_error() -> None:
    p = Point(1)
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'x'"):
        p.x = 2  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'other'"):
        p.other = 2  # type: ignore[attr-defined]
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'y'"):
        del p.y  # type: ignore[misc]
    assert p.x == 1 and p.y is None


def test_class_methods_static_methods_properties_and_the_docstring_are_kept() -> None:
    assert Point.origin() == Point(0, 0) and type(Point.origin()) is Point
    assert Point.axis() == "xy" and Point(1).axis() == "xy"
    assert Point(2, 3).total == 5
    assert Point.__doc__ == "A made-up view." and Point.unit == "px"
    assert Point.__qualname__ == "Point" and Point.__module__ == __name__


def test_replace_changes_the_named_fields_only() -> None:
    p = Point(1, 2, ["a"])
    moved = replace(p, y=5)
    assert moved == Point(1, 5, ["a"]) and p == Point(1, 2, ["a"]) and moved.tags is p.tags
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'"):
        replace(p, z=1)  # type: ignore[call-arg]  # mypy sees the mistake too
    with pytest.raises(TypeError, match="not a @frozen class"):
        replace(PointTwin(1), y=2)


def test_instances_pickle_and_copy() -> None:
    p = Point(1, 2, ["a"])
    for clone in (pickle.loads(pickle.dumps(p)), copy.copy(p), copy.deepcopy(p)):
        assert clone == p and type(clone) is Point
    assert copy.deepcopy(p).tags is not p.tags


def test_no_class_gets_code_of_its_own() -> None:
    """What a dataclass compiles per class, @frozen shares: each method's code object is the module's."""
    for name in ("__init__", "__eq__", "__hash__", "__reduce__"):
        assert getattr(Point, name).__code__ is getattr(Three, name).__code__
    assert Point.__repr__ is Three.__repr__ and Point.__setattr__ is Three.__setattr__
    assert PointTwin.__init__.__code__ is not ThreeTwin.__init__.__code__  # what a dataclass does


def test_a_class_it_cannot_make_is_refused_when_defined() -> None:
    with pytest.raises(TypeError, match="without a default follows"):
        @frozen
        class Late:
            a: int = 0
            b: int  # type: ignore[misc]
    with pytest.raises(ValueError, match="mutable default list"):
        @frozen
        class Shared:
            a: list[int] = []  # noqa: RUF012
    with pytest.raises(TypeError, match="only field"):
        @frozen
        class Hidden:
            a: int = field(default=0, repr=False)
    with pytest.raises(TypeError, match="cannot derive"):
        @frozen
        class Child(Pair):
            c: int


def test_every_view_of_the_results_contract_is_frozen_and_none_is_a_dataclass() -> None:
    views = [v for v in (getattr(results, name) for name in results.__all__)
             if inspect.isclass(v) and "__annotations__" in v.__dict__ and not hasattr(v, "_fields")
             and not hasattr(v, "__total__")]  # not the named tuples of run_write, not TypedDicts
    assert len(views) >= 55
    assert [v.__qualname__ for v in views if dataclasses.is_dataclass(v)] == []
    assert [v.__qualname__ for v in views if not field_names(v)] == []
    assert field_names(Stats) == STAT_KEYS
    assert Stats.from_json({"count": 3, "p50": 1.5, "max": "x"}) == Stats(3, p50=1.5)
    row = PointRow(label="p", kind="rate", value=1.0, status="done", exit_code=0)
    assert replace(row, role="probe").role == "probe" and row.role == "point"
    assert SummaryView().requests == SummaryView().requests and SummaryView().latency == {}
