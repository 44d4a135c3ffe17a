"""Hosted evaluation's pages: the endpoint form and the public queue under the benchmark's
/b/<slug>/, a request's own page under /hosted/<pk>/."""

from django.urls import path

from . import views

app_name = "hosting"

urlpatterns = [
    path("b/<slug:slug>/submit/endpoint/", views.submit, name="submit"),
    path("b/<slug:slug>/queue/", views.queue, name="queue"),
    path("b/<slug:slug>/queue/live/", views.queue_live, name="queue_live"),
    path("benchmarks/<slug:slug>/queue/", views.legacy_queue, name="legacy_queue"),
    path("hosted/<int:pk>/", views.request_detail, name="request"),
    path("hosted/<int:pk>/live/", views.request_live, name="request_live"),
    path("hosted/<int:pk>/cancel/", views.cancel, name="cancel"),
]
