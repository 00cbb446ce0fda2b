"""A local OpenAI-compatible chat server that answers the project's prompts like a model.

Used by the tests and by `bench_llm`; never by production code. Without a
script it answers every prompt sensibly and deterministically (rules below);
`script(...)` queues replies that go first, one per request: fenced or
prose-wrapped lists, wrong lengths, unknown labels, slow answers, 429 with
Retry-After, 500s, or any literal text.

The rules of the "model" (tests recompute them independently):
- nuggetize: the current list, then the first 6 words of each context passage
  not yet in it, capped at 30;
- importance: "vital" for a nugget with an even number of words, else "okay";
- assign: "support" if the nugget's text is in the passage (case-insensitive),
  "partial_support" if one of its words of 4+ letters is, else "not_support";
- support: "FS" if the sentence is in the passage, "PS" if one of its words of
  4+ letters is, else "NS" (the published prompt: "Full Support", "Partial
  Support", "No Support", the statement against the citation);
- umbrela: the number of distinct query words of 4+ letters in the passage, at most 3
  (the published prompt: "##final score: N");
- yes/no ("You are YesNoJudgeLLM"): "yes" if the answer shares a word of 4+
  letters with the question, else "no";
- preference (PrefNugget's prompt, in DSPy's `[[ ## name ## ]]` layout): the passage
  with more distinct words of 4+ letters of the title and problem statement is
  better; equal counts are a tie ("0"), or "1" for the must-decide prompt;
- Crucible's extraction: the extracted text is the document's sentences (split after
  . ! or ? and a space) that share a word of 4+ letters with the question, joined by
  one space ("NO ANSWER" when none does); the condensed sentence is the first of them.
  Asked for log-probabilities (`logprobs`), every token of the extracted text has the
  probability (s + 1) / (q + 2), s the question's distinct words of 4+ letters in the
  extracted text and q all of them; every other token has probability 1. A server
  started with `logprobs=False` never returns any.
- ARGUE-style ("You are ArgueCitationJudge" / "You are ArgueAnswerJudge", the same layout): a cited
  document supports a sentence when the sentence is in it, a sentence agrees with a gold answer when the
  answer is in it (both case-insensitive).

A server started with `flip` (`--flip`) is a second "model" that disagrees:
it answers by the same rules, then turns every label round (support <->
not_support, vital <-> okay, FS <-> NS, grade g -> 3 - g, yes <-> no, preference 1 <-> 2; partial support and
the nuggets themselves stay), so that two endpoints give two conditions that
differ in a way a test can compute.
"""

import ast
import json
import re
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WORD = re.compile(r"[A-Za-z0-9']+")


def _line_after(text: str, prefix: str) -> str:
    for line in text.splitlines():
        if line.startswith(prefix):
            return line[len(prefix) :]
    return ""


def _list_after(text: str, prefix: str) -> list:
    """The list written on the line after `prefix`: JSON, as the project writes it, or a Python literal, as
    nuggetizer writes its nugget lists (`str(list)`: single quotes)."""
    written = _line_after(text, prefix) or "[]"
    try:
        value = json.loads(written)
    except json.JSONDecodeError:
        value = ast.literal_eval(written)
    if not isinstance(value, list):
        raise ValueError(f"{prefix.strip()} is not a list: {written[:80]!r}")
    return value


def _long_words(text: str) -> set[str]:
    return {word.lower() for word in WORD.findall(text) if len(word) >= 4}


def first_words(text: str, count: int = 6) -> str:
    return " ".join(WORD.findall(text)[:count])


def _nuggetize(user: str) -> str:
    context = user.split("Context:\n", 1)[1].split("\nSearch Query:", 1)[0]
    passages = [re.sub(r"^\[\d+\] ", "", line) for line in context.splitlines() if re.match(r"^\[\d+\] ", line)]
    nuggets = _list_after(user, "Initial Nugget List: ")
    for passage in passages:
        nugget = first_words(passage)
        if nugget and nugget not in nuggets:
            nuggets.append(nugget)
    return json.dumps(nuggets[:30])


def _importance(user: str) -> str:
    nuggets = _list_after(user, "Nugget List: ")
    return json.dumps(["vital" if len(n.split()) % 2 == 0 else "okay" for n in nuggets])


def _assign(user: str) -> str:
    passage = _line_after(user, "Passage: ").lower()
    nuggets = _list_after(user, "Nugget List: ")
    labels = []
    for nugget in nuggets:
        if nugget.lower() in passage:
            labels.append("support")
        elif _long_words(nugget) & _long_words(passage):
            labels.append("partial_support")
        else:
            labels.append("not_support")
    return json.dumps(labels)


def _support_code(sentence: str, passage: str) -> str:
    if sentence.lower() in passage.lower():
        return "FS"
    return "PS" if _long_words(sentence) & _long_words(passage) else "NS"


def _support(user: str) -> str:
    return _support_code(_line_after(user, "Sentence: "), _line_after(user, "Passage: "))


def _support_thakur(user: str) -> str:
    code = _support_code(_line_after(user, "Statement: "), _line_after(user, "Citation: "))
    return {"FS": "Full Support", "PS": "Partial Support", "NS": "No Support"}[code]


def _grade(query: str, passage: str) -> int:
    return min(3, len(_long_words(query) & _long_words(passage)))


def _umbrela(user: str) -> str:
    return str(_grade(_line_after(user, "Search Query: "), _line_after(user, "Passage: ")))


def _umbrela_published(user: str) -> str:
    return f"##final score: {_grade(_line_after(user, 'Query: '), _line_after(user, 'Passage: '))}"


def _yes_no(user: str) -> str:
    """A yes/no judge: yes when the answer shares a word of four letters or more with the question."""
    return "yes" if _long_words(_line_after(user, "Question: ")) & _long_words(_line_after(user, "Answer: ")) else "no"


SECTION = re.compile(r"^\[\[ ## (\w+) ## \]\]\n(.*?)(?=^\[\[ ## |^Respond with|\Z)", re.MULTILINE | re.DOTALL)


def _sections(user: str) -> dict[str, str]:
    return {name: text.strip() for name, text in SECTION.findall(user)}


def _dspy_answer(reasoning: str, **fields: str) -> str:
    parts = [f"[[ ## reasoning ## ]]\n{reasoning}"] + [f"[[ ## {name} ## ]]\n{value}" for name, value in fields.items()]
    return "\n\n".join(parts + ["[[ ## completed ## ]]"])


def _preference(user: str, *, must_decide: bool) -> str:
    fields = _sections(user)
    asked = _long_words(fields.get("query_title", "") + " " + fields.get("query_problem", ""))
    first, second = (len(asked & _long_words(fields.get(f"passage_{n}", ""))) for n in (1, 2))
    better = "1" if first > second else "2" if second > first else ("1" if must_decide else "0")
    reasoning = f"Passage 1 shares {first} of the request's words, passage 2 {second}."
    return _dspy_answer(reasoning, better_passage=better, confidence="0.8")


def _preference_ties(user: str) -> str:
    return _preference(user, must_decide=False)


def _preference_must_decide(user: str) -> str:
    return _preference(user, must_decide=True)


SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
NO_ANSWER = "NO ANSWER"


def _crucible_extract(user: str) -> str:
    fields = _sections(user)
    asked = _long_words(fields.get("nugget_text", ""))
    found = [s for s in SENTENCE_END.split(fields.get("source_document", "")) if asked & _long_words(s)]
    extracted, condensed = (" ".join(found), found[0]) if found else (NO_ANSWER, NO_ANSWER)
    return f"[[ ## extracted_text ## ]]\n{extracted}\n\n[[ ## condensed_sentence ## ]]\n{condensed}\n\n[[ ## completed ## ]]"


def _crucible_probability(user: str, extracted: str) -> float:
    asked = _long_words(_sections(user).get("nugget_text", ""))
    return (len(asked & _long_words(extracted)) + 1) / (len(asked) + 2)


EXTRACTED = re.compile(r"\[\[ ## extracted_text ## \]\]\n(.*?)(?=\n\n\[\[ ## |\Z)", re.DOTALL)


def token_logprobs(messages: list[dict], text: str) -> list[dict]:
    """The answer's tokens (whitespace kept with the word after it) and their log-probabilities."""
    import math

    user = next((m["content"] for m in messages if m["role"] == "user"), "")
    system = messages[0]["content"] if messages and messages[0]["role"] == "system" else ""
    span, logprob = (0, 0), 0.0
    found = EXTRACTED.search(text)
    if _rule_for(system, user) is _crucible_extract and found is not None:
        span, logprob = found.span(1), math.log(_crucible_probability(user, found.group(1)))
    tokens, start = [], 0
    for token in re.findall(r"\s*\S+|\s+", text):
        inside = start < span[1] and start + len(token) > span[0] and token.strip()
        tokens.append({"token": token, "logprob": logprob if inside else 0.0, "bytes": None, "top_logprobs": []})
        start += len(token)
    return tokens


def _flip_preference(answer: str) -> str:
    swap = {"1": "2", "2": "1"}
    return re.sub(r"(\[\[ ## better_passage ## \]\]\n)([12])", lambda m: m.group(1) + swap[m.group(2)], answer)


def _contrastive_questions(user: str) -> str:
    """PrefNugget's extraction: for each sentence of the winner that the loser does not contain, the question
    "<its first 5 words>?", leaving out those already given; all of them (the job keeps the first 2)."""
    fields = _sections(user)
    given = set(json.loads(fields.get("given_exam_questions") or "[]"))
    loser = fields.get("loser_passage", "")
    questions: list[str] = []
    for sentence in SENTENCE_END.split(fields.get("winner_passage", "")):
        question = f"{first_words(sentence, 5)}?"
        if sentence.strip() and sentence.strip() not in loser and question not in given and question not in questions:
            questions.append(question)
    reasoning = f"The winner says {len(questions)} things the loser does not."
    return _dspy_answer(reasoning, differentiating_questions=json.dumps(questions), confidence="0.7")


def _query_only_questions(user: str) -> str:
    """The query-only bank: "What about <word>?" for each distinct word of 4+ letters of the title, in order."""
    words: list[str] = []
    for word in WORD.findall(_sections(user).get("query_title", "")):
        if len(word) >= 4 and word.lower() not in words:
            words.append(word.lower())
    questions = [f"What about {word}?" for word in words]
    return _dspy_answer("The title's words.", questions=json.dumps(questions), confidence="0.9")


def _bank_questions(user: str) -> str:
    """PrefNugget's two bank prompts end their objective alike: told apart by their input fields."""
    return _contrastive_questions(user) if "[[ ## winner_passage ## ]]" in user else _query_only_questions(user)


def _grade_question(user: str) -> str:
    """PrefNugget's grading: the question's words of four letters or more found in the passage, at most 5."""
    fields = _sections(user)
    shared = len(_long_words(fields.get("question", "")) & _long_words(fields.get("passage", "")))
    return _dspy_answer(
        f"The passage has {shared} of the question's words.", grade=str(min(5, shared)), confidence="0.9"
    )


def _flip_question_grade(answer: str) -> str:
    return re.sub(r"(\[\[ ## grade ## \]\]\n)([0-5])", lambda m: m.group(1) + str(5 - int(m.group(2))), answer)


def _argue_support(user: str) -> str:
    """ARGUE-style citation support: yes when the sentence is in the document (case-insensitive)."""
    fields = _sections(user)
    yes = fields.get("sentence", "").lower() in fields.get("document", "").lower()
    return _dspy_answer("The document was read for the sentence.", supports="yes" if yes else "no")


def _argue_answer(user: str) -> str:
    """ARGUE-style answer agreement: yes when the gold answer is in the sentence (case-insensitive)."""
    fields = _sections(user)
    yes = fields.get("gold_answer", "").lower() in fields.get("sentence", "").lower()
    return _dspy_answer("The sentence was read for the gold answer.", agrees="yes" if yes else "no")


def _flip_yes_no_section(answer: str) -> str:
    swap = {"yes": "no", "no": "yes"}
    return re.sub(r"(## \]\]\n)(yes|no)\b", lambda m: m.group(1) + swap[m.group(2)], answer)


RULES: dict[str, Callable[[str], str]] = {
    "You are NuggetizeLLM": _nuggetize,
    "You are NuggetizeScoreLLM": _importance,
    "You are NuggetizeAssignerLLM": _assign,
    "You are SupportJudgeLLM": _support,
    "You are RelevanceJudgeLLM": _umbrela,
    "You are YesNoJudgeLLM": _yes_no,
    "You are ArgueCitationJudge": _argue_support,
    "You are ArgueAnswerJudge": _argue_answer,
}
# The published prompts with no system message, known by how the user message starts.
USER_RULES: dict[str, Callable[[str], str]] = {
    "Given a query and a passage, you must provide a score": _umbrela_published,
    "In this task, you will evaluate whether each statement": _support_thakur,
}
# DSPy's layout starts every system message alike ("Your input fields are:"): known by its objective.
OBJECTIVE_RULES: dict[str, Callable[[str], str]] = {
    "If both passages are similar, answer with 0.": _preference_ties,
    "If both passages are similar, select the simplest and clearest.": _preference_must_decide,
    'Make questions self-contained (e.g., "Capital of France?" not "The capital?").': _bank_questions,
    "how the question is answered, without referring to the source document.": _crucible_extract,
    "- 0: The answer is not relevant or complete at all.": _grade_question,
}

LABEL_FLIPS = {"support": "not_support", "not_support": "support", "vital": "okay", "okay": "vital"}
SUPPORT_FLIPS = {"FS": "NS", "NS": "FS", "Full Support": "No Support", "No Support": "Full Support"}


def _flip_list(answer: str) -> str:
    return json.dumps([LABEL_FLIPS.get(label, label) for label in json.loads(answer)])


def _flip_grade(answer: str) -> str:
    return re.sub(r"\d", lambda digit: str(3 - int(digit.group())), answer)


# How the flipped "model" turns each rule's answer round (nuggetization is left as it is).
FLIPS: dict[Callable[[str], str], Callable[[str], str]] = {
    _importance: _flip_list,
    _assign: _flip_list,
    _support: lambda answer: SUPPORT_FLIPS.get(answer, answer),
    _support_thakur: lambda answer: SUPPORT_FLIPS.get(answer, answer),
    _umbrela: _flip_grade,
    _umbrela_published: _flip_grade,
    _yes_no: lambda answer: {"yes": "no", "no": "yes"}[answer],
    _preference_ties: _flip_preference,
    _preference_must_decide: _flip_preference,
    _grade_question: _flip_question_grade,
    _argue_support: _flip_yes_no_section,
    _argue_answer: _flip_yes_no_section,
}


def _rule_for(system: str, user: str) -> Callable[[str], str] | None:
    for start, rule in RULES.items():
        if system.startswith(start):
            return rule
    for objective, rule in OBJECTIVE_RULES.items():
        if system.endswith(objective):
            return rule
    if not system:
        for start, rule in USER_RULES.items():
            if user.startswith(start):
                return rule
    return None


def model_answer(messages: list[dict], *, flip: bool = False) -> str:
    system = messages[0]["content"] if messages and messages[0]["role"] == "system" else ""
    # The first user message holds the prompt; re-asks come after it.
    user = next((m["content"] for m in messages if m["role"] == "user"), "")
    rule = _rule_for(system, user)
    if rule is None:
        return "I am a test server."
    answer = rule(user)
    if flip and rule in FLIPS:
        return FLIPS[rule](answer)
    return answer


@dataclass
class Reply:
    """A scripted reply: a status, a delay, and the text (or a change of the model's text)."""

    status: int = 200
    text: str | None = None
    transform: Callable[[str], str] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0

    @classmethod
    def literal(cls, text: str) -> "Reply":
        return cls(text=text)

    @classmethod
    def fenced(cls) -> "Reply":
        return cls(transform=lambda answer: f"```python\n{answer}\n```")

    @classmethod
    def prose(cls) -> "Reply":
        return cls(transform=lambda answer: f"Sure! Here is the list you asked for:\n{answer}\nI hope this helps.")

    @classmethod
    def short(cls) -> "Reply":
        return cls(transform=lambda answer: json.dumps(json.loads(answer)[:-1]))

    @classmethod
    def long(cls) -> "Reply":
        return cls(transform=lambda answer: json.dumps(json.loads(answer) + json.loads(answer)[-1:]))

    @classmethod
    def unknown_label(cls, label: str = "maybe") -> "Reply":
        return cls(transform=lambda answer: json.dumps([label] + json.loads(answer)[1:]))

    @classmethod
    def slow(cls, seconds: float) -> "Reply":
        return cls(delay=seconds)

    @classmethod
    def error(cls, status: int, *, retry_after: str | None = None, retry_after_ms: str | None = None) -> "Reply":
        headers = {}
        if retry_after is not None:
            headers["Retry-After"] = retry_after
        if retry_after_ms is not None:
            headers["retry-after-ms"] = retry_after_ms
        return cls(status=status, headers=headers)


class FakeLLMServer:
    def __init__(self, *, latency: float = 0.0, flip: bool = False, logprobs: bool = True):
        self.latency = latency
        self.flip = flip
        self.logprobs = logprobs  # False: an endpoint that never returns log-probabilities
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self.requests: list[dict] = []
        # The key each request came with (its Authorization: Bearer ...), in order.
        self.api_keys: list[str] = []
        self.request_times: list[float] = []
        self.in_flight = 0
        self.max_in_flight = 0
        # Per model named in the requests, so that two clients sharing the server (a benchmark's app and its
        # reference) are counted apart: requests received, and the most in flight at once.
        self.requests_by_model: Counter[str] = Counter()
        self.in_flight_by_model: Counter[str] = Counter()
        self.max_in_flight_by_model: Counter[str] = Counter()
        self._server: ThreadingHTTPServer | None = None

    # --- control -----------------------------------------------------------
    def start(self, port: int = 0) -> "FakeLLMServer":
        server = ThreadingHTTPServer(("127.0.0.1", port), _handler_for(self))
        server.daemon_threads = True
        server.request_queue_size = 256
        self._server = server
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def url(self) -> str:
        assert self._server is not None, "start() the server first"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    @property
    def count(self) -> int:
        return len(self.requests)

    def reset(self) -> None:
        with self._lock:
            self._script.clear()
            self.requests.clear()
            self.api_keys.clear()
            self.request_times.clear()
            self.max_in_flight = 0
            self.requests_by_model.clear()
            self.max_in_flight_by_model.clear()

    # --- serving -------------------------------------------------------------
    def _next_reply(self, body: dict, api_key: str) -> Reply:
        model = str(body.get("model", ""))
        with self._lock:
            self.requests.append(body)
            self.api_keys.append(api_key)
            self.request_times.append(time.monotonic())
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.requests_by_model[model] += 1
            self.in_flight_by_model[model] += 1
            self.max_in_flight_by_model[model] = max(self.max_in_flight_by_model[model], self.in_flight_by_model[model])
            return self._script.popleft() if self._script else Reply()

    def _done(self, body: dict) -> None:
        with self._lock:
            self.in_flight -= 1
            self.in_flight_by_model[str(body.get("model", ""))] -= 1

    def stats(self) -> dict:
        """What `GET /stats` answers: the requests received and the most in flight, in all and per model."""
        with self._lock:
            return {
                "requests": len(self.requests),
                "max_in_flight": self.max_in_flight,
                "requests_by_model": dict(self.requests_by_model),
                "max_in_flight_by_model": dict(self.max_in_flight_by_model),
            }


def _handler_for(fake: FakeLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # One write per response, sent at once: small split writes meet delayed ACKs (40 ms each).
        wbufsize = 1 << 16
        disable_nagle_algorithm = True

        def log_message(self, *args) -> None:  # keep test output clean
            pass

        def _send(self, status: int, payload: dict, headers: dict[str, str]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.split("?", 1)[0].rstrip("/").endswith("/stats"):
                self._send(200, fake.stats(), {})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}}, {})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if not self.path.split("?", 1)[0].endswith("/chat/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}"}}, {})
                return
            api_key = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            reply = fake._next_reply(body, api_key)
            try:
                time.sleep(fake.latency + reply.delay)
                if reply.status != 200:
                    error = {"error": {"message": f"scripted status {reply.status}", "type": "test", "code": None}}
                    self._send(reply.status, error, reply.headers)
                    return
                messages = body.get("messages", [])
                try:
                    text = reply.text if reply.text is not None else model_answer(messages, flip=fake.flip)
                except (ValueError, SyntaxError, IndexError, KeyError) as exc:  # a prompt its rules cannot read
                    error = {"error": {"message": f"unreadable prompt: {exc}", "type": "invalid_request_error"}}
                    self._send(400, error, reply.headers)
                    return
                if reply.transform is not None:
                    text = reply.transform(text)
                prompt_words = sum(len(str(m.get("content", "")).split()) for m in messages)
                scored = (
                    {"logprobs": {"content": token_logprobs(messages, text)}}
                    if body.get("logprobs") and fake.logprobs
                    else {}
                )
                payload = {
                    "id": f"chatcmpl-{fake.count}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body.get("model", "fake"),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": text},
                            "finish_reason": "stop",
                            **scored,
                        }
                    ],
                    "usage": {
                        "prompt_tokens": prompt_words,
                        "completion_tokens": len(text.split()),
                        "total_tokens": prompt_words + len(text.split()),
                    },
                }
                self._send(200, payload, reply.headers)
            finally:
                fake._done(body)

    return Handler


def main() -> None:
    """Serve until killed, printing the base URL first (for benchmarks in another process)."""
    import argparse
    import signal
    import sys

    parser = argparse.ArgumentParser(description="A local OpenAI-compatible test server.")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each answer")
    parser.add_argument("--port", type=int, default=0, help="the port to listen on (default: any free one)")
    parser.add_argument("--flip", action="store_true", help="turn every label round: a second model that disagrees")
    args = parser.parse_args()
    server = FakeLLMServer(latency=args.latency, flip=args.flip).start(port=args.port)
    print(server.url, flush=True)

    def stop(*_args) -> None:
        # The caller reads this to check the concurrency limit held.
        print(f"requests {server.count} max_in_flight {server.max_in_flight}", flush=True)
        server.stop()
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        stop()


if __name__ == "__main__":
    main()
