"""Reading the board and other pages in tests: the table parser, a GET that checks the status,
the benchmark's metric keys and a row of metric values."""

from html.parser import HTMLParser

METRIC_KEYS = [
    "CVS_acc",
    "NAP_acc",
    "SA_acc",
    "STG_mIoU",
    "TAG_mIoU@0.3",
    "TAG_mIoU@0.5",
    "DVC_F1",
    "DVC_llm",
    "VS_llm",
    "RC_llm",
]


def values(**overrides):
    return {**dict.fromkeys(METRIC_KEYS, 0.5), **overrides}


class TableParser(HTMLParser):
    """The rows of the first table of a page (or of the table with a given class): each
    row a list of (cell classes, cell text) pairs; header links are collected too."""

    def __init__(self, table_class=None):
        super().__init__()
        self.table_class = table_class
        self.depth = 0  # > 0 inside the chosen table
        self.done = False
        self.rows, self.header_links = [], []
        self.cell = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table" and not self.done and self.depth == 0:
            classes = (attrs.get("class") or "").split()
            if self.table_class is None or self.table_class in classes:
                self.depth = 1
            return
        if not self.depth:
            return
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self.cell = [attrs.get("class") or "", ""]
        elif tag == "a" and self.cell is not None and attrs.get("href", "").startswith("?"):
            self.header_links.append(attrs["href"])

    def handle_endtag(self, tag):
        if not self.depth:
            return
        if tag in ("td", "th") and self.cell is not None:
            self.rows[-1].append((self.cell[0], " ".join(self.cell[1].split())))
            self.cell = None
        elif tag == "table":
            self.depth, self.done = 0, True

    def handle_data(self, data):
        if self.depth and self.cell is not None:
            self.cell[1] += data


def parse_table(content, table_class=None):
    parser = TableParser(table_class)
    parser.feed(content)
    return parser


def get(client, url, status=200):
    response = client.get(url)
    assert response.status_code == status
    return response.content.decode()


class RequiredMarks(HTMLParser):
    """A form page's required marks: the ids the marked labels point at, the ids of the
    inputs with the `required` attribute, and whether the page says what the mark means."""

    def __init__(self):
        super().__init__()
        self.marked, self.required = [], []
        self.legend = False
        self.label_for = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = (attrs.get("class") or "").split()
        if tag == "label":
            self.label_for = attrs.get("for")
        elif tag == "span" and "required-mark" in classes and self.label_for:
            assert attrs.get("aria-hidden") == "true"  # the input's `required` is announced
            self.marked.append(self.label_for)
        elif tag == "p" and "required-legend" in classes:
            self.legend = True
        if tag in {"input", "select", "textarea"} and "required" in attrs:
            self.required.append(attrs["id"])

    def handle_endtag(self, tag):
        if tag == "label":
            self.label_for = None


def required_marks(content):
    """(the marked labels' field ids, the required inputs' ids, the legend shown)."""
    parser = RequiredMarks()
    parser.feed(content)
    return parser.marked, parser.required, parser.legend
