"""Where our code meets the machine: errors, progress, atomic files, child processes,
importing MXNet, devices and GPUs, graphviz, the doctor.
"""
