from argue.views import ARGUE_JUDGING

app_name = "argue"
urlpatterns = ARGUE_JUDGING.urls()
