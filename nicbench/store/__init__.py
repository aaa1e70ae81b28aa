"""The results store of issue 21: every night's runs in one database.

- :func:`resolve` (``--store`` / ``NICBENCH_STORE`` / ``reports/nicbench.duckdb``) ->
  :class:`StoreLocation`; :func:`open_store` -> :class:`Store`;
- :class:`StoreSink`: the store written as a run goes (``Runner(sinks=[...])``);
- :func:`import_dirs`: results directories into a store (``nicbench store import``);
- :meth:`Store.trial_frame`, :meth:`Store.manifests`, :meth:`Store.runs`: what readers
  (``nicbench.results.dataframe``, ``nicbench history``) take.
"""

from nicbench.store.backend import StoreBusy
from nicbench.store.dataframes import TRIAL_FRAME
from nicbench.store.importer import ImportCounts, import_dirs, run_row
from nicbench.store.location import (DEFAULT_STORE, ENV_VAR, StoreKind, StoreLocation,
                                     resolve)
from nicbench.store.schema import SCHEMA_VERSION, RunRow
from nicbench.store.sink import StoreSink
from nicbench.store.store import Store, StoreInfo, open_store

__all__ = ["DEFAULT_STORE", "ENV_VAR", "SCHEMA_VERSION", "TRIAL_FRAME", "ImportCounts",
           "RunRow", "Store", "StoreBusy", "StoreInfo", "StoreKind", "StoreLocation",
           "StoreSink", "import_dirs", "open_store", "resolve", "run_row"]
