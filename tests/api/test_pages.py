"""The "Use the API" page (/api-guide/): examples built from the real endpoints, and the links to
it and to the tokens page in the site's header."""

import html
import re
from urllib.parse import urlsplit

import pytest
from django.urls import resolve, reverse

from benchmark.services import ensure_plugin_benchmark
from submissions import services
from tests.accounts.factories import UserFactory
from tests.benchmark.factories import BenchmarkFactory
from tests.submissions.factories import scored_entry
from tests.submissions.pages import values

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

URL = "/api-guide/"
ABSOLUTE_URL = re.compile(r"http://testserver/[^\s\"'<]*")
PYTHON_EXAMPLE = re.compile(
    r"<h3>Python</h3>\s*<pre class=\"example\"><code>(.*?)</code></pre>", re.S
)


def guide(client) -> str:
    response = client.get(URL)
    assert response.status_code == 200
    assert [template.name for template in response.templates] == ["api/guide.html", "base.html"]
    return response.content.decode()


def endpoint_urls(slug: str, *, judge: bool = True) -> list[str]:
    return [
        "http://testserver/api/v1/benchmarks/",
        f"http://testserver/api/v1/benchmarks/{slug}/rankings/",
        f"http://testserver/api/v1/benchmarks/{slug}/rankings.csv",
        f"http://testserver/api/v1/benchmarks/{slug}/submissions/",
        "http://testserver/api/v1/submissions/123/",
        *(["http://testserver/api/v1/submissions/123/judge/"] if judge else []),
        "http://testserver/api/v1/submissions/",
    ]


def test_the_url_is_named():
    assert reverse("api-guide") == URL


def test_the_examples_use_the_first_public_benchmark_with_absolute_urls(client):
    BenchmarkFactory(name="Zeta", slug="zeta")
    BenchmarkFactory(name="Alpha", slug="alpha")
    BenchmarkFactory(name="Aardvark (hidden)", slug="hidden", is_public=False)

    content = guide(client)

    for url in endpoint_urls("alpha"):
        assert url in content
    assert "/zeta/" not in content
    assert "/hidden/" not in content
    assert "The examples use Alpha (<code>alpha</code>); choose another above." in content


def test_without_a_public_benchmark_the_examples_use_medvidbench(client):
    content = guide(client)

    for url in endpoint_urls("medvidbench"):
        assert url in content


def test_every_url_on_the_page_is_a_real_route(client):
    BenchmarkFactory(slug="alpha")

    urls = set(ABSOLUTE_URL.findall(guide(client)))

    assert len(urls) >= 10
    for url in urls:
        resolve(urlsplit(url).path)  # raises Resolver404 for a URL the site does not serve


def test_the_export_examples_answer_json_and_csv(client):
    BenchmarkFactory(slug="alpha")
    content = guide(client)
    json_url = "http://testserver/api/v1/benchmarks/alpha/rankings/?board=official"
    csv_url = "http://testserver/api/v1/benchmarks/alpha/rankings.csv?board=official"
    assert f'curl "{json_url}"' in content
    assert f'curl -o rankings.csv "{csv_url}"' in content

    rankings = client.get(json_url)
    exported = client.get(csv_url)

    assert rankings.status_code == 200
    assert (rankings.json()["benchmark"], rankings.json()["results"]) == ("alpha", [])
    assert exported.status_code == 200
    assert exported["Content-Type"] == "text/csv; charset=utf-8"
    assert exported.content.decode().startswith("rank,model,")


def test_it_links_the_docs_the_schema_and_the_tokens_page_and_shows_the_header(client):
    content = guide(client)

    assert '<a href="http://testserver/api/docs/">interactive API docs</a>' in content
    assert '<a href="http://testserver/api/schema/">OpenAPI schema</a>' in content
    assert '<a href="http://testserver/account/tokens/">API tokens page</a>' in content
    assert "<code>Authorization: Bearer pod_…</code>" in content
    assert 'curl -H "Authorization: Bearer $PODIUM_TOKEN"' in content


def test_the_python_examples_are_valid_python(client):
    examples = [html.unescape(code) for code in PYTHON_EXAMPLE.findall(guide(client))]

    assert len(examples) == 5
    for code in examples:
        compile(code, "<example>", "exec")
    assert "import requests" in examples[0]


def test_the_header_links_the_guide_for_everyone_and_the_tokens_page_when_signed_in(client):
    anonymous = client.get("/").content.decode()
    client.force_login(UserFactory())
    signed_in = client.get("/").content.decode()

    assert '<a href="/api-guide/">API</a>' in anonymous
    assert '<a href="/account/tokens/">API tokens</a>' not in anonymous
    assert '<a href="/api-guide/">API</a>' in signed_in
    assert '<a href="/account/tokens/">API tokens</a>' in signed_in


def test_the_examples_follow_the_benchmark_chosen_on_the_page(client):
    """Issue 32, point 7: the guide used clinical QA for every example but described
    MedVidBench's judge metrics."""
    for slug in ("medvidbench", "medsg-bench", "clinicalqa"):
        ensure_plugin_benchmark(slug)

    medvidbench = client.get(URL + "?benchmark=medvidbench").content.decode()
    medsg = client.get(URL + "?benchmark=medsg-bench").content.decode()
    clinicalqa = client.get(URL + "?benchmark=clinicalqa").content.decode()

    assert "The examples use MedVidBench (<code>medvidbench</code>)" in medvidbench
    assert "MedVidBench's judge metrics (DVC_llm, VS_llm, RC_llm) come from the LLM" in (
        medvidbench
    )
    for url in endpoint_urls("medvidbench"):
        assert url in medvidbench
    # MedSG-Bench and clinical QA have no judge step: no judge example, no caption metrics.
    for page, name, slug in (
        (medsg, "MedSG-Bench", "medsg-bench"),
        (clinicalqa, "Demo clinical QA", "clinicalqa"),
    ):
        assert f"{name} has no LLM judge step: every metric is scored at once" in page
        assert "/judge/" not in page
        assert "DVC_llm" not in page
        for url in endpoint_urls(slug, judge=False):
            assert url in page
    # Clinical QA asks for model facts: the submit examples send them.
    assert "-F domain_specific=yes \\" in clinicalqa
    assert '"precision": "bfloat16",' in clinicalqa
    assert "-F precision=" not in medvidbench
    # The chooser marks the page's benchmark; an unknown one is 404.
    assert '<a href="?benchmark=medsg-bench" aria-current="page">MedSG-Bench</a>' in medsg
    assert client.get(URL + "?benchmark=nope").status_code == 404
    for page in (medvidbench, medsg, clinicalqa):  # every example still compiles
        for code in PYTHON_EXAMPLE.findall(page):
            compile(html.unescape(code), "<example>", "exec")


def test_the_examples_read_a_board_that_has_rows(client):
    """A benchmark whose Official board is empty (the demo's clinical QA): the examples read its
    Community board, and say why; a newcomer's first call answered "count": 0 before."""
    benchmark = ensure_plugin_benchmark("medvidbench")
    type(benchmark).objects.filter(pk=benchmark.pk).update(is_public=True)
    scored_entry(benchmark, "Only Community", values())
    services.recompute_board(benchmark)

    content = guide(client)

    json_url = "http://testserver/api/v1/benchmarks/medvidbench/rankings/?board=community"
    assert f'curl "{json_url}"' in content
    assert "board=official" not in content
    assert "MedVidBench's Official board has no entries yet" in content
    assert client.get(json_url).json()["count"] == 1
