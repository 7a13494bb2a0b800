"""The way off MXNet and out of a graph: ONNX export and checks, cutting a graph at a node.
"""
