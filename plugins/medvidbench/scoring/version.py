"""The scorer's version; every stored result records it.

Bump it on any change that can move a published number.
"""

SCORER_VERSION = "medvidbench-1.0.1"  # 1.0.1: NAP embeddings independent of the batch
