"""An index: its settings and metadata (``config``, ``meta``), the committed store and how it
is read (``store``, ``segment``, ``directory``), segment making (``making``), where shard work
runs (``executors``, ``shards``), the next generation (``merge``, ``commit``, ``live``,
``lock``, ``models``, ``sources``) and the write operations (``writer``).

Nothing is imported here: reading an index must not load the write side's models.
"""
