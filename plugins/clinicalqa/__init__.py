"""Demo clinical QA (issue 15, point 5): a small synthetic MEDIC-like benchmark with a
multiple-choice category scored by accuracy and an open-ended category rated from pairwise
battles, evaluated by Podium itself through the model endpoints submitters give.

`plugins.clinicalqa.scoring` holds the pure scoring core (test set, predictions, the letter
rule, accuracy and its bootstrap contributions); `pairwise` the judge's battle prompt and
verdicts; `rerun` the questions a model is asked; `demo` the synthetic files. The choices are
in docs/clinicalqa.md.
"""
