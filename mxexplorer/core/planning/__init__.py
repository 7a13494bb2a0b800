"""The memory planner: its cost oracles, the search, mirroring tags, liveness, benchmarks
and the child-process jobs that run them.
"""
