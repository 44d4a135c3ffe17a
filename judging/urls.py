"""The judge's endpoints on a submission: its panel fragment and the start, rerun and cancel
buttons, under the submission's own URL."""

from django.urls import path

from . import views

app_name = "judging"

urlpatterns = [
    path("submissions/<int:pk>/judge/", views.panel, name="panel"),
    path("submissions/<int:pk>/judge/start/", views.start, name="start"),
    path("submissions/<int:pk>/judge/rerun/", views.rerun, name="rerun"),
    path("submissions/<int:pk>/judge/cancel/", views.cancel, name="cancel"),
]
