"""The LLM judge: judge jobs and items, run in the background by django-q2."""
