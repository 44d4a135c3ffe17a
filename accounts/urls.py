"""The account pages under /account/ (allauth's sign-in pages live under /accounts/)."""

from django.urls import path

from . import views

app_name = "accounts"

urlpatterns = [
    path("tokens/", views.api_tokens, name="tokens"),
    path("tokens/<int:pk>/revoke/", views.revoke_api_token, name="revoke-token"),
]
