from django.urls import path

from metaeval import views

app_name = "metaeval"
urlpatterns = [
    path("", views.index, name="index"),
    path("calibrate/", views.calibrate, name="calibrate"),
    path("taus.csv", views.taus_download, name="taus_csv"),
    path("confusion.csv", views.confusion_download, name="confusion_csv"),
    path("describe.csv", views.describe_download, name="describe_csv"),
    path("scores.csv", views.points_download, name="points_csv"),
    path("plot-run.png", views.plot, {"level": "run"}, name="plot_run"),
    path("plot-pairs.png", views.plot, {"level": "pairs"}, name="plot_pairs"),
]
