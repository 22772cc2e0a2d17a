"""Loads as lazy Dask tables, partition by partition, equal to the in-memory load.

- :mod:`.parts`: which bytes of which file each partition reads;
- :mod:`.conform`: a partition's tables fitted to the lazy tables' meta, with
  the in-memory engine's row labels;
- :mod:`.accounting`: loaded rows and rejections, the same for both engines;
- :mod:`.load`: the graph, from files to tables, ``rejected`` and ``sources``.
"""

__all__: list[str] = []
