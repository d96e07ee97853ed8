"""The Dask cluster on which the dashboard's releases read the operator's large data sets.

One per server process, made at the first release on such a data set: a client of the
scheduler named by ``PRIVCLUST_DASK_SCHEDULER`` when it is set, else a local cluster of 2
workers (threads) inside the server process. Its partitions report their progress to the page
(:meth:`privclust.core.Curator.progress`).
"""

import threading

from . import config

_lock = threading.Lock()
_client = None


def is_large(dataset):
    """Whether ``dataset`` lives in shards read on Dask (its records are never in memory)."""
    from privclust.core.data import DaskDataset

    return isinstance(dataset, DaskDataset)


def client():
    """The process's ``dask.distributed.Client`` (made once)."""
    global _client
    with _lock:
        if _client is None:
            from dask.distributed import Client, LocalCluster

            address = config.DASK_SCHEDULER.read()
            if address:
                _client = Client(address, set_as_default=False)
            else:
                cluster = LocalCluster(
                    n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
                )
                _client = Client(cluster, set_as_default=False)
        return _client


def curator_options(dataset):
    """Keyword arguments of the Curator of ``dataset``: the cluster, for a large data set."""
    return {"client": client()} if is_large(dataset) else {}
