"""Server-rendered SVG charts (issue 12): plain data in, a small dataclass of shapes out, drawn by
templates; each chart has a title, a description and a table fallback for screen readers."""
