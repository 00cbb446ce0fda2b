from support.judge_views import SUPPORT_JUDGING

app_name = "support"
urlpatterns = SUPPORT_JUDGING.urls()
