from django.urls import path

from argue.report_views import report
from argue.views import ARGUE_JUDGING

app_name = "argue"
urlpatterns = [*ARGUE_JUDGING.urls(), path("report/", report, name="report")]
