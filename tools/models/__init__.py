"""The models that run on the machine: the embedder (torch or ONNX) and the rerankers."""
