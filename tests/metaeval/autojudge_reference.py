"""autojudge-evaluate 1.1.0's meta-evaluate and autojudge-base 1.0.0's leaderboard files, loaded by path.

requirements-reference.txt installs both packages without their dependencies, and their package imports
reach for what is absent (tira, requests, pandas). So the packages are stood in by bare module objects
whose search path is the installed one: `autojudge_evaluate.evaluation` and its siblings, and
`autojudge_base.leaderboard`, run from the installed files as they are, and neither package's __init__
runs. Two names the reference imports are stood in too:

- `pandas`: evaluation.py builds a two-column frame and asks `DataFrame.corr(method)` for
  Kendall, Pearson or Spearman. pandas computes Kendall with `scipy.stats.kendalltau` and Pearson
  and Spearman with its own loops, equal to scipy's `pearsonr` and `spearmanr` (a constant column is
  NaN in both); the stand-in asks scipy.
- `autojudge_base.LeaderboardFormat`, a type alias evaluation.py imports from the package root.

The stand-ins stay in sys.modules while a test uses the reference (evaluation.py imports pyircore
and tau_gap when a figure is asked for) and are taken out afterwards.
"""

import importlib
import importlib.util
import sys
import types
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

STOOD_IN = ("pandas", "autojudge_base", "autojudge_evaluate")


def _location(package: str) -> str:
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.submodule_search_locations, "bin/venv-ready installs autojudge-evaluate/-base"
    return str(next(iter(spec.submodule_search_locations)))


class _Correlation:
    def __init__(self, value: float):
        self.iloc = [{"b": value}]


class _Frame:
    """The two-column frame of evaluation.correlation, with pandas' methods of correlation."""

    def __init__(self, rows: list[dict]):
        self.a = [row["a"] for row in rows]
        self.b = [row["b"] for row in rows]

    def corr(self, method: str) -> _Correlation:
        from scipy import stats  # type: ignore[import-untyped]

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # constant input: NaN, as pandas gives it
            function = {"kendall": stats.kendalltau, "pearson": stats.pearsonr, "spearman": stats.spearmanr}[method]
            return _Correlation(float(function(self.a, self.b)[0]))


def _package(name: str, location: str) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__path__ = [location]
    return module


@contextmanager
def reference_modules() -> Iterator[types.SimpleNamespace]:
    """evaluation (LeaderboardEvaluator), eval_results (its load/write) and autojudge_base's leaderboard."""
    saved = {name: module for name, module in sys.modules.items() if name.split(".")[0] in STOOD_IN}
    for name in saved:
        del sys.modules[name]
    pandas = types.ModuleType("pandas")
    pandas.DataFrame = _Frame  # type: ignore[attr-defined]
    sys.modules["pandas"] = pandas
    sys.modules["autojudge_base"] = base = _package("autojudge_base", _location("autojudge_base"))
    sys.modules["autojudge_evaluate"] = _package("autojudge_evaluate", _location("autojudge_evaluate"))
    try:
        leaderboard = importlib.import_module("autojudge_base.leaderboard")
        base.LeaderboardFormat = leaderboard.LeaderboardFormat  # type: ignore[attr-defined]
        evaluation = importlib.import_module("autojudge_evaluate.evaluation")
        importlib.import_module("autojudge_evaluate.pyircore")
        importlib.import_module("autojudge_evaluate.tau_gap")
        eval_results = importlib.import_module("autojudge_evaluate.eval_results")
        yield types.SimpleNamespace(evaluation=evaluation, eval_results=eval_results, leaderboard=leaderboard)
    finally:
        for name in [name for name in sys.modules if name.split(".")[0] in STOOD_IN]:
            del sys.modules[name]
        sys.modules.update(saved)


def write_ir_measures(path: Path, rows: list[tuple[str, str, str, float]]) -> Path:
    """(run, topic, measure, value) rows as autojudge-evaluate's ir_measures layout."""
    path.write_text("".join(f"{run}\t{topic}\t{measure}\t{value!r}\n" for run, topic, measure, value in rows))
    return path
