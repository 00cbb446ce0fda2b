"""The relevance tests' shared topic: a pool UMBRELA grades."""

import pytest

from tests.builders import make_answer, make_run, make_segment, make_topic


@pytest.fixture
def pool():
    """Topic t3's pool: s1 and s2 cited, s3 cited but without text in the collection."""
    topic = make_topic("t3", query="zebra stripes pattern")
    full = make_segment("s1#0", text="Zebras have black and white stripes.")
    other = make_segment("s2#0", text="Lions live in prides.")
    blank = make_segment("s3#0", text="")
    make_answer(
        make_run("r1"),
        topic,
        [
            ("Zebras have black and white stripes.", [full, other]),
            ("The sun is hot.", [other]),
            ("A passage we lack.", [blank]),
        ],
    )
    return topic
