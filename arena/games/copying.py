"""How an engine copies its state: a clone function generated from the state's fields, declared
in groups by how a copy treats them (shared as they are, copied one level, or a list of lists
copied two levels), as dataclasses generate their __init__. The generated function is one plain
assignment per field: a loop over the fields (setattr) made a Boom clone three times as slow,
and bots clone before every playout they simulate."""

from __future__ import annotations

from typing import Any, Callable, Sequence


def clone_function(
    cls: type, shared: Sequence[str], copied: Sequence[str], nested: Sequence[str] = ()
) -> Callable[[Any], Any]:
    """A function that clones an instance of `cls` (a class with __slots__, which must be
    exactly these fields): `shared` fields are assigned as they are (immutable values, or values
    replaced rather than changed), `copied` ones by .copy() (lists and dicts of values that are
    not changed in place), `nested` ones are lists of lists, each inner list copied."""
    fields = [*shared, *copied, *nested]
    slots = sorted(vars(cls).get("__slots__", ()))
    if sorted(fields) != slots or len(set(fields)) != len(fields):
        raise TypeError(
            f"{cls.__name__}'s fields {slots} must each be in one "
            f"group of its clone, not {sorted(fields)}"
        )
    lines = ["def clone(self):", "    new = new_object(cls)"]
    lines += [f"    new.{name} = self.{name}" for name in shared]
    lines += [f"    new.{name} = self.{name}.copy()" for name in copied]
    lines += [f"    new.{name} = [inner[:] for inner in self.{name}]" for name in nested]
    lines.append("    return new")
    namespace: dict[str, Any] = {"new_object": object.__new__, "cls": cls}
    exec("\n".join(lines), namespace)
    clone = namespace["clone"]
    clone.__qualname__ = f"{cls.__name__}.clone"
    return clone
