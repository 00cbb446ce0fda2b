from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from assessor.roles import user_role


@login_required
def home(request: HttpRequest) -> HttpResponse:
    role = user_role(request.user)
    return render(request, "home.html", {"user_role": role})
