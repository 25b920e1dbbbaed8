"""Work units: what a device actor pulls, how its inputs are made, run on a device and
checked, and the rows it writes (``units``)."""
