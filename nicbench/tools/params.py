"""What every tool's parameters share: ``"$name"`` references to per-point variables.

Profiles never carry free-form command-line text: every option a test can set is a typed
field of its tool's parameter model (``params`` in each tool module), and the tool's
driver turns it into argv words. A value ``"$name"`` refers to a per-point variable
(``points[].vars``) and is checked when the point is known.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator

from nicbench.config.fields import VAR_REF_RE


def _var_ref(value: str) -> str:
    if not VAR_REF_RE.match(value):
        raise ValueError(f"{value!r} is not a $name reference to a points[].vars variable")
    return value


# "$window": only a reference passes as a string; any other string must parse as the
# field's real type (a bare str here let "lots" through as a window size).
VarRef = Annotated[str, AfterValidator(_var_ref)]


def resolve(params: dict[str, Any], vars: dict[str, Any]) -> dict[str, Any]:
    """Replace ``"$name"`` values with the point's variables; a variable set to null
    leaves its parameter out (the tool's default) at that point."""
    out = {}
    for key, value in params.items():
        if isinstance(value, str) and value.startswith("$"):
            value = vars[value[1:]]
            if value is None:
                continue
        out[key] = value
    return out
