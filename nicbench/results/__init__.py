"""What a run leaves behind, and reading it back.

``nicbench.results.frame(source, ...)`` is every stored trial of results directories or a
results store as one pandas DataFrame (:func:`nicbench.results.dataframe.frame`); pandas
is imported only when a frame is made, so importing this package costs nothing of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


def frame(source: Any, **kwargs: Any) -> pd.DataFrame:
    """Every stored trial of ``source`` (results directories or a results store) as one
    typed DataFrame: :func:`nicbench.results.dataframe.frame`, whose keywords it takes."""
    from nicbench.results.dataframe import frame as trial_frame

    return trial_frame(source, **kwargs)
