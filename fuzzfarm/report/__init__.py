"""Reports built from the results store: re-verification (``verify``), minimized
reproducers (``repro`` and friends, ``fault_repro``), the nightly triage (``triage``), all
rendered from the jinja2 templates in ``templates/`` (``render``)."""
