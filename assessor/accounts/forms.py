"""The accounts page's forms: a new assessor, a new password."""

from django import forms


class AssessorForm(forms.Form):
    username = forms.CharField(max_length=150, label="User name")
    password = forms.CharField(
        required=False,
        widget=forms.PasswordInput(render_value=False),
        help_text="Leave empty to have one made; it is shown once, to pass on.",
    )


class PasswordForm(forms.Form):
    password = forms.CharField(
        required=False,
        widget=forms.PasswordInput(render_value=False),
        label="New password",
        help_text="Leave empty to have one made; it is shown once, to pass on.",
    )
