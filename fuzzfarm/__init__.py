"""fuzzfarm: find where OpenCL devices break the numerical-compliance rules of the spec."""
__version__ = "0.1.0"
