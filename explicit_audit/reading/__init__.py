"""The reading engine: files into JSON values, records and Arrow columns. It knows no record kind.

A byte's path, stage by stage, each stage a module:

1. **source** (:mod:`.sources`, :mod:`.remote`): paths, folders, globs, URLs,
   open files and ``-`` become the regular files to read; anything else is a
   file-level rejection, never opened.
2. **bytes** (:mod:`.content`, :mod:`.byte_ranges`, :mod:`.ahead`): a file is
   read with ``read()`` (hashed as it is read, :mod:`.digests`; gzip
   decompressed as it streams and every stream kept within its bounds,
   :mod:`.streams`) and handed over in pieces of about 16 MiB that end where a
   value ends (:mod:`.cuts`); the next piece is read in a second thread while
   this one is parsed.
3. **spans** (:mod:`.spans`, :mod:`.span_checks`, :mod:`.wide_keys`): each
   piece is cut with NumPy into the spans of its values, and each span is
   marked plainly clean (its bytes checked in bulk) or left for the exact path.
4. **parse** (:mod:`.columnar`, :mod:`.member_text`, :mod:`.exact`): clean
   spans are parsed by pyarrow in bulk into Arrow columns; every other span is
   read value by value by the exact path, which every bulk result must agree
   with, and rejected there naming its line, column and reason.
5. **table** (:mod:`.pipeline`, :mod:`.batches`, :mod:`.collect`): the parsed
   parts are sorted into the record kinds, in file order, and handed to each
   kind's builder (:mod:`explicit_audit._core.records`), which makes its tables.

:mod:`.limits` bounds every stage (a hostile file is a rejection, never a
crash); :mod:`.options` holds a load's options as one typed object;
:mod:`.reader` is the exact path's front door for a single file.
"""
