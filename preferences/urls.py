from preferences.views import PREFERENCE_JUDGING

app_name = "preferences"
urlpatterns = PREFERENCE_JUDGING.urls()
