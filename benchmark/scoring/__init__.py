"""The platform's pure scoring parts, shared by every benchmark plugin: the input errors
(`errors`), strict JSON reading (`strict_json`), the ranking (`ranking`), the bootstrap
(`bootstrap`) and the LLM judge's rubric and outcome (`rubric`). A benchmark's own scorer is
its plugin's (MedVidBench's in plugins/medvidbench/scoring/, MedSG-Bench's in
plugins/medsg/scoring/).

No Django imports here (a test walks the AST to keep it so).
"""

from .errors import GroundTruthError, PredictionsError, Problem, ScoringInputError

__all__ = ["GroundTruthError", "PredictionsError", "Problem", "ScoringInputError"]
