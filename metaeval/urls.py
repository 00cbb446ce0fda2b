from django.urls import path

from metaeval import cell_views, study_views, truth_views, views

app_name = "metaeval"
urlpatterns = [
    path("", views.index, name="index"),
    path("calibrate/", views.calibrate, name="calibrate"),
    path("truth/", truth_views.truth, name="truth"),
    path("taus.csv", views.taus_download, name="taus_csv"),
    path("confusion.csv", views.confusion_download, name="confusion_csv"),
    path("cell/", cell_views.cell, name="cell"),
    path("describe.csv", views.describe_download, name="describe_csv"),
    path("scores.csv", views.points_download, name="points_csv"),
    path("plot-run.png", views.plot, {"level": "run"}, name="plot_run"),
    path("plot-pairs.png", views.plot, {"level": "pairs"}, name="plot_pairs"),
    path("replicates/", study_views.replicates, name="replicates"),
    path("studies/", study_views.studies, name="studies"),
    path("studies/<slug:name>/", study_views.study, name="study"),
    path("studies/<slug:name>/labels.png", study_views.study_plot, name="study_plot"),
    path("studies/<slug:name>/labels.csv", study_views.study_download, {"layout": "csv"}, name="study_csv"),
    path("studies/<slug:name>/labels.jsonl", study_views.study_download, {"layout": "jsonl"}, name="study_jsonl"),
]
