"""The reading engine: files into JSON values, records and Arrow columns. It knows no record kind.

A byte's path, stage by stage, each stage a module:

1. **source** (:mod:`.sources`, :mod:`.remote`): paths, folders, globs, URLs,
   open files and ``-`` become the regular files to read; anything else is a
   file-level rejection, never opened. Each is named as :mod:`.names` shows it.
2. **bytes** (:mod:`.content`, :mod:`.byte_ranges`, :mod:`.ahead`): a file is
   read with ``read()`` (hashed as it is read, :mod:`.digests`; gzip
   decompressed as it streams and every stream kept within its bounds,
   :mod:`.streams`) and handed over in pieces of about 16 MiB that end where a
   value ends (:mod:`.cuts`); the next piece is read in a second thread while
   this one is parsed.
3. **spans** (:mod:`.spans`, :mod:`.span_checks`, :mod:`.wide_keys`): each
   piece is cut with NumPy into the spans of its values, and each span is
   marked plainly clean (its bytes checked in bulk) or left for the exact path
   (:class:`.pipeline.PieceReader` reads a piece through the stages below).
4. **parse** (:mod:`.grouping`, :mod:`.groups`, :mod:`.parts`,
   :mod:`.arrow_parse`, :mod:`.columnar`, :mod:`.member_text`,
   :mod:`.fallback`, :mod:`.exact`): clean spans are grouped by a guess at
   their shape, each group parsed by pyarrow in bulk into Arrow columns and
   converted by its kind (:mod:`.fast`: how a kind is read fast), a refused
   group (a :class:`.columnar.Refused` value) halved or regrouped; every
   other span is read value by value by the exact path, which every bulk
   result must agree with, and rejected there naming its line, column and
   reason (:mod:`.claims`: the kind that claims a value).
5. **table** (:mod:`.collect`, :mod:`.batches`, :mod:`.tables`): the parsed
   parts are sorted into the record kinds, in file order, and handed to each
   kind's builder (:mod:`explicit_audit._core.records`), which makes its
   tables; the load's own tables (rejected rows, sources) are made beside.

:mod:`.limits` bounds every stage (a hostile file is a rejection, never a
crash); :mod:`.options` holds a load's options as one typed object;
:mod:`.reader` reads one file, its bytes or a range of its lines as a load
reads them (a Dask partition is read so); :mod:`.memory` and
:mod:`.gc_pause` keep a load's memory and pauses small.
"""
