"""``cartfuse/_native.pyi`` against the native module it describes, without a type checker:
every public function, class, method and property of the module is in the stub and the
other way round, with the same kinds (property, static method, method), bases and
parameters (names, kinds and defaults, from the ``__text_signature__`` PyO3 writes). Where
mypy is installed, ``mypy.stubtest`` checks the stub too, and ``mypy --strict`` the package
against it."""

from __future__ import annotations

import ast
import builtins
import importlib.util
import inspect
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import cartfuse
from cartfuse import _native

# The stub beside the module imported (the one the wheel ships), else the source tree's.
_BESIDE = Path(_native.__file__ or "").with_name("_native.pyi")
STUB = (
    _BESIDE
    if _BESIDE.is_file()
    else Path(__file__).resolve().parents[1] / "cartfuse" / "_native.pyi"
)
#: Dunder methods a class may define that a stub must then declare.
DECLARED_DUNDERS = {
    "__repr__",
    "__str__",
    "__len__",
    "__iter__",
    "__getitem__",
    "__contains__",
    "__enter__",
    "__exit__",
    "__call__",
}
EMPTY = inspect.Parameter.empty


def stub_tree() -> ast.Module:
    return ast.parse(STUB.read_text(), filename=str(STUB))


def top_level(tree: ast.Module) -> dict[str, ast.stmt]:
    names: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
    return names


def decorators(node: ast.FunctionDef) -> set[str]:
    return {d.id for d in node.decorator_list if isinstance(d, ast.Name)}


def stub_members(node: ast.ClassDef) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in node.body if isinstance(n, ast.FunctionDef)}


def runtime_public(namespace: dict[str, Any]) -> set[str]:
    return {name for name in namespace if not name.startswith("_")}


def stub_parameters(node: ast.FunctionDef, bound: bool) -> list[tuple[str, str, object]]:
    """``(name, kind, default)`` of a stub function; ``bound`` drops ``self``/``cls``."""
    args = node.args
    positional = [(a, "positional-only") for a in args.posonlyargs] + [
        (a, "positional-or-keyword") for a in args.args
    ]
    defaults: list[object] = [EMPTY] * (len(positional) - len(args.defaults)) + [
        ast.literal_eval(d) for d in args.defaults
    ]
    out = [(a.arg, kind, d) for (a, kind), d in zip(positional, defaults, strict=True)]
    if bound:
        out = out[1:]
    if args.vararg is not None:
        out.append((args.vararg.arg, "var-positional", EMPTY))
    for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        out.append((a.arg, "keyword-only", EMPTY if d is None else ast.literal_eval(d)))
    if args.kwarg is not None:
        out.append((args.kwarg.arg, "var-keyword", EMPTY))
    return out


KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: "positional-only",
    inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional-or-keyword",
    inspect.Parameter.VAR_POSITIONAL: "var-positional",
    inspect.Parameter.KEYWORD_ONLY: "keyword-only",
    inspect.Parameter.VAR_KEYWORD: "var-keyword",
}


def runtime_parameters(obj: object, bound: bool) -> list[tuple[str, str, object]] | None:
    """``(name, kind, default)`` of a runtime callable from its text signature (``None``
    where it has none); ``bound`` drops ``self``."""
    try:
        signature = inspect.signature(obj)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    params = list(signature.parameters.values())
    if bound and params and params[0].name in ("self", "$self"):
        params = params[1:]
    return [(p.name, KINDS[p.kind], p.default) for p in params]


def assert_same_parameters(
    what: str,
    stub: list[tuple[str, str, object]],
    runtime: list[tuple[str, str, object]] | None,
) -> None:
    if runtime is None:  # no text signature: nothing to compare
        return
    assert [p[0] for p in stub] == [p[0] for p in runtime], what
    for (name, stub_kind, stub_default), (_, kind, default) in zip(stub, runtime, strict=True):
        # The stub writes `self` positional-only parameters as positional-or-keyword.
        if kind != "positional-only":
            assert stub_kind == kind, f"{what}: {name} is {kind} at run time"
        assert (stub_default is EMPTY) == (default is EMPTY), f"{what}: default of {name}"
        # PyO3 writes defaults it cannot spell (an expression) as `...`.
        if default is not EMPTY and default is not Ellipsis:
            assert stub_default == default, f"{what}: default of {name}"


def test_the_stub_and_the_module_name_the_same_things() -> None:
    stub = top_level(stub_tree())
    module = runtime_public(vars(_native)) | {"__version__"}
    stub_public = {n for n in stub if not n.startswith("_")} | {"__version__"}
    assert stub_public == module
    assert isinstance(_native.__version__, str)
    for name, node in stub.items():
        runtime = getattr(_native, name)
        if isinstance(node, ast.FunctionDef):
            assert callable(runtime) and not isinstance(runtime, type), name
            assert_same_parameters(
                name, stub_parameters(node, bound=False), runtime_parameters(runtime, False)
            )
        elif isinstance(node, ast.ClassDef):
            assert isinstance(runtime, type), name


@pytest.mark.parametrize(
    "name", sorted(n for n, v in vars(_native).items() if isinstance(v, type) and n[0] != "_")
)
def test_each_class_matches_its_stub(name: str) -> None:
    node = top_level(stub_tree())[name]
    assert isinstance(node, ast.ClassDef)
    cls = getattr(_native, name)
    # Bases: builtins by name (the exceptions' RuntimeError), object where none is written.
    bases = tuple(getattr(builtins, b.id) for b in node.bases if isinstance(b, ast.Name))
    assert cls.__bases__ == (bases or (object,)), name
    # PyO3 classes cannot be subclassed: the stub says @final (exceptions can).
    subclassable = bool(cls.__flags__ & (1 << 10))  # Py_TPFLAGS_BASETYPE
    assert ("final" in {d.id for d in node.decorator_list if isinstance(d, ast.Name)}) == (
        not subclassable
    ), name

    members = stub_members(node)
    runtime = vars(cls)
    assert {m for m in members if not m.startswith("_")} == runtime_public(runtime), name
    for dunder in DECLARED_DUNDERS & set(runtime):
        assert dunder in members, f"{name}.{dunder} is defined at run time"
    for member, fn in members.items():
        if member in ("__new__", "__init__"):
            continue
        attribute = runtime[member]
        where = f"{name}.{member}"
        if "property" in decorators(fn):
            assert inspect.isdatadescriptor(attribute), f"{where} is not a property at run time"
            continue
        assert not inspect.isdatadescriptor(attribute), f"{where} is a property at run time"
        static = "staticmethod" in decorators(fn)
        assert isinstance(attribute, staticmethod) == static, f"{where}: static method?"
        assert_same_parameters(
            where,
            stub_parameters(fn, bound=not static),
            runtime_parameters(getattr(cls, member), bound=not static),
        )

    constructors = [members[m] for m in ("__new__", "__init__") if m in members]
    assert len(constructors) <= 1, f"{name}: __new__ or __init__, not both"
    if issubclass(cls, BaseException):
        return
    signature = getattr(cls, "__text_signature__", None)
    if not constructors:
        # No constructor at run time either (an EnvInfo comes from env_info()).
        assert signature is None, f"{name} has a constructor {signature}"
        with pytest.raises(TypeError):
            cls()
        return
    assert signature is not None, f"{name}: PyO3 wrote no text signature"
    assert_same_parameters(
        f"{name}({signature})",
        stub_parameters(constructors[0], bound=True),
        runtime_parameters(cls, bound=False),
    )


def test_env_info_has_every_field_the_stub_declares() -> None:
    info = _native.env_info(_native.env_ids()[0])
    node = top_level(stub_tree())["EnvInfo"]
    assert isinstance(node, ast.ClassDef)
    for member, fn in stub_members(node).items():
        if "property" in decorators(fn):
            getattr(info, member)
    assert repr(info).startswith("EnvInfo(")
    assert issubclass(_native.PendingStepError, RuntimeError)
    assert issubclass(_native.NoPendingStepError, RuntimeError)


NO_MYPY = pytest.mark.skipif(
    importlib.util.find_spec("mypy") is None, reason="mypy is not installed"
)
#: render.py's window imports pygame: without it a type check of the package, or of code
#: that imports it from a source tree, finds no such module.
NO_PYGAME = pytest.mark.skipif(
    importlib.util.find_spec("pygame") is None, reason="pygame is not installed"
)


#: The flags of every type check here (one set, so that the runs share mypy's cache).
STRICT = ["--strict", "--warn-unreachable"]


@pytest.fixture(scope="module")
def mypy_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where this module's mypy runs run: they share the cache mypy writes there."""
    return tmp_path_factory.mktemp("mypy")


def run_mypy(module: str, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m <module> <args>`` in ``cwd`` (mypy's cache lands there) with the
    directory of the ``cartfuse`` this test imported first on the path, so that mypy checks
    that package."""
    package_root = str(Path(cartfuse.__file__ or "").resolve().parents[1])
    path = os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH")) if p)
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": path},
    )


@NO_MYPY
def test_mypy_stubtest_passes(mypy_dir: Path) -> None:
    result = run_mypy("mypy.stubtest", ["cartfuse._native"], mypy_dir)
    assert result.returncode == 0, result.stdout + result.stderr


@NO_MYPY
@NO_PYGAME
def test_the_package_type_checks_under_mypy_strict(mypy_dir: Path) -> None:
    # The package as installed, against the stub it ships: no error, no ignore left unused.
    result = run_mypy("mypy", [*STRICT, "-p", "cartfuse"], mypy_dir)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("Success: no issues found"), result.stdout


@NO_MYPY
@NO_PYGAME
def test_a_users_script_naming_every_class_type_checks_under_mypy_strict(
    tmp_path: Path, mypy_dir: Path
) -> None:
    # Every named class at the package's top level, as a user's code names it.
    lines = ["import cartfuse", ""]
    for env_id in cartfuse.ENV_IDS:
        vector, single = cartfuse.vector_env_class(env_id), cartfuse.env_class(env_id)
        lines += [
            f"{vector.__name__.lower()}: cartfuse.CartfuseVectorEnv = "
            f'cartfuse.{vector.__name__}(2, device="cpu")',
            f"{single.__name__.lower()}: cartfuse.CartfuseEnv = "
            f'cartfuse.{single.__name__}(device="cpu")',
        ]
    script = tmp_path / "users_script.py"
    script.write_text("\n".join(lines) + "\n")
    result = run_mypy("mypy", [*STRICT, str(script)], mypy_dir)
    assert result.returncode == 0, result.stdout + result.stderr
