"""The results store: the Parquet dataset of findings and stats (``dataset``) and the
signatures that group repeats of one failure (``signatures``)."""
