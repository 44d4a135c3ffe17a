"""`{% metric_cells %}` (submissions/templatetags/board_table.py) writes a board row's metric
cells as the template loop it replaced wrote them, byte for byte: ratings and metrics, marks,
intervals shown or not, spreads and notes, and text that needs escaping."""

from django.template import Context, Template
from hypothesis import given
from hypothesis import strategies as st

from submissions.selectors import BoardCell
from submissions.templatetags.board_table import metric_cells

# The loop `_board_table.html` had, kept as the reference.
TEMPLATE_LOOP = Template(
    '{% for cell in cells %}{% if cell.rating %}<td class="num rating{% if cell.css %} '
    '{{ cell.css }}{% endif %}"{% if cell.interval %} title="{{ cell.interval }}"{% endif %}>'
    '{{ cell.text }}{% if cell.spread %} <span class="rating-spread">{{ cell.spread }}</span>'
    '{% endif %}{% if cell.note %} <small class="battles">{{ cell.note }}</small>{% endif %}'
    '</td>{% else %}<td class="num{% if cell.css %} {{ cell.css }}{% endif %}"'
    '{% if cell.interval and any_intervals %} title="{{ cell.interval }}"{% endif %}>'
    '{{ cell.text }}{% if cell.note %} <small class="judged-over">{{ cell.note }}</small>'
    "{% endif %}</td>{% endif %}{% endfor %}"
)
texts = st.sampled_from(
    ["", "0.512", "—", "pending", "a \"b\" <c> & 'd'", "95% interval 0.5\N{EN DASH}0.6"]
)
cells = st.builds(
    BoardCell,
    text=texts,
    css=st.sampled_from(["", "best", "second", "pending", "missing"]),
    note=texts,
    interval=texts,
    rating=st.booleans(),
    spread=texts,
)


@given(st.lists(cells, max_size=12), st.booleans())
def test_the_cells_are_the_template_loops_bytes(row, any_intervals):
    expected = TEMPLATE_LOOP.render(Context({"cells": row, "any_intervals": any_intervals}))

    assert metric_cells(row, any_intervals) == expected


def test_a_cells_text_is_escaped_once():
    cell = BoardCell(text="<b>&amp;</b>", css="best", interval='"x"')

    assert metric_cells([cell], True) == (
        '<td class="num best" title="&quot;x&quot;">&lt;b&gt;&amp;amp;&lt;/b&gt;</td>'
    )
