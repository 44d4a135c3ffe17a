"""The entry owner's model endpoint page, under the submission's own URL."""

from django.urls import path

from . import views

app_name = "verifying"

urlpatterns = [
    path("submissions/<int:pk>/model-endpoint/", views.endpoint, name="endpoint"),
]
