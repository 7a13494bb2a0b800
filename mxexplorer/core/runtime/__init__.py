"""Where our code meets the machine: errors, progress, atomic files, child processes
(and work forked beside the caller), importing MXNet, devices and GPUs, graphviz, the
garbage collector during long work, the doctor.
"""
