"""MedSG-Bench (Yue et al., arXiv 2505.11852): grounding one box in a sequence of medical images.

`plugins.medsg.scoring` holds the pure scoring core (test set, predictions, box conventions,
IoU, metrics and bootstrap contributions); `plugins.medsg.demo` writes a synthetic test set
with example predictions. The choices the spec leaves open are in docs/medsg.md.
"""
