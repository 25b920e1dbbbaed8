"""Device execution: the OpenCL drivers found in the environment (``icd``), kernel sources
(``kernels``) and the pyopencl runner that builds, runs and watches them (``runner``); the
only layer that imports pyopencl."""
