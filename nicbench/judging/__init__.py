"""Judging figures: the statistics (``stats``: Mann-Whitney, the Hodges-Lehmann shift and
its exact interval, Benjamini-Hochberg) and the comparison's rule and words (``words``),
below measurement, history and the report, which all decide by them."""
