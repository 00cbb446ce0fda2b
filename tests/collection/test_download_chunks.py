"""Downloads go out in large pieces, not a socket write a line, and keep every character."""

from assessor.collection.pages import chunked_text, download_response


def test_lines_are_joined_into_pieces_of_the_given_size():
    lines = [f"{i:04d}\n" for i in range(10)]  # 5 characters each
    pieces = list(chunked_text(lines, size=12))
    # 3 lines (15 characters) reach 12; the last piece holds the rest.
    assert [len(piece) for piece in pieces] == [15, 15, 15, 5]
    assert "".join(pieces) == "".join(lines)


def test_nothing_gives_no_piece():
    assert list(chunked_text([], size=10)) == []


def test_a_download_streams_64_kb_pieces():
    lines = [("x" * 99) + "\n" for _ in range(2000)]  # 200,000 characters
    response = download_response(iter(lines), "big.tsv")
    pieces = [piece.decode() for piece in response.streaming_content]
    assert [len(piece) for piece in pieces] == [65600, 65600, 65600, 3200]
    assert "".join(pieces) == "".join(lines)
