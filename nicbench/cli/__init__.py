"""The ``nicbench`` command: parse arguments, call the library, print results and errors.

Kept thin on purpose: every command is a function of a few lines over library calls.
Every failure the library raises on purpose (``NicbenchError``) becomes one line per
problem on stderr and the error's exit code; never a traceback (``--debug`` shows one).
"""

from __future__ import annotations

import sys

try:
    import argparse
    import signal

    from nicbench import __version__
    from nicbench.cli import console, paths
    from nicbench.display import visible
    from nicbench.errors import NicbenchError
except KeyboardInterrupt:       # Ctrl-C while the command loads: one line, no traceback
    sys.stderr.write("nicbench: interrupted; host settings were restored\n")
    raise SystemExit(130) from None


def build_parser() -> argparse.ArgumentParser:
    from nicbench.cli import (campaign, check, figures, history, lab, parse, report, run,
                              store, validate, windows)

    p = argparse.ArgumentParser(
        prog="nicbench",
        description="Benchmark network adapters between host pairs the way the 2002-2003 "
                    "roundups did: tune, run the tools many times, keep every sample, chart.")
    p.add_argument("--version", action="version", version=f"nicbench {__version__}")
    p.add_argument("--debug", action="store_true", help="show tracebacks of unexpected errors")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for module in (lab, check, validate, report, figures, history, run, campaign, parse,
                   windows, store):
        module.register(sub)
    return p


def _term_as_interrupt(*_):
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    # SIGTERM (kill, CI timeouts) unwinds like Ctrl-C, so every finally restores hosts;
    # set first, so that a signal while the modules load is one line too.
    signal.signal(signal.SIGTERM, _term_as_interrupt)
    debug = False
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        debug = args.debug
        if not getattr(args, "func", None):
            if args.command in ("lab", "windows", "store"):
                parser.parse_args([args.command, "--help"])
            parser.print_help()
            return 2
        paths.check_args(args)      # a path the OS cannot take: one line, exit 2
        return args.func(args)
    except NicbenchError as exc:
        for line in exc.lines():
            console.error(line)
        return exc.exit_code
    except KeyboardInterrupt:
        print("nicbench: interrupted; host settings were restored", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug: say so in one line unless --debug
        if debug:
            raise
        print(f"nicbench: internal error: {type(exc).__name__}: {visible(str(exc))} "
              "(run with --debug for a traceback and report it)", file=sys.stderr)
        return 70


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
