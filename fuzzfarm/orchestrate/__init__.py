"""Orchestration on one machine: run options and the ``run`` loop, exhaustive sweeps
(``sweep``), campaign files (``campaign``) and the pure scheduler of work units
(``scheduler``)."""
