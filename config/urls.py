"""Root URLconf: the home page (the benchmark list), the benchmark and submission pages, the
judge's endpoints, the admin and sign-in (allauth)."""

from django.contrib import admin
from django.urls import include, path

from api import errors
from submissions import views as submission_views

# Error pages: JSON under /api/, Django's usual pages elsewhere (api/errors.py).
handler400 = errors.bad_request
handler403 = errors.permission_denied
handler404 = errors.page_not_found
handler500 = errors.server_error

# The admin's ModelAdmins are registered here, not when the apps load (config/admin_app.py).
admin.autodiscover()

urlpatterns = [
    path("", submission_views.home, name="home"),
    path("", include("submissions.urls")),
    # The LLM judge's panel and buttons on a submission page (/submissions/<pk>/judge/...).
    path("", include("judging.urls")),
    # The entry owner's model endpoint for verification (/submissions/<pk>/model-endpoint/).
    path("", include("verifying.urls")),
    # Hosted evaluation: the public queue (/b/<slug>/queue/), the endpoint form and a
    # request's own page (/hosted/<pk>/).
    path("", include("hosting.urls")),
    # The REST API, its schema and docs (docs/api.md).
    path("api/", include("api.urls")),
    # "Use the API": curl and Python examples built from the real endpoints (/api-guide/).
    path("", include("api.pages")),
    path("admin/", admin.site.urls),
    # Sign-in, sign-out, local signup and GitHub's OAuth views (docs/accounts.md).
    path("accounts/", include("allauth.urls")),
    # A person's own pages, e.g. their API tokens (/account/tokens/); distinct from allauth's.
    path("account/", include("accounts.urls")),
]
