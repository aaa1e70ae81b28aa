"""Greppable registries of the tools nicbench drives: name -> parameters, driver, parser."""

from __future__ import annotations

from typing import Iterator

from pydantic import ValidationError

from nicbench.tools.params import PARAMS, resolve


def validate_params(test, profile) -> Iterator[tuple[tuple, str]]:
    """Check a test's params against its tool's schema at every point of the profile.

    Yields (sub key path, message) for the profile loader to place on a line."""
    model = PARAMS[test.tool]
    for point in profile.points:
        try:
            model.model_validate(resolve(test.params, point.vars))
        except KeyError:
            return  # undefined $var: reported by the profile's own check
        except ValidationError as exc:
            seen = set()
            for err in exc.errors():
                key = err["loc"][0] if err["loc"] else None
                if key in seen:
                    continue  # a union (Size | VarRef) fails once per member: keep the first
                seen.add(key)
                path = ("params", key) if key is not None else ("params",)
                if err["type"] == "extra_forbidden":
                    msg = (f"{test.tool} has no parameter '{key}' "
                           f"(parameters: {', '.join(model.model_fields)})")
                else:
                    msg = err["msg"].removeprefix("Value error, ")
                    msg = f"{msg} at {point.name}" if len(profile.points) > 1 else msg
                yield path, msg
            return
