"""How many trials a test is planned as at one point of one pair: ``Profile.planned_trials``,
the one count that progress, ETAs, ``--plan``, ``status`` and a campaign's plan use."""

from __future__ import annotations

from nicbench.config.profile import Profile


def profile(*tests: dict, repetitions: int = 5) -> Profile:
    return Profile.model_validate({"name": "p", "source": "s", "mtu": [1500, 9000],
                                   "repetitions": repetitions, "tests": list(tests)})


def search(method: str, per_rate: int = 1) -> dict:
    # the reviews' grid: 200 to 800 Mbit/s in steps of 10, 61 rates
    return {"name": f"udp-{method}", "tool": "iperf2", "protocol": "udp",
            "udp_search": {"method": method, "trials_per_rate": per_rate}}


def test_a_test_is_its_repetitions_its_own_or_the_profiles():
    p = profile({"name": "own", "tool": "iperf3", "repetitions": 3},
                {"name": "inherited", "tool": "iperf3"}, repetitions=7)
    assert [p.planned_trials(t) for t in p.tests] == [3, 7]
    assert p.trials_per_pair == 20


def test_a_sweep_is_every_rate_times_trials_per_rate():
    p = profile(search("sweep"), search("sweep", per_rate=3))
    assert [p.planned_trials(t) for t in p.tests] == [61, 183]


def test_a_bisection_is_its_halvings_plus_the_top_offer_and_the_guess():
    # 61 rates: 60 gaps halve to one in 6 probes, plus stop_bps and the first guess
    p = profile(search("bisect"), search("bisect", per_rate=2))
    assert [p.planned_trials(t) for t in p.tests] == [8, 16]


def test_a_search_ignores_repetitions():
    p = profile(search("sweep") | {"repetitions": 4})
    assert p.planned_trials(p.tests[0]) == 61
