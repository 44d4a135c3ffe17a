"""No models yet."""
