"""Measuring answer quality: hand-written evaluation sets and a runner that runs each
question as a normal run and reads the answer the way a business app does
(docs/evaluation.md)."""
