"""The symbol graph as a document: reading and writing symbol files (legacy ones too), the
op table, node kinds, the mirroring vocabulary, typed changes, edits, checkpoints and
recovery files.
"""
