"""The label buttons every judging page writes with `{% label_buttons %}`: what static/js/judge.js reads off them."""

from django.template import engines

CHOICES = [("support", "s", "support", "yes"), ("not_support", "n", 'not "quite"', "no")]


def rendered(tag_arguments: str, **context) -> str:
    template = engines["django"].from_string("{% load label_buttons %}{% label_buttons " + tag_arguments + " %}")
    return template.render({"choices": CHOICES, **context})


def test_the_rows_label_is_pressed_and_the_names_are_escaped():
    assert rendered("choices current", current="not_support") == (
        '<button type="submit" name="label" value="support" data-key="s" class="choice tone-yes" '
        'aria-pressed="false" title="support (s)"><span class="choice-name">support</span> <kbd>s</kbd></button>\n'
        '<button type="submit" name="label" value="not_support" data-key="n" class="choice tone-no on" '
        'aria-pressed="true" title="not &quot;quite&quot; (n)"><span class="choice-name">not &quot;quite&quot;</span> '
        "<kbd>n</kbd></button>"
    )


def test_a_frozen_row_a_suggestion_and_keys_alone():
    html = rendered("choices current disabled=True shown=suggested names=False", current="", suggested="support")
    assert html == (
        '<button type="submit" name="label" value="support" data-key="s" class="choice tone-yes shown" '
        'aria-pressed="false" disabled title="support (s)"><kbd>s</kbd></button>\n'
        '<button type="submit" name="label" value="not_support" data-key="n" class="choice tone-no" '
        'aria-pressed="false" disabled title="not &quot;quite&quot; (n)"><kbd>n</kbd></button>'
    )


def test_a_label_of_another_type_presses_nothing():
    # Support labels are numbers: their template passes them as text, as the choices' values are.
    assert 'aria-pressed="true"' not in rendered("choices current", current=0)
    assert 'class="choice tone-no on"' in rendered("choices current|stringformat:'s'", current="not_support")
