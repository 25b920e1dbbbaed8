"""Private implementation of ``strategies``; import from ``strategies`` instead."""
