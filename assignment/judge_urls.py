from assignment.judge_views import MANUAL_ASSIGN

app_name = "judge"
urlpatterns = MANUAL_ASSIGN.urls()
