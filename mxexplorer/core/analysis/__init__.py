"""What a graph computes and costs: shapes, statistics, the internals outline, reports,
checkpoint statistics, profiles, diffs.
"""
