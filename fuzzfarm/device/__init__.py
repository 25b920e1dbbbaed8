"""Device execution: the OpenCL drivers found in the environment (``icd``), the devices
(``discovery``), kernel sources (``kernels``, ``conversion_kernels``), the pyopencl runner
that builds and runs them (``runner``), the input generator (``generate``), the sweep kernel
of range units (``sweep_kernel``) and the commands the layers above enqueue their own
kernels with (``commands``, ``fault_reason``); the only layer that imports pyopencl."""
