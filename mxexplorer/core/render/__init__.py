"""The graph as a picture: what is drawn, dot and our layered layout, folded blocks, colour
metrics.
"""
