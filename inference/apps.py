from django.apps import AppConfig


class InferenceConfig(AppConfig):
    """Calling OpenAI-compatible endpoints at scale (docs/inference.md): the engine the LLM judge,
    the verification re-run and hosted evaluation share. Its models are abstract bases only: the
    tables are its users'."""

    name = "inference"
    verbose_name = "Inference engine"
