"""nicbench: reproduce the 2002-2003 network-adapter roundup methods on real hosts."""

__version__ = "0.1.0"
