"""The site's URLs plus a stand-in for `submissions:compare`, which another part of issue 12
builds: the entry page links to it only where the name exists (`{% url ... as %}`), so its
link is tested here against the reserved path. With the real page merged, its route comes
first and the stand-in is never reached."""

from django.http import HttpResponse
from django.urls import include, path

from config.urls import urlpatterns as site_urlpatterns
from submissions import urls as submissions_urls


def compare_stand_in(request, slug):
    return HttpResponse("compare")


urlpatterns = [
    path(
        "",
        include(
            (
                [
                    *submissions_urls.urlpatterns,
                    path("b/<slug:slug>/compare/", compare_stand_in, name="compare"),
                ],
                "submissions",
            )
        ),
    ),
    *site_urlpatterns,
]
