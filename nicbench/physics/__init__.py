"""The wire's arithmetic, below everything that measures, keeps history or reports.

``link``: a link's rate (from the inventory or an adapter's description), TCP and UDP
goodput over Ethernet at an MTU, the round trip's floor, and the margin by which a
figure may exceed its limit before it is flagged. ``ethernet``: RFC 2544 frame sizes,
line rates in frames per second, and the NDR/PDR bounds.

This room stands on ``config`` (the inventory's adapters, the profile's points) and
``errors`` only: ``tools``, ``results``, ``execution``, ``history`` and ``report`` all use
it, and it uses none of them (tests/unit/test_architecture.py).
"""
