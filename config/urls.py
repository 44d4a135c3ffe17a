"""Root URLconf: the admin, sign-in (allauth) and the home page. Apps add their own ``urls.py`` as
they grow."""

from django.contrib import admin
from django.urls import include, path

from core import views as core_views

urlpatterns = [
    path("", core_views.home, name="home"),
    path("admin/", admin.site.urls),
    # Sign-in, sign-out, local signup and GitHub's OAuth views (docs/accounts.md).
    path("accounts/", include("allauth.urls")),
]
