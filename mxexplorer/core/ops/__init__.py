"""The engine: MXNet 1.9.1's shape and dtype inference without MXNet.

``params`` reads attributes as MXNet's parser does; ``base`` holds the pieces every rule
uses; one module per op family (or a package, whose ``__init__`` merges the tables of its
sub-families) holds that family's rules; ``registry`` gathers them and ``engine`` runs
them over a graph as MXNet's inference pass does.  Imports point one way:
``runtime < graph < ops < analysis``.  Must not import MXNet or Qt.
"""
