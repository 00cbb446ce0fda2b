import pytest
from django.core.management import CommandError, call_command

from assessor.models import ImportBatch, Topic

pytestmark = pytest.mark.django_db


def test_it_imports_topics_with_crlf_and_bom(write_file):
    path = write_file("topics.tsv", "\ufeff2024-1\tfirst query\r\n2024-2\tsecond query\r\n")
    call_command("import_topics", str(path))
    assert dict(Topic.objects.values_list("id", "query")) == {"2024-1": "first query", "2024-2": "second query"}


def test_importing_the_same_file_twice_adds_nothing(write_file):
    path = write_file("topics.tsv", "2024-1\tfirst query\n")
    call_command("import_topics", str(path))
    call_command("import_topics", str(path))
    assert Topic.objects.count() == 1
    assert ImportBatch.objects.count() == 1


def test_a_contradicting_file_is_an_error_unless_replace(write_file):
    call_command("import_topics", str(write_file("a.tsv", "2024-1\tfirst query\n")))
    changed = write_file("b.tsv", "2024-2\tnew\n2024-1\tanother query\n")
    with pytest.raises(CommandError, match=r"b.tsv, line 2, field 'query'"):
        call_command("import_topics", str(changed))
    assert set(Topic.objects.values_list("id", flat=True)) == {"2024-1"}
    call_command("import_topics", str(changed), "--replace")
    assert Topic.objects.get(id="2024-1").query == "another query"


def test_a_line_without_a_tab_names_its_line_and_changes_nothing(write_file):
    path = write_file("topics.tsv", "2024-1\tok\n2024-2 no tab here\n")
    with pytest.raises(CommandError, match=r"topics.tsv, line 2: expected 2 tab-separated fields"):
        call_command("import_topics", str(path))
    assert Topic.objects.count() == 0
