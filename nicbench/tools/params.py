"""The parameters each tool accepts in a profile's ``tests[].params``, validated strictly.

Profiles never carry free-form command-line text: every option a test can set is a typed
field here, and the tool driver turns it into argv words. A value ``"$name"`` refers to a
per-point variable (``points[].vars``) and is checked when the point is known.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, Field, field_validator

from nicbench.config.fields import VAR_REF_RE, Rate, Size, Strict


def _var_ref(value: str) -> str:
    if not VAR_REF_RE.match(value):
        raise ValueError(f"{value!r} is not a $name reference to a points[].vars variable")
    return value


# "$window": only a reference passes as a string; any other string must parse as the
# field's real type (a bare str here let "lots" through as a window size).
VarRef = Annotated[str, AfterValidator(_var_ref)]


class Iperf2Params(Strict):
    duration_s: float = Field(10, gt=0, le=3600)
    window: Size | VarRef | None = None       # -w, both ends
    length: Size | VarRef | None = None       # -l, both ends
    mss: int | VarRef | None = None           # -M, both ends (the reviews: 100000)
    print_mss: bool = True                    # -m on the server, as the reviews did
    streams: int = Field(1, ge=1, le=128)     # -P
    rate: Rate | VarRef | None = None         # -b for UDP (the search sets it per trial)
    port: int = Field(5001, ge=1024, le=65535)
    enhanced: bool = True                     # -e: richer reports (iperf >= 2.0.10)


class Iperf3Params(Strict):
    duration_s: float = Field(10, gt=0, le=3600)
    window: Size | VarRef | None = None
    length: Size | VarRef | None = None
    streams: int = Field(1, ge=1, le=128)
    rate: Rate | VarRef | None = None
    omit_s: float = Field(0, ge=0, le=60)
    port: int = Field(5201, ge=1024, le=65535)


class NetpipeParams(Strict):
    buffer: Size | VarRef | None = None       # -b (the reviews: 65535)
    upper: Size | None = None                 # -u, largest block
    lower: Size | None = None                 # -l, smallest block
    perturbation: int | None = Field(None, ge=0, le=1024)  # -p
    repeats: int | None = Field(None, ge=1, le=100000)    # -n: fixed repeats per size
    port: int = Field(5002, ge=1024, le=65535)


class NtttcpParams(Strict):
    threads: int = Field(1, ge=1, le=64)      # -m threads,cpu,ip
    cpu: int = Field(0, ge=-1, le=1024)
    async_count: int = Field(4, ge=1, le=64)  # -a
    length: Size | VarRef = 262144            # -l
    count: int | None = Field(None, ge=1)     # -n buffers (Windows DDK method)
    duration_s: float | None = Field(None, gt=0, le=3600)  # -t
    receive_buffer: Size | VarRef | None = None  # -rb
    port: int = Field(5001, ge=1024, le=65535)


class NetioParams(Strict):
    port: int = Field(18767, ge=1024, le=65535)
    # netio -b: one block size; unset, netio runs its own series 1k, 2k, ... 32k
    block: Size | None = None

    @field_validator("block")
    @classmethod
    def _whole_kib(cls, v):
        if v is not None and (v % 1024 or v == 0):
            raise ValueError(f"{v} bytes: netio -b takes whole kilobytes (1K ... 32K)")
        return v


PARAMS: dict[str, type[Strict]] = {
    "iperf2": Iperf2Params,
    "iperf3": Iperf3Params,
    "netpipe": NetpipeParams,
    "ntttcp": NtttcpParams,
    "netio": NetioParams,
}


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

