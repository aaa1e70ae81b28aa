"""The inventory of the engine's unit tests on fake hosts: one pair ``p`` of a card
``card`` between hosts ``ha`` and ``hb`` (interface ``t0``, 198.18.0.1 and .2)."""

from __future__ import annotations

from nicbench.config.inventory import Inventory

ONE_PAIR = Inventory.model_validate({
    "hosts": [{"name": n, "address": f"198.19.{i}.2", "ssh": {"known_hosts": "k"}}
              for i, n in ((1, "ha"), (2, "hb"))],
    "adapters": [{"id": "card", "vendor": "v", "model": "Card", "driver": {"name": "d"}}],
    "pairs": [{"name": "p", "adapter": "card",
               "a": {"host": "ha", "interface": "t0", "address": "198.18.0.1"},
               "b": {"host": "hb", "interface": "t0", "address": "198.18.0.2"}}]})
