"""Our own ONNX exporter: from the document and its ``.params`` (read without MXNet), with
the engine's shapes and dtypes, converters by op family (:mod:`registry`), weights as
initializers (:mod:`weights`), the driver (:mod:`build`), and the export with its check
(:mod:`export`: against MXNet's forward where MXNet runs, else onnxruntime alone).
Must not import MXNet (except where the check asks it to judge) or Qt."""
