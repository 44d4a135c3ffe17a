"""The benchmark pages (boards, About, Submit under /b/<slug>/) and a submitter's own pages."""

from django.urls import path

from . import board_views, history_views, owner_views, views
from .enums import BoardKind

app_name = "submissions"

urlpatterns = [
    path("b/<slug:slug>/", board_views.board, {"board": BoardKind.OFFICIAL}, name="board"),
    path(
        "b/<slug:slug>/community/",
        board_views.board,
        {"board": BoardKind.COMMUNITY},
        name="community",
    ),
    path("b/<slug:slug>/history/", board_views.history, name="history"),
    path("b/<slug:slug>/history/diff/", history_views.snapshot_diff, name="snapshot_diff"),
    path(
        "b/<slug:slug>/history/<int:pk>/",
        board_views.snapshot_board,
        {"board": BoardKind.OFFICIAL},
        name="snapshot",
    ),
    path(
        "b/<slug:slug>/history/<int:pk>/community/",
        board_views.snapshot_board,
        {"board": BoardKind.COMMUNITY},
        name="snapshot_community",
    ),
    path("b/<slug:slug>/about/", views.about, name="about"),
    path("b/<slug:slug>/submit/", views.submit, name="submit"),
    path("b/<slug:slug>/template.json", views.prediction_template, name="template"),
    path("b/<slug:slug>/entries/<int:pk>/", views.entry, name="entry"),
    path("b/<slug:slug>/compare/", views.compare, name="compare"),
    path("submissions/", views.my_submissions, name="mine"),
    path("submissions/notifications/read/", views.notifications_read, name="notifications_read"),
    path("submissions/<int:pk>/", views.submission_detail, name="detail"),
    path("submissions/<int:pk>/status/", views.submission_status, name="status"),
    path("submissions/<int:pk>/publication/", owner_views.publication, name="publication"),
    path("submissions/<int:pk>/details/", owner_views.edit_details, name="edit_details"),
]
