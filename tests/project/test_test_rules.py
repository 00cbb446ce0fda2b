"""Tests that can fail: no test asserts only inside a loop that might not run.

A test whose every assertion sits in a `for` or `while` body, or in `assert all(...)` (or `assert not
any(...)`) over a generator, passes when the collection it walks is empty: it then checks nothing. Such a
test must also assert that the loop ran (`assert rows`, or the count worked out by hand) outside it. A loop
over a literal that is not empty (`for kind in ("a", "b")`, `range(3)`, or a module's name bound to such a
literal, or a call of a module's function that only returns such a literal) always runs and needs nothing more. `pytest.raises` and `pytest.fail` count as assertions.
"""

import ast
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LOOPS = (ast.For, ast.AsyncFor, ast.While)
# A call through these keeps an iterable's emptiness: `enumerate(rows)` is empty when `rows` is.
PASS_THROUGH = {"enumerate", "zip", "sorted", "reversed", "list", "tuple", "set", "dict", "iter"}


def _non_empty_literal(node: ast.AST, constants: dict[str, ast.AST]) -> bool:
    """Whether `node` is an iterable that cannot be empty, as written: the loop over it always runs."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return bool(node.elts)
    if isinstance(node, ast.Dict):
        return bool(node.keys)
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (str, bytes)) and bool(node.value)
    if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
        return all(not g.ifs and _non_empty_literal(g.iter, constants) for g in node.generators)
    if isinstance(node, ast.Name) and node.id in constants:
        return _non_empty_literal(constants[node.id], {})
    if isinstance(node, ast.Attribute) and node.attr in ("items", "keys", "values"):
        return False  # a mapping's view: the mapping is not seen here
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if f"{node.func.id}()" in constants and not node.args:
            return _non_empty_literal(constants[f"{node.func.id}()"], {})
        if node.func.id == "range":
            bounds = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, int)]
            return len(bounds) == len(node.args) and len(range(*bounds)) > 0
        if node.func.id in PASS_THROUGH and node.args:
            return all(_non_empty_literal(argument, constants) for argument in node.args)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("items", "values"):
        return _non_empty_literal(node.func.value, constants)
    return False


def _constants(body: list[ast.stmt]) -> dict[str, ast.AST]:
    """The names bound once in these statements, at their top level, to a value (`KINDS = ("a", "b")`)."""
    bound: dict[str, list[ast.AST]] = {}
    for statement in body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            if isinstance(target, ast.Name):
                bound.setdefault(target.id, []).append(statement.value)
        elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.value:
            bound.setdefault(statement.target.id, []).append(statement.value)
        elif isinstance(statement, ast.FunctionDef) and not statement.args.args:
            # A function that only returns a value (`def organizer_urls(): return [...]`): its call is that value.
            returned = [
                s for s in statement.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
            ]
            if len(returned) == 1 and isinstance(returned[0], ast.Return) and returned[0].value is not None:
                bound.setdefault(f"{statement.name}()", []).append(returned[0].value)
    return {name: values[0] for name, values in bound.items() if len(values) == 1}


def _is_raises(node: ast.AST) -> bool:
    """`pytest.raises(...)` / `pytest.fail(...)`: an assertion that is not an `assert` statement."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("raises", "fail")
        and getattr(node.func.value, "id", "") == "pytest"
    )


def _vacuous_on_empty(test: ast.expr, constants: dict[str, ast.AST]) -> bool:
    """`all(... for x in xs)` or `not any(... for x in xs)`: true when `xs` is empty."""
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    call = test.operand if negated else test  # type: ignore[attr-defined]
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and len(call.args) == 1):
        return False
    if call.func.id != ("any" if negated else "all"):
        return False
    walked = call.args[0]
    if not isinstance(walked, (ast.GeneratorExp, ast.ListComp, ast.SetComp)):
        return False
    return not all(_non_empty_literal(generator.iter, constants) for generator in walked.generators)


def _assertions(
    node: ast.AST, constants: dict[str, ast.AST], *, in_loop: bool = False
) -> Iterator[tuple[ast.AST, bool]]:
    """Each assertion in `node`'s body and whether only a loop that might not run reaches it."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue  # a helper defined inside the test runs only when called
        if isinstance(child, ast.Assert):
            yield child, in_loop or _vacuous_on_empty(child.test, constants)
            continue
        if _is_raises(child):
            yield child, in_loop
        if isinstance(child, (ast.For, ast.AsyncFor)):
            yield from _assertions(child.iter, constants, in_loop=in_loop)
            body_in_loop = in_loop or not _non_empty_literal(child.iter, constants)
            for statement in child.body:
                yield from _assertions_of_statement(statement, constants, in_loop=body_in_loop)
            for statement in child.orelse:
                yield from _assertions_of_statement(statement, constants, in_loop=in_loop)
        elif isinstance(child, ast.While):
            for statement in child.body:
                yield from _assertions_of_statement(statement, constants, in_loop=True)
            for statement in child.orelse:
                yield from _assertions_of_statement(statement, constants, in_loop=in_loop)
        else:
            yield from _assertions(child, constants, in_loop=in_loop)


def _assertions_of_statement(
    statement: ast.stmt, constants: dict[str, ast.AST], *, in_loop: bool
) -> Iterator[tuple[ast.AST, bool]]:
    wrapper = ast.Module(body=[statement], type_ignores=[])
    yield from _assertions(wrapper, constants, in_loop=in_loop)


def _test_functions(tree: ast.Module) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            yield node
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            for member in node.body:
                if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)) and member.name.startswith("test"):
                    yield member


def loop_only_tests(path: Path) -> list[str]:
    """The tests of a module whose every assertion only a loop that might not run reaches."""
    tree = ast.parse(path.read_text(), filename=str(path))
    module_constants = _constants(tree.body)
    found = []
    for function in _test_functions(tree):
        constants = {**module_constants, **_constants(function.body)}
        reached = [only_in_loop for _node, only_in_loop in _assertions(function, constants)]
        if reached and all(reached):
            found.append(function.name)
    return found


def test_every_test_that_asserts_in_a_loop_also_asserts_the_loop_ran():
    modules = sorted((REPO / "tests").rglob("test_*.py"))
    assert len(modules) > 100  # the scan reads the suite, not an empty folder
    offenders = [f"{path.relative_to(REPO)}::{name}" for path in modules for name in loop_only_tests(path)]
    assert offenders == []


def test_the_scan_sees_a_test_that_asserts_only_in_a_loop(tmp_path):
    module = tmp_path / "test_synthetic.py"
    module.write_text(
        "KINDS = ('a', 'b')\n"
        "def test_loop_only(rows):\n    for row in rows:\n        assert row.ok\n"
        "def test_while_only(queue):\n    while queue:\n        assert queue.pop()\n"
        "def test_all_only(rows):\n    assert all(row.ok for row in rows)\n"
        "def test_not_any_only(rows):\n    assert not any(row.bad for row in rows)\n"
        "class TestRows:\n    def test_in_a_class(self, rows):\n        for row in rows:\n            assert row\n"
        "def test_raises_only_in_a_loop(rows):\n    for row in rows:\n        with pytest.raises(ValueError):\n"
        "            row.check()\n"
        # These check something whatever the rows are.
        "def test_counted(rows):\n    assert len(rows) == 2\n    for row in rows:\n        assert row.ok\n"
        "def test_literal():\n    for kind in ('a', 'b'):\n        assert kind\n"
        "def test_constant():\n    for kind in KINDS:\n        assert kind\n"
        "def test_range():\n    for n in range(3):\n        assert n >= 0\n"
        "def test_any(rows):\n    assert any(row.ok for row in rows)\n"
        "def urls():\n    return ['/a/', '/b/']\n"
        "def test_function_of_a_literal(client):\n    for url in urls():\n        assert client.get(url)\n"
        "def test_local_literal(client):\n    pages = ['/a/']\n    for url in pages:\n        assert client.get(url)\n"
        "def test_no_assert(rows):\n    rows.check()\n"
        "def test_helper_does_not_count(rows):\n    def check(row):\n        assert row\n    assert rows\n"
    )
    assert loop_only_tests(module) == [
        "test_loop_only",
        "test_while_only",
        "test_all_only",
        "test_not_any_only",
        "test_in_a_class",
        "test_raises_only_in_a_loop",
    ]
