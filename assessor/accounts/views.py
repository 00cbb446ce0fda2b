"""The accounts page: every account with its role and state, and the changes organizers may make."""

from django.contrib import messages
from django.contrib.auth.models import User
from django.db.models import Q
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from assessor.accounts import services
from assessor.accounts.forms import AssessorForm, PasswordForm
from assessor.http import AuthenticatedRequest
from assessor.models.scope import scoped_campaign
from assessor.work.roles import Role, organizer_required


def _page(request: AuthenticatedRequest, form: AssessorForm, status: int = 200) -> HttpResponse:
    context = {
        "rows": services.account_rows(),
        "form": form,
        "password_form": PasswordForm(),
        "audit": services.audit_entries(),
    }
    return render(request, "accounts/accounts.html", context, status=status)


def _account(user_id: int) -> User:
    """An account of the page's campaign (a member of it, or an admin, who sees every campaign): another campaign's
    people are not found here."""
    campaign = scoped_campaign()
    if campaign is None:
        return get_object_or_404(User, pk=user_id)
    seen = Q(campaign_memberships__campaign=campaign) | Q(is_superuser=True) | Q(groups__name=Role.ADMIN.value)
    return get_object_or_404(User.objects.filter(seen).distinct(), pk=user_id)


@organizer_required
def accounts(request: AuthenticatedRequest) -> HttpResponse:
    if request.method != "POST":
        return _page(request, AssessorForm())
    form = AssessorForm(request.POST)
    if not form.is_valid():
        return _page(request, form, status=400)
    password = form.cleaned_data["password"] or services.password_generate()
    try:
        user = services.account_create(actor=request.user, username=form.cleaned_data["username"], password=password)
    except services.AccountRefused as refusal:
        form.add_error(None, str(refusal))
        return _page(request, form, status=400)
    shown = "" if form.cleaned_data["password"] else f" Its password is {password} (shown once: pass it on now)."
    messages.success(request, f"Assessor {user.get_username()} added.{shown}")
    return redirect("accounts:list")


@organizer_required
@require_POST
def password(request: AuthenticatedRequest, user_id: int) -> HttpResponse:
    user = _account(user_id)
    form = PasswordForm(request.POST)
    form.is_valid()
    new = form.cleaned_data.get("password") or services.password_generate()
    try:
        services.password_reset(actor=request.user, user=user, password=new)
    except services.AccountRefused as refusal:
        messages.error(request, f"The password of {user.get_username()} was not changed: {refusal}")
    else:
        shown = "" if form.cleaned_data.get("password") else f": {new} (shown once: pass it on now)"
        messages.success(request, f"New password of {user.get_username()}{shown}.")
    return redirect("accounts:list")


@organizer_required
@require_POST
def active(request: AuthenticatedRequest, user_id: int) -> HttpResponse:
    user = _account(user_id)
    make_active = request.POST.get("active") == "1"
    try:
        services.active_set(actor=request.user, user=user, active=make_active)
    except services.AccountRefused as refusal:
        messages.error(request, str(refusal))
    else:
        state = "reactivated: it can log in again" if make_active else "deactivated: it can no longer log in"
        messages.success(request, f"{user.get_username()} {state}.")
    return redirect("accounts:list")
