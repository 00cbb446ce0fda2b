"""The header's entries: links in their order, a group gathered where its first link stands."""

from assessor.site.nav import Destination, menu_entries


def test_a_group_stands_once_where_its_first_link_stands():
    links = [
        Destination("Topics", "", "/t/"),
        Destination("Nugget work", "", "/n/", "Work"),
        Destination("Jobs", "", "/j/"),
        Destination("Support", "", "/s/", "Work"),
        Destination("Other", "", "/o/", "More"),
        Destination("Admin", "", "/a/"),
    ]
    entries = menu_entries(links)
    assert [(entry.title, [link.title for link in entry.links], entry.is_group) for entry in entries] == [
        ("Topics", ["Topics"], False),
        ("Work", ["Nugget work", "Support"], True),
        ("Jobs", ["Jobs"], False),
        ("More", ["Other"], True),
        ("Admin", ["Admin"], False),
    ]
    assert entries[1].url == "/n/"


def test_no_links_no_entries():
    assert menu_entries([]) == []
