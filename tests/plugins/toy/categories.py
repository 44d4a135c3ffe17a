"""The toy benchmark with categories and model facts (issue 15): the same scoring core under a
second key, whose definition has two tabs, one ranked by its metrics ("closed": accuracy and
macro accuracy) and one by a pairwise rating ("open": `preference`, which the scorer never
computes: the board takes it from the stored ratings), and asks every model fact. Registered
for a test with `benchmark.plugins.registered(plugin)`, like the toy itself."""

from __future__ import annotations

from dataclasses import replace

from benchmark.definitions import CategoryDefinition, MetricDefinition

from .definition import METRICS, TOY
from .plugin import ToyPlugin

KEY = "toy-categories"
JUDGE_NOTE = "Llama-3.1-70B-Instruct is the judge here"

PREFERENCE = MetricDefinition(
    key="preference",
    label="Preference rating",
    task="open_ended",
    description="A Bradley-Terry rating from pairwise battles judged by an LLM (Elo scale).",
    display_decimals=0,
    is_rating=True,
)

CATEGORIES = (
    CategoryDefinition(
        key="closed",
        label="Close-ended",
        metrics=("accuracy", "macro_accuracy"),
        description="The class of each picture, scored against the reference.",
    ),
    CategoryDefinition(
        key="open",
        label="Open-ended",
        metrics=("preference",),
        description="Each picture described in words; answers compared two at a time.",
        judge_note=JUDGE_NOTE,
        ranking="rating",
    ),
)

TOY_CATEGORIES = replace(
    TOY,
    slug=KEY,
    name="Toy with categories",
    description="The toy benchmark with a close-ended and an open-ended tab.",
    plugin=KEY,
    metrics=(*METRICS, PREFERENCE),
    # Mean rank over every metric on the overview (the toy's own board is lexicographic).
    ranking_method="mean_rank",
    ranking_order=(),
    categories=CATEGORIES,
    model_facts=("type", "parameters", "licence", "precision", "domain_specific"),
    pairwise_opponents=3,
    rating_seed=7,
)


class ToyCategoriesPlugin(ToyPlugin):
    key = KEY
    definition = TOY_CATEGORIES


plugin = ToyCategoriesPlugin()
